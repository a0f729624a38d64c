// The parity table on a store of known outputs: exact-parity shares and the earliest divergence
// from the parity.* scores, and the cross-diff matrix from the stored output tokens (matched by
// sample hash and context), with the diagonal showing a configuration that disagrees with itself.
#include <gtest/gtest.h>

#include "reports/tables.h"
#include "tests/reports/line_match.h"
#include "tests/results/store_fixtures.h"
#include "tests/support/test_support.h"

namespace accel::reports {
namespace {

using Tokens = std::vector<int32_t>;

std::map<std::string, double> parity_scores(bool exact, int div, int ref, int got) {
  return {{"parity.exact", exact ? 1.0 : 0.0},
          {"parity.first_divergence", div},
          {"parity.matching_prefix_frac", div / 3.0},
          {"parity.ref_token_at_divergence", exact ? -1 : ref},
          {"parity.method_token_at_divergence", exact ? -1 : got}};
}

// One case: a trial per entry of `outputs`, all with the same scores.
void add(results::ResultStore& s, const std::string& run, const std::string& method,
         const nlohmann::json& params, int64_t ctx, const std::string& sample,
         const std::vector<Tokens>& outputs, const std::map<std::string, double>& scores = {}) {
  std::vector<results::TrialRecord> v;
  for (size_t i = 0; i < outputs.size(); ++i) {
    auto t = test::simple_trial(run, method, params, ctx, sample, int64_t(i), 1.0);
    t.workload = "parity";
    t.sample_hash = "hash-" + sample;
    t.output_tokens = outputs[i];
    t.scores = scores;
    v.push_back(t);
  }
  s.record_case(v);
}

// Configurations, in table order: #1 baseline, #2 pld preset=atveit, #3 pld preset=hf.
//   s0: all three output {1,2,3}.
//   s1: baseline and hf {4,5,6}; atveit's first trial {4,9,6} (diverges at 1: 5 vs 9), and its
//       second trial {4,9,7} differs from its first.
//   hf also ran s0 at context 256, which nothing else ran: no pair compares it.
void fill(results::ResultStore& s) {
  const std::string run = s.begin_run(test::full_run());
  const nlohmann::json none = nlohmann::json::object(), hf = {{"preset", "hf"}, {"k", 0}},
                       atveit = {{"preset", "atveit"}, {"k", 0}};
  add(s, run, "baseline", none, 128, "s0", {{1, 2, 3}, {1, 2, 3}});
  add(s, run, "baseline", none, 128, "s1", {{4, 5, 6}, {4, 5, 6}});
  add(s, run, "pld", hf, 128, "s0", {{1, 2, 3}, {1, 2, 3}}, parity_scores(true, 3, 0, 0));
  add(s, run, "pld", hf, 128, "s1", {{4, 5, 6}, {4, 5, 6}}, parity_scores(true, 3, 0, 0));
  add(s, run, "pld", hf, 256, "s0", {{7}}, parity_scores(true, 1, 0, 0));
  add(s, run, "pld", atveit, 128, "s0", {{1, 2, 3}, {1, 2, 3}}, parity_scores(true, 3, 0, 0));
  add(s, run, "pld", atveit, 128, "s1", {{4, 9, 6}, {4, 9, 7}}, parity_scores(false, 1, 5, 9));
}

struct ParityTable : ::testing::Test {
  test::TempDir dir;
  std::string path = dir.file("r.sqlite");
  void SetUp() override {
    auto s = results::ResultStore::open(path);
    fill(s);
  }
  Table table(ReportOptions opt = {}) {
    auto s = results::ResultStore::open_readonly(path);
    return make_report(s, "parity", opt);
  }
};

// k is the same in every pld trial, so only preset labels the rows.
TEST_F(ParityTable, RowsAreConfigurationsWithTheBaselineFirstLabelledByVaryingParams) {
  const auto j = to_json(table());
  ASSERT_EQ(j["rows"].size(), 3u);
  EXPECT_EQ(j["rows"][0]["method"], "baseline");
  EXPECT_EQ(j["rows"][1]["params"], "preset=atveit");
  EXPECT_EQ(j["rows"][2]["params"], "preset=hf");
}

TEST_F(ParityTable, ExactShareAndEarliestDivergenceComeFromTheParityScores) {
  const auto r = to_json(table())["rows"];
  EXPECT_EQ(r[0]["exact_128"], nullptr);  // the reference has no parity scores
  EXPECT_EQ(r[1]["exact_128"]["same"], 1);
  EXPECT_EQ(r[1]["exact_128"]["n"], 2);
  EXPECT_EQ(r[1]["divergence_128"]["position"], 1);
  EXPECT_EQ(r[1]["divergence_128"]["ref_token"], 5);
  EXPECT_EQ(r[1]["divergence_128"]["method_token"], 9);
  EXPECT_EQ(r[1]["divergence_128"]["sample"], "s1");
  EXPECT_EQ(r[2]["exact_128"]["share"], 1.0);
  EXPECT_EQ(r[2]["divergence_128"], nullptr);  // "none": every sample exact
  EXPECT_EQ(r[2]["exact_256"]["n"], 1);
  EXPECT_EQ(r[1]["exact_256"], nullptr);  // atveit did not run 256
}

TEST_F(ParityTable, CrossDiffMatrixComparesFirstTrialsOnSharedSamples) {
  const auto r = to_json(table())["rows"];
  const auto cell = [&](int a, int b) {
    const auto& c = r[size_t(a - 1)]["vs_" + std::to_string(b)];
    return std::to_string(c["same"].get<int>()) + "/" + std::to_string(c["n"].get<int>());
  };
  EXPECT_EQ(cell(1, 2), "1/2");  // s1 differs
  EXPECT_EQ(cell(2, 1), "1/2");  // symmetric
  EXPECT_EQ(cell(1, 3), "2/2");  // hf's context-256 sample has no partner
  EXPECT_EQ(cell(3, 1), "2/2");
  EXPECT_EQ(cell(2, 3), "1/2");
  // Diagonal: every trial repeats the first one's tokens.
  EXPECT_EQ(cell(1, 1), "2/2");
  EXPECT_EQ(cell(2, 2), "1/2");  // atveit's s1 trials differ
  EXPECT_EQ(cell(3, 3), "3/3");
}

TEST_F(ParityTable, MarkdownPrintsTheMatrixColumnsAndCells) {
  const std::string out = render(table(), Format::Markdown);
  EXPECT_TRUE(test::lines_match(
      out,
      {"| # | Target | Method | Params | KV | Exact 128 | First div. 128 | Exact 256 | "
       "First div. 256 | #1 | #2 | #3 |",
       "| 1 | %* | baseline |  | f32 | — | — | — | — | 1.00 (2/2) | 0.500 (1/2) | 1.00 (2/2) |",
       "| 2 | %* | pld | preset=atveit | f32 | 0.500 (1/2) | @1 ref 5 / got 9 (s1) | — | — | "
       "0.500 (1/2) | 0.500 (1/2) | 0.500 (1/2) |",
       "| 3 | %* | pld | preset=hf | f32 | 1.00 (2/2) | none | 1.00 (1/1) | none | 1.00 (2/2) | "
       "0.500 (1/2) | 1.00 (3/3) |"}))
      << out;
}

TEST_F(ParityTable, WhereSelectsTrials) {
  ReportOptions opt;
  opt.where = "method = 'baseline'";
  const auto j = to_json(table(opt));
  ASSERT_EQ(j["rows"].size(), 1u);
  EXPECT_EQ(j["rows"][0]["vs_1"]["n"], 2);
}

TEST(ParityTableEmpty, SaysSoInAFootnote) {
  test::TempDir dir;
  auto s = results::ResultStore::open(dir.file("e.sqlite"));
  const Table t = make_report(s, "parity", {});
  EXPECT_TRUE(t.rows.empty());
  EXPECT_EQ(t.footnotes.back(), "No trials in this selection.");
}

}  // namespace
}  // namespace accel::reports
