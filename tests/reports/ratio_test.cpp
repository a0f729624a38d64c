// The one ratio of every table (ratio.h): ratio of medians in each direction, independence from the
// order values arrive in, the key naming the trials, the cell and the footnote's wording.
#include "reports/ratio.h"

#include <gtest/gtest.h>

#include <cmath>

namespace accel::reports {
namespace {

const RatioOptions kOpt{};

// Skewed samples where the ratio of means and the ratio of medians differ: base median 1.1 (mean
// 1.575), method median 0.5 (mean 0.5) -> 2.2 by medians, 3.15 by means.
const std::vector<double> kBase = {1.0, 1.1, 1.2, 3.0, 1.05};
const std::vector<double> kMine = {0.5, 0.45, 0.55, 0.5, 0.5};

TEST(Ratio, TimeIsBaselineOverMethodOfMedians) {
  const Ratio r = speedup_ratio(kBase, kMine, Direction::LowerIsBetter, "k", kOpt);
  EXPECT_DOUBLE_EQ(r.ratio, 1.1 / 0.5);  // exact: the medians are sample values
  EXPECT_LE(r.lo, r.ratio);
  EXPECT_GE(r.hi, r.ratio);
  EXPECT_EQ(r.baseline_n, 5u);
  EXPECT_EQ(r.candidate_n, 5u);
}

TEST(Ratio, ThroughputIsMethodOverBaseline) {
  const Ratio r = speedup_ratio(kMine, kBase, Direction::HigherIsBetter, "k", kOpt);
  EXPECT_DOUBLE_EQ(r.ratio, 1.1 / 0.5);
}

TEST(Ratio, OrderOfValuesDoesNotMatterOnlyTheKey) {
  std::vector<double> shuffled = {3.0, 1.05, 1.2, 1.0, 1.1};
  const Ratio a = speedup_ratio(kBase, kMine, Direction::LowerIsBetter, "k", kOpt);
  const Ratio b = speedup_ratio(shuffled, kMine, Direction::LowerIsBetter, "k", kOpt);
  EXPECT_EQ(a.lo, b.lo);
  EXPECT_EQ(a.hi, b.hi);
  // Twenty distinct values a side: the resampled medians take many values, so two seeds give
  // different percentiles.
  std::vector<double> b20, m20;
  for (int i = 0; i < 20; ++i) {
    b20.push_back(1.0 + 0.013 * i * i);
    m20.push_back(0.5 + 0.007 * i);
  }
  const Ratio c = speedup_ratio(b20, m20, Direction::LowerIsBetter, "k", kOpt);
  const Ratio d = speedup_ratio(b20, m20, Direction::LowerIsBetter, "another key", kOpt);
  EXPECT_TRUE(c.lo != d.lo || c.hi != d.hi) << "the key seeds the bootstrap";
}

TEST(Ratio, EmptySideGivesADash) {
  const Ratio r = speedup_ratio({}, kMine, Direction::LowerIsBetter, "k", kOpt);
  EXPECT_TRUE(r.empty());
  EXPECT_TRUE(std::isnan(r.ratio));
  const Cell c = ratio_cell(r);
  EXPECT_EQ(c.text, "—");
  EXPECT_TRUE(c.data.is_null());
}

TEST(Ratio, CellTextAndData) {
  const std::vector<double> b = {2.0, 2.0, 2.0}, m = {0.5, 0.5, 0.5};
  const Cell c = ratio_cell(speedup_ratio(b, m, Direction::LowerIsBetter, "k", kOpt));
  EXPECT_EQ(c.text, "4.00× [4.00, 4.00]");  // constant samples: a degenerate interval
  EXPECT_EQ(c.data["baseline_n"], 3);
  EXPECT_EQ(c.data["n"], 3);
  EXPECT_EQ(c.data["level"], 0.95);
  EXPECT_EQ(ratio_cell(speedup_ratio(b, m, Direction::LowerIsBetter, "k", kOpt), 3).text,
            "4.000× [4.000, 4.000]");
  EXPECT_EQ(self_ratio_cell(true).text, "1.00×");
  EXPECT_EQ(self_ratio_cell(false).text, "—");
}

TEST(Ratio, TrialsKeyIgnoresOrderButNotIdentity) {
  results::TrialRecord a, b, c;
  a.run_id = "r1";
  b.run_id = c.run_id = "r2";
  a.case_key = "x";
  b.case_key = "y";
  c.case_key = "z";
  EXPECT_EQ(trials_key("ttft_s", {&a, &b}, {&c}), trials_key("ttft_s", {&b, &a}, {&c}));
  EXPECT_NE(trials_key("ttft_s", {&a, &b}, {&c}), trials_key("ttft_s", {&a}, {&c}));
  EXPECT_NE(trials_key("ttft_s", {&a}, {&c}), trials_key("decode_tok_s", {&a}, {&c}));
  results::TrialRecord a_copy = a;
  a_copy.run_id = "another store's run";
  EXPECT_EQ(trials_key("ttft_s", {&a}, {&c}), trials_key("ttft_s", {&a_copy}, {&c}))
      << "a store holds one trial per (case key, trial index): the same data in another store "
         "prints the same intervals";
}

TEST(Ratio, SampleOfKeepsTrialsWithAValue) {
  results::TrialRecord a, b;
  a.ttft_s = 1.5;
  const TrialSample s = sample_of({&a, &b}, [](const results::TrialRecord& t) { return t.ttft_s; });
  ASSERT_EQ(s.trials.size(), 1u);
  EXPECT_EQ(s.trials[0], &a);
  EXPECT_EQ(s.values, std::vector<double>{1.5});
}

TEST(Ratio, FootnoteNamesStatisticOrderAndInterval) {
  EXPECT_EQ(ratio_footnote("Speedup", "TTFT", Direction::LowerIsBetter, kOpt),
            "Speedup: ratio of medians, baseline / method (TTFT); 95% percentile-bootstrap "
            "interval, 2000 resamples of each side's trials.");
  EXPECT_EQ(ratio_footnote("Speed", "tok/s", Direction::HigherIsBetter, {500, 1, 0.9}),
            "Speed: ratio of medians, method / baseline (tok/s); 90% percentile-bootstrap "
            "interval, 500 resamples of each side's trials.");
}

}  // namespace
}  // namespace accel::reports
