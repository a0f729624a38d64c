// Agreement metrics against hand-worked cases: KL of two-outcome distributions computed on paper,
// argmax ties, and the shape errors.
#include "suites/agreement.h"

#include <gtest/gtest.h>

#include <cmath>

namespace accel {
namespace {

TEST(Agreement, KlOfTwoOutcomesHandWorked) {
  // P = softmax(0, 0) = (1/2, 1/2); Q = softmax(log 3, 0) = (3/4, 1/4).
  // KL(P||Q) = 1/2 log(2/3) + 1/2 log(2) = 1/2 log(4/3).
  const std::vector<float> p = {0.f, 0.f}, q = {float(std::log(3.0)), 0.f};
  // Tolerance: q's logit is log 3 rounded to float (relative 3e-8), which moves KL by ~1e-8.
  EXPECT_NEAR(kl_divergence(p, q), 0.5 * std::log(4.0 / 3.0), 1e-7);
  EXPECT_EQ(kl_divergence(p, p), 0.0);
  // Shift invariance: adding a constant to every logit changes nothing.
  const std::vector<float> p_shift = {100.f, 100.f};
  EXPECT_NEAR(kl_divergence(p_shift, q), 0.5 * std::log(4.0 / 3.0), 1e-7);
  // A zero-probability outcome of P contributes nothing.
  const std::vector<float> one_hot = {0.f, -INFINITY};
  EXPECT_NEAR(kl_divergence(one_hot, p), std::log(2.0), 1e-12);
}

TEST(Agreement, CountsFirstTokenTop1AndMeanKl) {
  const std::vector<std::vector<float>> ref = {{1.f, 0.f}, {0.f, 1.f}, {0.f, 0.f}};
  // Row 0: argmax 1 vs 0 (disagree); row 1: agree; row 2: tie -> lower id 0 on both sides.
  const std::vector<std::vector<float>> mine = {{0.f, 1.f}, {0.f, 2.f}, {0.f, 0.f}};
  const Agreement a = agreement(ref, mine);
  EXPECT_EQ(a.steps, 3);
  EXPECT_EQ(a.first_token, 0.0);
  EXPECT_NEAR(a.top1, 2.0 / 3.0, 1e-15);
  const double kl0 = kl_divergence(ref[0], mine[0]), kl1 = kl_divergence(ref[1], mine[1]);
  EXPECT_NEAR(a.kl_mean, (kl0 + kl1 + 0.0) / 3, 1e-15);
  EXPECT_EQ(a.kl_max, std::max(kl0, kl1));
}

TEST(Agreement, ComparesTheCommonPrefixAndRejectsBadShapes) {
  const std::vector<std::vector<float>> two = {{1.f, 0.f}, {1.f, 0.f}}, one = {{1.f, 0.f}};
  EXPECT_EQ(agreement(two, one).steps, 1);
  EXPECT_EQ(agreement(two, one).top1, 1.0);
  EXPECT_THROW(agreement({}, one), std::invalid_argument);
  EXPECT_THROW(agreement(two, {{1.f, 0.f, 0.f}}), std::invalid_argument);
}

}  // namespace
}  // namespace accel
