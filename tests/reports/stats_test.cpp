// stats.h against hand-worked values, and the bootstrap interval's behaviour on known ratios.
#include "reports/stats.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

namespace accel::reports {
namespace {

TEST(Stats, HandWorkedSummaries) {
  const std::vector<double> x = {1, 2, 3, 4};
  EXPECT_DOUBLE_EQ(mean(x), 2.5);
  EXPECT_NEAR(sample_std(x), 1.2909944487358056, 1e-15);  // sqrt(5/3)
  EXPECT_DOUBLE_EQ(median(x), 2.5);
  EXPECT_DOUBLE_EQ(median(std::vector<double>{3, 1, 2}), 2);
  EXPECT_DOUBLE_EQ(percentile(x, 0.25), 1.75);  // position 0.75 between 1 and 2
  EXPECT_DOUBLE_EQ(percentile(x, 0.0), 1);
  EXPECT_DOUBLE_EQ(percentile(x, 1.0), 4);
  EXPECT_TRUE(std::isnan(mean(std::vector<double>{})));
  EXPECT_TRUE(std::isnan(sample_std(std::vector<double>{5})));
}

TEST(Stats, MannWhitneyHandWorked) {
  // No ties: every a below every b -> U_a = 0, z = -4.5 / sqrt(5.25).
  const auto r = mann_whitney(std::vector<double>{1, 2, 3}, std::vector<double>{4, 5, 6});
  EXPECT_DOUBLE_EQ(r.u_a, 0);
  EXPECT_DOUBLE_EQ(r.u_b, 9);
  EXPECT_NEAR(r.z, -1.9639610121239315, 1e-12);
  EXPECT_NEAR(r.p, 0.04953461343562674, 1e-12);
  // Ties: a = {1,2,2}, b = {2,3}; mid-rank 3 for the three 2s -> R_a = 7, U_a = 1; tie term
  // 3^3-3 = 24 -> var = 6/12 * (6 - 24/20) = 2.4, z = -2 / sqrt(2.4).
  const auto t = mann_whitney(std::vector<double>{1, 2, 2}, std::vector<double>{2, 3});
  EXPECT_DOUBLE_EQ(t.u_a, 1);
  EXPECT_NEAR(t.z, -1.2909944487358056, 1e-12);
  EXPECT_NEAR(t.p, 0.19670560245894692, 1e-12);
  const auto same = mann_whitney(std::vector<double>{1, 1}, std::vector<double>{1, 1});
  EXPECT_DOUBLE_EQ(same.p, 1);
}

TEST(Stats, BootstrapOfConstantsIsExact) {
  const auto ci =
      bootstrap_ratio(std::vector<double>{2, 2, 2}, std::vector<double>{1, 1}, Center::Mean);
  EXPECT_DOUBLE_EQ(ci.estimate, 2);
  EXPECT_DOUBLE_EQ(ci.lo, 2);
  EXPECT_DOUBLE_EQ(ci.hi, 2);
}

TEST(Stats, BootstrapHandCase) {
  // num = {1, 3}, den = {1}: resampled means of num are 1, 2, 2, 3 with probabilities 1/4, 1/2,
  // 1/4, so the 2.5th and 97.5th percentiles of the ratio are 1 and 3 and the estimate is 2.
  const auto ci =
      bootstrap_ratio(std::vector<double>{1, 3}, std::vector<double>{1}, Center::Mean, 4000, 7);
  EXPECT_DOUBLE_EQ(ci.estimate, 2);
  EXPECT_DOUBLE_EQ(ci.lo, 1);
  EXPECT_DOUBLE_EQ(ci.hi, 3);
  // Same seed, same interval; the median variant on the same data.
  const auto again =
      bootstrap_ratio(std::vector<double>{1, 3}, std::vector<double>{1}, Center::Mean, 4000, 7);
  EXPECT_EQ(ci.lo, again.lo);
  const auto med =
      bootstrap_ratio(std::vector<double>{1, 3, 5}, std::vector<double>{2}, Center::Median);
  EXPECT_DOUBLE_EQ(med.estimate, 1.5);
  EXPECT_DOUBLE_EQ(med.lo, 0.5);
  EXPECT_DOUBLE_EQ(med.hi, 2.5);
}

TEST(Stats, BootstrapCoversTheTrueRatio) {
  // True ratio of means 3 / 2 = 1.5. Over many seeded data sets the 95% interval should contain it
  // close to 95% of the time (percentile intervals run slightly narrow at n = 30).
  int covered = 0;
  constexpr int kSets = 200;
  for (int s = 0; s < kSets; ++s) {
    std::mt19937_64 rng(1000 + s);
    std::normal_distribution<double> a(3.0, 0.3), b(2.0, 0.2);
    std::vector<double> x(30), y(30);
    for (auto& v : x) v = a(rng);
    for (auto& v : y) v = b(rng);
    const auto ci = bootstrap_ratio(x, y, Center::Mean, 1000, uint64_t(s));
    EXPECT_LT(ci.lo, ci.estimate);
    EXPECT_GT(ci.hi, ci.estimate);
    EXPECT_LT(ci.hi - ci.lo, 0.25);
    covered += ci.lo <= 1.5 && 1.5 <= ci.hi;
  }
  EXPECT_GE(covered, int(0.88 * kSets));
  EXPECT_LE(covered, int(0.99 * kSets));
}

}  // namespace
}  // namespace accel::reports
