// The parity suite end to end through the CLI: baseline and PLD on the tiny family over passage
// prompts; PLD must equal the baseline's greedy tokens exactly (batch-invariant kernels), and
// `report --table parity` prints the cross-diff matrix from the store.
#include <gtest/gtest.h>

#include <fstream>
#include <set>

#include "results/result_store.h"
#include "tests/reports/line_match.h"
#include "tests/support/test_support.h"

namespace accel {
namespace {

TEST(ParityRun, PldMatchesBaselineTokenForTokenAndTheReportPrintsTheMatrix) {
  test::TempDir dir;
  const std::string plan = dir.file("plan.json"), db = dir.file("r.sqlite");
  std::ofstream(plan) << nlohmann::json{
      {"name", "parity-test"},
      {"models", {{{"name", "tiny"}, {"family", "tiny"}}}},
      {"methods", {{{"name", "baseline"}}, {{"name", "pld"}}}},
      {"context_lengths", {128}},
      {"suite", {{"name", "parity"}, {"params", {{"prompt_class", "passage"}}}, {"samples", 2}}},
      {"warmup", 0},
      {"trials", 1},
      {"decode_tokens", 16},
      {"threads", 1}}.dump();
  std::string out;
  ASSERT_EQ(
      test::run_cli("run " + plan + " --db " + db + " --models-dir " + dir.file("models"), &out), 0)
      << out;
  const auto trials = results::ResultStore::open_readonly(db).trials();
  int pld = 0, base = 0;
  int64_t drafted = 0;
  std::set<std::vector<int32_t>> base_outputs;
  for (const auto& t : trials) {
    EXPECT_EQ(t.workload, "parity");
    EXPECT_EQ(t.prompt_tokens, 128);
    EXPECT_EQ(t.output_tokens.size(), 16u) << t.method;
    if (t.method == "pld") {
      ++pld;
      ASSERT_TRUE(t.scores.count("parity.exact")) << t.sample_id;
      EXPECT_EQ(t.scores.at("parity.exact"), 1.0) << t.sample_id;
      EXPECT_EQ(t.scores.at("parity.first_divergence"), 16.0) << t.sample_id;
      EXPECT_EQ(t.scores.at("parity.ref_token_at_divergence"), -1.0);
      drafted += t.stats.value("drafted_tokens", int64_t(0));
    } else {
      base_outputs.insert(t.output_tokens);
      ++base;
      EXPECT_TRUE(t.scores.empty());  // the reference is not scored against itself
    }
  }
  EXPECT_EQ(pld, 2);
  EXPECT_EQ(base, 2);
  // Not parity by default: PLD drafted (so verify steps ran), and the two prompts led to different
  // outputs (so "identical" in the matrix is not a constant model's doing).
  EXPECT_GT(drafted, 0);
  EXPECT_EQ(base_outputs.size(), 2u);
  ASSERT_EQ(test::run_cli("report --db " + db + " --table parity", &out), 0) << out;
  EXPECT_TRUE(test::lines_match(
      out, {"| # | Target | Method | Params | KV | Exact 128 | First div. 128 | #1 | #2 |",
            "| 1 | tiny/target | baseline |  | f32 | — | — | 1.00 (2/2) | 1.00 (2/2) |",
            "| 2 | tiny/target | pld | %* | f32 | 1.00 (2/2) | none | 1.00 (2/2) | 1.00 (2/2) |"}))
      << out;
}

}  // namespace
}  // namespace accel
