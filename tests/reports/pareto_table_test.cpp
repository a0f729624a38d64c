// The `pareto` table on a hand-built store: quality means over samples, TTFT FLOPs and their
// ratio to the baseline, and front membership worked by hand for both directions of a metric; the
// agreement reference's value by definition; refusal without the metric; the SVG plot file.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <tuple>

#include "reports/tables.h"
#include "tests/results/store_fixtures.h"
#include "tests/support/test_support.h"

namespace accel::reports {
namespace {

// Two samples per configuration; quality per sample, TTFT and FLOPs per trial.
void add(results::ResultStore& s, const std::string& run, const std::string& method,
         const nlohmann::json& params, const std::string& metric, double q0, double q1, double ttft,
         double flops) {
  int idx = 0;
  for (const auto& [sample, q] : {std::pair{"s0", q0}, std::pair{"s1", q1}}) {
    auto t = test::simple_trial(run, method, params, 4096, sample, idx++, ttft);
    t.workload = "ruler";
    if (!metric.empty()) t.scores = {{metric, q}};
    t.stats = {{"ttft_flops", flops}};
    s.record_case({t});
  }
}

const Cell& cell(const Table& t, size_t row, const std::string& key) {
  for (size_t i = 0; i < t.columns.size(); ++i)
    if (t.columns[i].key == key) return t.rows[row][i];
  throw std::logic_error("no column " + key);
}

TEST(ParetoTable, QualityFlopsRatioAndFrontsAreTheHandWorkedFigures) {
  test::TempDir dir;
  auto s = results::ResultStore::open(dir.file("r.sqlite"));
  const std::string run = s.begin_run(test::full_run());
  // baseline 90 at 10 GFLOPs; keep 0.5: 80 at 6; keep 0.2: 50 at 3; critiprefill 70 at 8
  // (dominated by keep 0.5: better and cheaper); kvpred 95 at 12 (best, dearest: on the front).
  add(s, run, "baseline", nlohmann::json::object(), "ruler.score", 100, 80, 1.0, 10e9);
  add(s, run, "specprefill", {{"keep", 0.5}}, "ruler.score", 80, 80, 0.6, 6e9);
  add(s, run, "specprefill", {{"keep", 0.2}}, "ruler.score", 40, 60, 0.3, 3e9);
  add(s, run, "critiprefill", nlohmann::json::object(), "ruler.score", 70, 70, 0.5, 8e9);
  add(s, run, "kvpred", nlohmann::json::object(), "ruler.score", 90, 100, 1.2, 12e9);
  const Table t = pareto_table(s, ReportOptions{});  // default metric: the "<suite>.score"
  ASSERT_EQ(t.rows.size(), 5u);
  std::map<std::string, size_t> row;
  for (size_t i = 0; i < t.rows.size(); ++i)
    row[cell(t, i, "method").text + cell(t, i, "params").text] = i;
  const size_t base = row.at("baseline"), k5 = row.at("specprefillkeep=0.5"),
               k2 = row.at("specprefillkeep=0.2"), crit = row.at("critiprefill"),
               kvp = row.at("kvpred");
  EXPECT_DOUBLE_EQ(cell(t, base, "quality").data.get<double>(), 90.0);
  EXPECT_DOUBLE_EQ(cell(t, k2, "quality").data.get<double>(), 50.0);
  EXPECT_DOUBLE_EQ(cell(t, k5, "flops_ratio").data.get<double>(), 0.6);
  EXPECT_DOUBLE_EQ(cell(t, kvp, "ttft_gflops").data.get<double>(), 12.0);
  EXPECT_EQ(cell(t, crit, "front_flops").data, false);
  EXPECT_EQ(cell(t, base, "front_flops").data, true);  // 90 at 10: kvpred is better but dearer
  EXPECT_EQ(cell(t, k5, "front_flops").data, true);
  EXPECT_EQ(cell(t, k2, "front_flops").data, true);
  EXPECT_EQ(cell(t, kvp, "front_flops").data, true);
  // By measured time critiprefill (70 in 0.5 s) is faster than keep 0.5 (0.6 s): on that front.
  EXPECT_EQ(cell(t, crit, "front_ttft").data, true);
}

// KV Prediction's configurations differ only in their input files (aux, predictor), not in
// params: the tables keep them apart and label them by file, instead of pooling their trials.
TEST(ParetoTable, ConfigurationsWithDifferentInputFilesAreSeparateRowsLabelledByFile) {
  test::TempDir dir;
  auto s = results::ResultStore::open(dir.file("r.sqlite"));
  const std::string run = s.begin_run(test::full_run());
  add(s, run, "baseline", nlohmann::json::object(), "niah.score", 100, 100, 1.0, 10e9);
  int idx = 10;
  for (const auto& [aux, q, flops] :
       {std::tuple{"m/kvp/aux-0.50l.gguf", 40.0, 6e9}, std::tuple{"m/fam/draft.gguf", 20.0, 2e9}}) {
    for (const char* sample : {"s0", "s1"}) {
      auto t =
          test::simple_trial(run, "kvpred", nlohmann::json::object(), 4096, sample, idx++, 0.5);
      t.workload = "ruler";
      t.scores = {{"niah.score", q}};
      t.stats = {{"ttft_flops", flops}};
      t.inputs = {{"aux", {{"path", aux}, {"sha256", std::string(64, 'a')}}},
                  {"predictor", {{"path", "m/kvp/pred.gguf"}, {"sha256", std::string(64, 'b')}}},
                  {"target", {{"path", "m/fam/target.gguf"}, {"sha256", std::string(64, 'c')}}}};
      s.record_case({t});
    }
  }
  const Table t = pareto_table(s, ReportOptions{});
  std::map<std::string, size_t> row;
  for (size_t i = 0; i < t.rows.size(); ++i)
    row[cell(t, i, "method").text + " " + cell(t, i, "params").text] = i;
  ASSERT_EQ(t.rows.size(), 3u);
  const size_t lp = row.at("kvpred aux=kvp/aux-0.50l"), c = row.at("kvpred aux=fam/draft");
  EXPECT_DOUBLE_EQ(cell(t, lp, "quality").data.get<double>(), 40.0);
  EXPECT_DOUBLE_EQ(cell(t, c, "quality").data.get<double>(), 20.0);
  EXPECT_DOUBLE_EQ(cell(t, c, "ttft_gflops").data.get<double>(), 2.0);
}

TEST(ParetoTable, LowerIsBetterMetricsFlipTheFrontAndTheReferenceScoresByDefinition) {
  test::TempDir dir;
  auto s = results::ResultStore::open(dir.file("r.sqlite"));
  auto info = test::full_run();
  info.suite = {{"name", "agreement"},
                {"metrics", {{{"name", "agreement.kl_mean"}, {"higher_is_better", false}}}}};
  const std::string run = s.begin_run(info);
  add(s, run, "baseline", nlohmann::json::object(), "", 0, 0, 1.0, 10e9);  // the reference
  add(s, run, "specprefill", {{"keep", 0.5}}, "agreement.kl_mean", 0.1, 0.1, 0.6, 6e9);
  add(s, run, "specprefill", {{"keep", 0.2}}, "agreement.kl_mean", 0.4, 0.4, 0.65, 7e9);
  ReportOptions opt;
  opt.metric = "agreement.kl_mean";
  const Table t = pareto_table(s, opt);
  ASSERT_EQ(t.rows.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    const std::string m = cell(t, i, "method").text + cell(t, i, "params").text;
    if (m == "baseline") {
      EXPECT_DOUBLE_EQ(cell(t, i, "quality").data.get<double>(), 0.0);
    }
    // keep 0.2 has more KL at more FLOPs than keep 0.5: dominated; the others are not.
    EXPECT_EQ(cell(t, i, "front_flops").data, m != "specprefillkeep=0.2") << m;
  }
  EXPECT_NE(t.title.find("↓"), std::string::npos);
}

TEST(ParetoTable, RefusesASelectionWithoutTheMetricNamingIt) {
  test::TempDir dir;
  auto s = results::ResultStore::open(dir.file("r.sqlite"));
  const std::string run = s.begin_run(test::full_run());
  add(s, run, "baseline", nlohmann::json::object(), "ruler.score", 1, 1, 1.0, 1e9);
  ReportOptions opt;
  opt.metric = "niah.score";
  try {
    pareto_table(s, opt);
    FAIL() << "no throw";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("'niah.score'"), std::string::npos) << e.what();
  }
}

TEST(ParetoTable, SvgPlotIsWrittenPerGroupAndIsByteIdenticalOnRegeneration) {
  test::TempDir dir;
  auto s = results::ResultStore::open(dir.file("r.sqlite"));
  const std::string run = s.begin_run(test::full_run());
  add(s, run, "baseline", nlohmann::json::object(), "ruler.score", 90, 90, 1.0, 10e9);
  add(s, run, "specprefill", {{"keep", 0.2}}, "ruler.score", 50, 50, 0.3, 3e9);
  const auto a = write_pareto_plots(s, ReportOptions{}, dir.file("a"));
  const auto b = write_pareto_plots(s, ReportOptions{}, dir.file("b"));
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(std::filesystem::path(a[0]).filename(), "pareto-target-ruler-4096.svg");
  const auto read = [](const std::string& p) {
    std::ifstream in(p);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  EXPECT_EQ(read(a[0]), read(b[0]));
  EXPECT_NE(read(a[0]).find("TTFT (GFLOPs, analytic)"), std::string::npos);
}

}  // namespace
}  // namespace accel::reports
