// The `drift` table on a hand-built store: per-layer medians and the means over trials worked by
// hand, the kept fraction and KL columns, fallback trials counted but not averaged, the state_drift
// switch kept out of the row label, and the empty-selection footnote.
#include <gtest/gtest.h>

#include "reports/tables.h"
#include "tests/results/store_fixtures.h"
#include "tests/support/test_support.h"

namespace accel::reports {
namespace {

void add(results::ResultStore& s, const std::string& run, double keep, const std::string& sample,
         int idx, std::vector<double> scan, double kl, bool fallback = false) {
  auto t = test::simple_trial(run, "specprefill", {{"keep", keep}, {"state_drift", true}}, 2048,
                              sample, idx, 0.5);
  t.prompt_tokens = 2000;
  t.kept_tokens = int64_t(keep * 2000);
  t.scores = {{"agreement.kl_mean", kl}};
  double sum = 0, max = 0;
  for (double x : scan) sum += x, max = std::max(max, x);
  t.stats = {{"state_drift",
              {{"layers", {0, 2, 5}},
               {"scan", scan},
               {"conv", {0.0, 0.0, 0.0}},
               {"scan_mean", sum / 3},
               {"scan_max", max}}}};
  if (fallback) t.stats["fallback"] = "below_threshold";
  s.record_case({t});
}

const Cell& cell(const Table& t, size_t row, const std::string& key) {
  for (size_t i = 0; i < t.columns.size(); ++i)
    if (t.columns[i].key == key) return t.rows[row][i];
  throw std::logic_error("no column " + key);
}

TEST(DriftTable, LayerMediansMeansAndFallbacksAreTheHandWorkedFigures) {
  test::TempDir dir;
  auto s = results::ResultStore::open(dir.file("r.sqlite"));
  const std::string run = s.begin_run(test::full_run());
  // keep 0.2: three trials; layer 5's values 0.9, 0.1, 0.5 have median 0.5.
  add(s, run, 0.2, "s0", 0, {0.3, 0.6, 0.9}, 0.01);
  add(s, run, 0.2, "s1", 1, {0.3, 0.6, 0.1}, 0.03);
  add(s, run, 0.2, "s2", 2, {0.6, 0.3, 0.5}, 0.02);
  add(s, run, 0.2, "s3", 3, {0.0, 0.0, 0.0}, 0.0, /*fallback=*/true);
  add(s, run, 1.0, "s0", 4, {0.0, 0.0, 0.0}, 0.0);
  const Table t = drift_table(s, ReportOptions{});
  ASSERT_EQ(t.rows.size(), 2u);
  const size_t r = cell(t, 0, "params").text == "keep=0.2" ? 0 : 1;
  EXPECT_EQ(cell(t, r, "params").text, "keep=0.2") << "state_drift is not part of the label";
  EXPECT_DOUBLE_EQ(cell(t, r, "layer_0").data.get<double>(), 0.3);
  EXPECT_DOUBLE_EQ(cell(t, r, "layer_2").data.get<double>(), 0.6);
  EXPECT_DOUBLE_EQ(cell(t, r, "layer_5").data.get<double>(), 0.5);
  // Means over the three non-fallback trials: scan_mean 0.6, 1/3, 14/30; scan_max 0.9, 0.6, 0.6.
  EXPECT_NEAR(cell(t, r, "drift_mean").data.get<double>(), (0.6 + 1.0 / 3 + 14.0 / 30) / 3, 1e-12);
  EXPECT_NEAR(cell(t, r, "drift_max").data.get<double>(), 0.7, 1e-12);
  EXPECT_NEAR(cell(t, r, "kl_mean").data.get<double>(), 0.02, 1e-12);
  EXPECT_NEAR(cell(t, r, "kept").data.get<double>(), 0.2, 1e-12);
  EXPECT_EQ(cell(t, r, "trials").data.get<int64_t>(), 3);
  EXPECT_EQ(cell(t, r, "fallback").text, "1/4");
  EXPECT_DOUBLE_EQ(cell(t, 1 - r, "drift_max").data.get<double>(), 0.0);
}

TEST(DriftTable, EmptySelectionSaysHowToRecordDrift) {
  test::TempDir dir;
  auto s = results::ResultStore::open(dir.file("r.sqlite"));
  const std::string run = s.begin_run(test::full_run());
  s.record_case(
      {test::simple_trial(run, "baseline", nlohmann::json::object(), 2048, "s0", 0, 1.0)});
  const Table t = drift_table(s, ReportOptions{});
  EXPECT_TRUE(t.rows.empty());
  ASSERT_FALSE(t.footnotes.empty());
  EXPECT_NE(t.footnotes.back().find("state_drift=true"), std::string::npos);
}

}  // namespace
}  // namespace accel::reports
