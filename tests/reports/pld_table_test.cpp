// The `pld` table on a hand-built store: the speedup, acceptance, tokens per step, ceiling and
// drafter share come out as worked by hand from the trials' decode rates and PLD stats, rows are
// per prompt class (the parity suite's sample classes), and a store without PLD trials is refused.
#include <gtest/gtest.h>

#include "reports/tables.h"
#include "tests/results/store_fixtures.h"
#include "tests/support/test_support.h"

namespace accel::reports {
namespace {

results::TrialRecord decode_trial(const std::string& run, const std::string& method,
                                  const std::string& sample, int idx, double tok_s) {
  auto t = test::simple_trial(
      run, method, method == "pld" ? nlohmann::json{{"k", 10}} : nlohmann::json::object(), 1024,
      sample, idx, 0.1);
  t.workload = "parity";
  t.decode_tokens = 65;  // 64 decode steps after the first token
  t.decode_tok_s = tok_s;
  t.case_key += "|" + std::to_string(idx);
  return t;
}

TEST(PldTable, SpeedupAcceptanceCeilingAndDrafterShareAreTheHandWorkedFigures) {
  test::TempDir dir;
  auto s = results::ResultStore::open(dir.file("r.sqlite"));
  const std::string run = s.begin_run(test::full_run());
  // Baseline: 20 tok/s (0.05 s per token). PLD: 40 tok/s over 64 tokens = 1.6 s of decode,
  // 16 verify steps of 0.09 s, 0.016 s drafting, 60 drafted, 48 accepted, 64 committed.
  for (int i = 0; i < 3; ++i) {
    s.record_case({decode_trial(run, "baseline", "json_rag-0", i, 20.0)});
    auto p = decode_trial(run, "pld", "json_rag-0", i, 40.0);
    p.stats = {{"drafted_tokens", 60},   {"accepted_tokens", 48}, {"verify_steps", 16},
               {"tokens_per_step", 4.0}, {"verify_s", 1.44},      {"drafter_s", 0.016}};
    p.scores = {{"parity.exact", 1.0}};
    s.record_case({p});
  }
  s.record_case({decode_trial(run, "baseline", "code-1", 0, 20.0)});  // no PLD row: not shown
  const Table t = pld_table(s, ReportOptions{});
  ASSERT_EQ(t.rows.size(), 1u);
  const auto col = [&](const std::string& key) {
    for (size_t i = 0; i < t.columns.size(); ++i)
      if (t.columns[i].key == key) return t.rows[0][i];
    throw std::logic_error("no column " + key);
  };
  EXPECT_EQ(col("class").text, "json_rag");
  EXPECT_DOUBLE_EQ(col("speedup").data["ratio"].get<double>(), 2.0);
  EXPECT_DOUBLE_EQ(col("acceptance").data.get<double>(), 0.8);
  EXPECT_DOUBLE_EQ(col("tokens_per_step").data.get<double>(), 4.0);
  // Ceiling = 4 tokens/step x 0.05 s / 0.09 s per verify step = 2.222...; 2 / 2.222 = 0.9.
  EXPECT_NEAR(col("ceiling").data.get<double>(), 4.0 * 0.05 / 0.09, 1e-12);
  EXPECT_NEAR(col("of_ceiling").data.get<double>(), 0.9, 1e-12);
  EXPECT_NEAR(col("drafter_share").data.get<double>(), 0.016 / 1.6, 1e-12);
  EXPECT_DOUBLE_EQ(col("parity").data.get<double>(), 1.0);
}

TEST(PldTable, StoreWithoutPldTrialsIsRefused) {
  test::TempDir dir;
  auto s = results::ResultStore::open(dir.file("r.sqlite"));
  const std::string run = s.begin_run(test::full_run());
  s.record_case({decode_trial(run, "baseline", "code-1", 0, 20.0)});
  EXPECT_THROW(pld_table(s, ReportOptions{}), std::invalid_argument);
}

}  // namespace
}  // namespace accel::reports
