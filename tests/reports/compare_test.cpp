// compare_stores on synthetic stores: a case that is really 30% slower (with noise) is flagged;
// stores drawn from one distribution are not, over many seeds; direction of decode_tok_s.
#include "reports/compare.h"

#include <gtest/gtest.h>

#include <random>

#include "tests/results/store_fixtures.h"
#include "tests/support/test_support.h"

namespace accel::reports {
namespace {

constexpr int kCases = 20, kTrials = 5;
constexpr double kNoise = 0.05;  // lognormal sigma: ~5 % run-to-run noise

// A store of kCases cases with base times 0.1..2 s; case `slow_case` is multiplied by `slow`.
void make_store(const std::string& path, uint64_t seed, int slow_case = -1, double slow = 1.0) {
  auto s = results::ResultStore::open(path);
  s.db().exec("PRAGMA synchronous = OFF");  // throwaway stores: skip the fsync per case
  const std::string run = s.begin_run(test::full_run());
  std::mt19937_64 rng(seed);
  std::lognormal_distribution<double> noise(0.0, kNoise);
  for (int c = 0; c < kCases; ++c) {
    const double base = 0.1 + 0.1 * c;
    std::vector<double> v;
    for (int t = 0; t < kTrials; ++t)
      v.push_back(base * (c == slow_case ? slow : 1.0) * noise(rng));
    test::add_case(s, run, c % 2 ? "specprefill" : "baseline", {{"case", c}}, 1024, "s", v);
  }
}

TEST(Compare, FlagsARealSlowdown) {
  test::TempDir dir;
  for (uint64_t seed = 0; seed < 5; ++seed) {
    const std::string b = dir.file("b" + std::to_string(seed)),
                      c = dir.file("c" + std::to_string(seed));
    make_store(b, 100 + seed);
    make_store(c, 200 + seed, /*slow_case=*/7, 1.30);
    const auto r = compare_stores(results::ResultStore::open_readonly(b),
                                  results::ResultStore::open_readonly(c), {});
    ASSERT_EQ(r.cases.size(), size_t(kCases));
    EXPECT_EQ(r.regressed(), 1u) << "seed " << seed;
    for (const auto& cc : r.cases) {
      const bool slow = cc.params == "case=7";
      EXPECT_EQ(cc.verdict == Verdict::Regressed, slow) << cc.params << " seed " << seed;
      if (slow) {
        EXPECT_NEAR(cc.slowdown.estimate, 1.3, 0.1);
        EXPECT_GT(cc.slowdown.lo, 1.05);
        EXPECT_LT(cc.mann_whitney_p, 0.05);
      }
    }
  }
}

TEST(Compare, SameDistributionIsNeverFlagged) {
  test::TempDir dir;
  size_t flagged = 0, compared = 0;
  for (uint64_t seed = 0; seed < 10; ++seed) {
    const std::string b = dir.file("b" + std::to_string(seed)),
                      c = dir.file("c" + std::to_string(seed));
    make_store(b, 300 + seed);
    make_store(c, 400 + seed);
    const auto r = compare_stores(results::ResultStore::open_readonly(b),
                                  results::ResultStore::open_readonly(c), {});
    flagged += r.regressed();
    compared += r.cases.size();
  }
  EXPECT_EQ(compared, size_t(10 * kCases));
  EXPECT_EQ(flagged, 0u);
}

TEST(Compare, HigherIsBetterMetricsAndTooFewTrials) {
  test::TempDir dir;
  const std::string b = dir.file("b"), c = dir.file("c");
  make_store(b, 1);
  make_store(c, 2, 3, 1.5);  // 50 % slower TTFT -> decode_tok_s = 10 / ttft is 1/1.5 as fast
  CompareOptions opt;
  opt.metrics = {"decode_tok_s"};
  auto r = compare_stores(results::ResultStore::open_readonly(b),
                          results::ResultStore::open_readonly(c), opt);
  EXPECT_EQ(r.regressed(), 1u);
  for (const auto& cc : r.cases)
    if (cc.verdict == Verdict::Regressed) {
      EXPECT_NEAR(cc.slowdown.estimate, 1.5, 0.15);
    }
  opt.min_trials = 6;
  r = compare_stores(results::ResultStore::open_readonly(b), results::ResultStore::open_readonly(c),
                     opt);
  EXPECT_EQ(r.regressed(), 0u);
  EXPECT_EQ(r.cases[0].verdict, Verdict::TooFewTrials);
  opt.metrics = {"nonsense"};
  EXPECT_THROW(compare_stores(results::ResultStore::open_readonly(b),
                              results::ResultStore::open_readonly(c), opt),
               std::invalid_argument);
}

TEST(Compare, UnmatchedCasesAreCountedAndImprovementsNoted) {
  test::TempDir dir;
  const std::string b = dir.file("b"), c = dir.file("c");
  make_store(b, 1);
  {
    auto s = results::ResultStore::open(c);
    const std::string run = s.begin_run(test::full_run());
    test::add_case(s, run, "baseline", {{"case", 0}}, 1024, "s", {0.05, 0.05, 0.05, 0.05, 0.05});
    test::add_case(s, run, "new", {{"x", 1}}, 1024, "s", {1, 1, 1});
  }
  const auto r = compare_stores(results::ResultStore::open_readonly(b),
                                results::ResultStore::open_readonly(c), {});
  ASSERT_EQ(r.cases.size(), 1u);
  EXPECT_EQ(r.cases[0].verdict, Verdict::Improved);
  EXPECT_EQ(r.only_baseline, size_t(kCases - 1));
  EXPECT_EQ(r.only_candidate, 1u);
  const auto t = compare_table(r, {});
  EXPECT_EQ(t.rows.size(), 1u);
  EXPECT_EQ(t.footnotes.size(), 2u);
}

}  // namespace
}  // namespace accel::reports
