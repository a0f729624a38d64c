// Report tables built from a small store of known values, matched against the printed lines
// (placeholders for bootstrap bounds, whose exact values depend on resampling), including how
// trials that fell back are counted and kept out of timings, speedups and scores.
#include "reports/tables.h"

#include <gtest/gtest.h>

#include "tests/reports/line_match.h"
#include "tests/results/store_fixtures.h"
#include "tests/support/test_support.h"

namespace accel::reports {
namespace {

using test::add_case;
using test::lines_match;

// baseline 1024: {1.0, 1.1, 1.2} mean 1.10 std 0.10; 2048: {2.0, 2.2, 2.4} mean 2.20 std 0.20.
// specprefill keep 0.3: 1024 {0.5, 0.55, 0.6} -> 0.550 ± 0.050, speedup 2.00; 2048 {1.0, 1.1, 1.2}.
// specprefill keep 0.5: 1024 {0.7, 0.75, 0.8} -> 0.750 ± 0.050, speedup 1.10/0.75 = 1.47.
void fill(results::ResultStore& s, bool with_baseline = true) {
  const std::string run = s.begin_run(test::full_run());
  const nlohmann::json none = nlohmann::json::object();
  const nlohmann::json k3 = {{"keep", 0.3}, {"lookahead", 8}},
                       k5 = {{"keep", 0.5}, {"lookahead", 8}};
  const std::map<std::string, double> bp = {{"prefill", 1.0}, {"first_token", 0.1}};
  const std::map<std::string, double> sp = {{"score", 0.05},
                                            {"draft_prefill", 0.2},
                                            {"prefill", 0.3},
                                            {"first_token", 0.05},
                                            {"custom", 0.01}};
  if (with_baseline) {
    add_case(s, run, "baseline", none, 1024, "s0", {1.0, 1.1}, bp, {{"agree", 1.0}});
    add_case(s, run, "baseline", none, 1024, "s1", {1.2}, bp, {{"agree", 1.0}});
    add_case(s, run, "baseline", none, 2048, "s0", {2.0, 2.2, 2.4}, bp);
  }
  add_case(s, run, "specprefill", k3, 1024, "s0", {0.5, 0.55, 0.6}, sp, {{"agree", 0.5}});
  add_case(s, run, "specprefill", k3, 2048, "s0", {1.0, 1.1, 1.2}, sp, {{"agree", 0.25}});
  add_case(s, run, "specprefill", k5, 1024, "s0", {0.7, 0.75, 0.8}, sp, {{"agree", 1.0}});
}

struct Fixture : ::testing::Test {
  test::TempDir dir;
  std::string path = dir.file("r.sqlite");
  void SetUp() override {
    auto s = results::ResultStore::open(path);
    fill(s);
  }
  std::string print(const std::string& table, Format f, ReportOptions opt = {}) {
    auto s = results::ResultStore::open_readonly(path);
    return render(make_report(s, table, opt), f);
  }
};

TEST_F(Fixture, TtftMarkdown) {
  const std::string out = print("ttft", Format::Markdown);
  EXPECT_TRUE(lines_match(
      out,
      {"**TTFT by method and context length**",
       "| Method | Params | TTFT 1024 (s) | Speedup 1024 | TTFT 2048 (s) | Speedup 2048 |",
       "| :--- | :--- | ---: | ---: | ---: | ---: |",
       "| baseline |  | 1.10 ± 0.10 | 1.00× | 2.20 ± 0.20 | 1.00× |",
       "| specprefill | keep=0.3 | 0.550 ± 0.050 | 2.00× [%f, %f] | 1.10 ± 0.10 | 2.00× [%f, %f] |",
       "| specprefill | keep=0.5 | 0.750 ± 0.050 | 1.47× [%f, %f] | — | — |",
       "Note: Speedup: ratio of medians, baseline / method (TTFT at the same target model, "
       "context and workload); 95% percentile-bootstrap interval, 2000 resamples of each side's "
       "trials."}));
  EXPECT_EQ(out, print("ttft", Format::Markdown)) << "seeded: output must be reproducible";
}

TEST_F(Fixture, TtftIntervalsBracketTheEstimate) {
  auto s = results::ResultStore::open_readonly(path);
  const auto j = to_json(ttft_table(s, {}));
  const auto& cell = j["rows"][1]["speedup@1024"];
  EXPECT_NEAR(cell["ratio"].get<double>(), 2.0, 1e-12);
  EXPECT_LT(cell["lo"].get<double>(), 2.0);
  EXPECT_GT(cell["hi"].get<double>(), 2.0);
  EXPECT_GT(cell["lo"].get<double>(), 1.5);
  EXPECT_EQ(j["rows"][0]["ttft_s@1024"]["n"], 3);
}

TEST_F(Fixture, TtftCsvAndLatex) {
  EXPECT_TRUE(lines_match(
      print("ttft", Format::Csv),
      {"Method,Params,TTFT 1024 (s),Speedup 1024,TTFT 2048 (s),Speedup 2048",
       "baseline,,1.10 ± 0.10,1.00×,2.20 ± 0.20,1.00×",
       "specprefill,keep=0.3,0.550 ± 0.050,\"2.00× [%f, %f]\",1.10 ± 0.10,\"2.00× [%f, %f]\""}));
  EXPECT_TRUE(lines_match(
      print("ttft", Format::Latex),
      {"\\begin{tabular}{llrrrr}", "\\toprule",
       "Method & Params & TTFT 1024 (s) & Speedup 1024 & TTFT 2048 (s) & Speedup 2048 \\\\",
       "\\midrule",
       "baseline &  & 1.10 $\\pm$ 0.10 & 1.00$\\times$ & 2.20 $\\pm$ 0.20 & 1.00$\\times$ \\\\",
       "specprefill & keep=0.3 & 0.550 $\\pm$ 0.050 & 2.00$\\times$ [%f, %f] & 1.10 $\\pm$ 0.10 & "
       "2.00$\\times$ [%f, %f] \\\\",
       "\\bottomrule", "\\end{tabular}"}));
}

TEST_F(Fixture, WhereSelectsRows) {
  ReportOptions o;
  o.where = "context_len = 2048";
  EXPECT_TRUE(lines_match(print("ttft", Format::Markdown, o),
                          {"| Method | Params | TTFT 2048 (s) | Speedup 2048 |",
                           "| baseline |  | 2.20 ± 0.20 | 1.00× |",
                           "| specprefill |  | 1.10 ± 0.10 | 2.00× [%f, %f] |"}));
}

TEST(ReportTables, MissingBaselineIsAFootnote) {
  test::TempDir dir;
  auto s = results::ResultStore::open(dir.file("r.sqlite"));
  fill(s, false);
  const std::string out = render(ttft_table(s, {}), Format::Markdown);
  EXPECT_TRUE(lines_match(
      out, {"| specprefill | keep=0.3 | 0.550 ± 0.050 | — | 1.10 ± 0.10 | — |",
            "Note: No 'baseline' trials in this selection: speedups are not available."}));
}

TEST_F(Fixture, PhasesInProtocolOrder) {
  EXPECT_TRUE(lines_match(print("phases", Format::Markdown),
                          {"| Method | Params | Context | draft_prefill | score | prefill | "
                           "first_token | custom | TTFT | n |",
                           "| baseline |  | 1024 | — | — | 1.00 | 0.100 | — | 1.10 | 3 |",
                           "| baseline |  | 2048 | — | — | 1.00 | 0.100 | — | 2.20 | 3 |",
                           "| specprefill | keep=0.3 | 1024 | 0.200 | 0.0500 | 0.300 | 0.0500 | "
                           "0.0100 | 0.550 | 3 |"}));
}

TEST_F(Fixture, AblationOverKeep) {
  ReportOptions o;
  o.param = "keep";
  EXPECT_TRUE(
      lines_match(print("ablation", Format::Markdown, o),
                  {"**Ablation over keep**",
                   "| Method | Params | keep | Context | TTFT (s) | Speedup | agree | n |",
                   "| specprefill |  | 0.3 | 1024 | 0.550 ± 0.050 | 2.00× [%f, %f] | 0.500 | 3 |",
                   "| specprefill |  | 0.3 | 2048 | 1.10 ± 0.10 | 2.00× [%f, %f] | 0.250 | 3 |",
                   "| specprefill |  | 0.5 | 1024 | 0.750 ± 0.050 | 1.47× [%f, %f] | 1.00 | 3 |"}));
  o.param = "nope";
  auto s = results::ResultStore::open_readonly(path);
  try {
    ablation_table(s, o);
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("keep, lookahead"), std::string::npos) << e.what();
  }
  EXPECT_THROW(ablation_table(s, {}), std::invalid_argument);
}

TEST_F(Fixture, RunsAndTrials) {
  EXPECT_TRUE(
      lines_match(print("runs", Format::Markdown),
                  {"| Run | Started | Ended | Commit | Build | Compiler | CPU | Threads | Host | "
                   "Version | FMA peak (GFLOP/s) | Trials | Failed |",
                   "| %* | %* | — | 0123456789-dirty | Release | g++ 12.2 \\| -O3 -march=native | "
                   "Test CPU @ 3.0GHz | 8 | host-a | 0.1.0 | %f | 15 | 0 |"}));
  const std::string csv = print("trials", Format::Csv);
  EXPECT_EQ(test::split_lines(csv)[0], results::csv_header<results::TrialRecord>());
  EXPECT_EQ(test::split_lines(csv).size(), 16u);
  const auto j = nlohmann::json::parse(print("trials", Format::Json));
  EXPECT_EQ(j["rows"][0]["phases"]["prefill"], 1.0);
  EXPECT_EQ(j["rows"][0]["method"], "baseline");
}

// Records one case whose trials all carry `stats` (e.g. a fallback reason).
void add_case_with_stats(results::ResultStore& s, const std::string& run, const std::string& method,
                         const nlohmann::json& params, int64_t ctx, const std::string& sample,
                         const std::vector<double>& ttfts,
                         const std::map<std::string, double>& scores, const nlohmann::json& stats) {
  std::vector<results::TrialRecord> v;
  for (size_t i = 0; i < ttfts.size(); ++i) {
    auto t = test::simple_trial(run, method, params, ctx, sample, int64_t(i), ttfts[i]);
    t.scores = scores;
    t.stats = stats;
    v.push_back(t);
  }
  s.record_case(v);
}

// The fill() store plus fallback trials whose TTFTs are full-prefill sized, so that averaging them
// in would move every figure: keep 0.3 at 1024 gains a sample s1 of two fallback trials (1.1, 1.2;
// mixed in, the mean would be 0.79 and the speedup 1.39×), and keep 0.5 at 1024 is all fallbacks.
struct FallbackFixture : ::testing::Test {
  test::TempDir dir;
  std::string path = dir.file("r.sqlite");
  void SetUp() override {
    auto s = results::ResultStore::open(path);
    const std::string run = s.begin_run(test::full_run());
    const nlohmann::json none = nlohmann::json::object(), fb = {{"fallback", "below_threshold"}};
    const nlohmann::json k3 = {{"keep", 0.3}, {"lookahead", 8}},
                         k5 = {{"keep", 0.5}, {"lookahead", 8}};
    const std::map<std::string, double> ran = {{"agreement.first_token", 0.0},
                                               {"agreement.top1", 0.5},
                                               {"agreement.kl_mean", 0.2},
                                               {"agreement.kl_max", 0.4}};
    const std::map<std::string, double> same = {{"agreement.first_token", 1.0},
                                                {"agreement.top1", 1.0},
                                                {"agreement.kl_mean", 0.0},
                                                {"agreement.kl_max", 0.0}};
    test::add_case(s, run, "baseline", none, 1024, "s0", {1.0, 1.1});
    test::add_case(s, run, "baseline", none, 1024, "s1", {1.2});
    test::add_case(s, run, "baseline", none, 2048, "s0", {2.0, 2.2, 2.4});
    add_case_with_stats(s, run, "specprefill", k3, 1024, "s0", {0.5, 0.55, 0.6}, ran, {});
    add_case_with_stats(s, run, "specprefill", k3, 1024, "s1", {1.1, 1.2}, same, fb);
    add_case_with_stats(s, run, "specprefill", k3, 2048, "s0", {1.0, 1.1, 1.2}, ran, {});
    add_case_with_stats(s, run, "specprefill", k5, 1024, "s0", {1.15, 1.1, 1.05}, same, fb);
  }
  std::string print(const std::string& table, Format f, ReportOptions opt = {}) {
    auto s = results::ResultStore::open_readonly(path);
    return render(make_report(s, table, opt), f);
  }
};

TEST_F(FallbackFixture, TtftExcludesFallbackTrialsAndShowsFallbackCountPerCellMarkdown) {
  EXPECT_TRUE(lines_match(
      print("ttft", Format::Markdown),
      {"| Method | Params | TTFT 1024 (s) | Speedup 1024 | Fallback 1024 | TTFT 2048 (s) | "
       "Speedup 2048 | Fallback 2048 |",
       "| baseline |  | 1.10 ± 0.10 | 1.00× | 0/3 | 2.20 ± 0.20 | 1.00× | 0/3 |",
       "| specprefill | keep=0.3 | 0.550 ± 0.050 | 2.00× [%f, %f] | 2/5 | 1.10 ± 0.10 | "
       "2.00× [%f, %f] | 0/3 |",
       "| specprefill | keep=0.5 | — | — | 3/3 | — | — | — |",
       "Note: Fallback n/N: n of the cell's N trials ran the method's fallback path instead of the "
       "method (reasons: below_threshold 5); they are excluded from TTFT and speedup."}));
}

TEST_F(FallbackFixture, TtftFallbackCountsAppearInCsvLatexAndJson) {
  EXPECT_TRUE(lines_match(
      print("ttft", Format::Csv),
      {"Method,Params,TTFT 1024 (s),Speedup 1024,Fallback 1024,TTFT 2048 (s),Speedup 2048,"
       "Fallback 2048",
       "specprefill,keep=0.3,0.550 ± 0.050,\"2.00× [%f, %f]\",2/5,1.10 ± 0.10,\"2.00× [%f, %f]\","
       "0/3",
       "specprefill,keep=0.5,—,—,3/3,—,—,—"}));
  EXPECT_TRUE(lines_match(
      print("ttft", Format::Latex),
      {"specprefill & keep=0.3 & 0.550 $\\pm$ 0.050 & 2.00$\\times$ [%f, %f] & 2/5 & 1.10 $\\pm$ "
       "0.10 & 2.00$\\times$ [%f, %f] & 0/3 \\\\",
       "\\par{\\footnotesize Fallback n/N: %*below\\_threshold 5%*}"}));
  const auto j = nlohmann::json::parse(print("ttft", Format::Json));
  EXPECT_EQ(j["rows"][1]["fallback@1024"], (nlohmann::json{{"fallback", 2}, {"trials", 5}}));
  EXPECT_EQ(j["rows"][1]["ttft_s@1024"]["n"], 3) << "only the trials that ran the method";
  EXPECT_NEAR(j["rows"][1]["speedup@1024"]["ratio"].get<double>(), 2.0, 1e-12);
  EXPECT_EQ(j["rows"][2]["fallback@1024"], (nlohmann::json{{"fallback", 3}, {"trials", 3}}));
  EXPECT_TRUE(j["rows"][2]["speedup@1024"].is_null());
}

TEST_F(FallbackFixture, AblationExcludesFallbackTrialsFromTimingsSpeedupAndScores) {
  ReportOptions o;
  o.param = "keep";
  EXPECT_TRUE(lines_match(
      print("ablation", Format::Markdown, o),
      {"| Method | Params | keep | Context | TTFT (s) | Speedup | agreement.first_token | "
       "agreement.kl_max | agreement.kl_mean | agreement.top1 | Fallback | n |",
       "| specprefill |  | 0.3 | 1024 | 0.550 ± 0.050 | 2.00× [%f, %f] | 0.00 | 0.400 | 0.200 | "
       "0.500 | 2/5 | 5 |",
       "| specprefill |  | 0.3 | 2048 | 1.10 ± 0.10 | 2.00× [%f, %f] | 0.00 | 0.400 | 0.200 | "
       "0.500 | 0/3 | 3 |",
       "| specprefill |  | 0.5 | 1024 | — | — | — | — | — | — | 3/3 | 3 |",
       "Note: Fallback n/N: %*they are excluded from TTFT, speedup and scores."}));
  const auto csv = print("ablation", Format::Csv, o);
  EXPECT_TRUE(lines_match(csv, {"%*,Fallback,n", "specprefill,,0.5,1024,—,—,—,—,—,—,3/3,3"}));
}

TEST_F(FallbackFixture, AgreementExcludesFallbackTrialsThatAgreeByConstruction) {
  // Mixed in, s1's perfect agreement would lift keep 0.3 at 1024 to top-1 0.75 and KL 0.1.
  EXPECT_TRUE(lines_match(
      print("agreement", Format::Markdown),
      {"| Target | Method | Params | Context | First token | Top-1 | Mean KL | Max KL | Samples | "
       "Fallback |",
       "| target | specprefill | keep=0.3, lookahead=8 | 1024 | 0.00 | 0.500 | 0.200 | 0.400 | 1 "
       "| 2/5 |",
       "| target | specprefill | keep=0.5, lookahead=8 | 1024 | — | — | — | — | 0 | 3/3 |",
       "Note: Fallback n/N: %*excluded from the agreement figures."}));
}

TEST_F(Fixture, TablesWithoutFallbacksHaveNoFallbackColumnOrNote) {
  ReportOptions o;
  o.param = "keep";
  for (const auto& [table, opt] :
       std::vector<std::pair<std::string, ReportOptions>>{{"ttft", {}}, {"ablation", o}}) {
    const std::string out = print(table, Format::Markdown, opt);
    EXPECT_EQ(out.find("Fallback"), std::string::npos) << table << ":\n" << out;
  }
}

}  // namespace
}  // namespace accel::reports
