// The perplexity suite through `accelbench run`: the baseline and a method teacher-forced on the
// same text. SpecPrefill at keep 1.0 reproduces the baseline bit for bit, so its delta NLL and KL
// are exactly 0 and its top-1 exactly 1; int4 KV records a finite, non-negative KL; the baseline
// records its own perplexity and no comparison.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

#include "results/result_store.h"
#include "tests/support/essay_fixture.h"
#include "tests/support/test_support.h"

namespace accel {
namespace {

TEST(PerplexityRun, KeepOneMatchesTheBaselineExactlyAndInt4KvRecordsAFiniteKl) {
  test::TempDir dir;
  const std::string plan = dir.file("plan.json"), db = dir.file("r.sqlite");
  const std::string text = dir.file("text.txt");
  {
    std::ofstream f(text);
    f << test::fixture_essays();
  }
  std::ofstream(plan) << nlohmann::json{
      {"name", "perplexity-test"},
      {"models", {{{"name", "tiny"}, {"family", "tiny"}}}},
      {"methods",
       {{{"name", "baseline"}},
        {{"name", "specprefill"}, {"params", {{"keep", 1.0}, {"threshold", 0}}}}}},
      {"context_lengths", {256}},
      {"kv_dtypes", {"f32", "int4"}},
      {"suite",
       {{"name", "perplexity"},
        {"params", {{"data", text}, {"continuation", 24}}},
        {"samples", 1}}},
      {"warmup", 1},
      {"trials", 1},
      {"threads", 1}}.dump();
  std::string out;
  ASSERT_EQ(
      test::run_cli("run " + plan + " --db " + db + " --models-dir " + dir.file("models"), &out), 0)
      << out;
  const auto trials = results::ResultStore::open_readonly(db).trials();
  ASSERT_EQ(trials.size(), 4u) << out;  // {baseline, specprefill} x {f32, int4}
  const results::TrialRecord *base = nullptr, *int4 = nullptr, *full = nullptr;
  for (const auto& t : trials) {
    if (t.method == "baseline") (t.kv_dtype == "int4" ? int4 : base) = &t;
    if (t.method == "specprefill" && t.kv_dtype == "f32") full = &t;
  }
  ASSERT_TRUE(base && int4 && full);
  EXPECT_TRUE(std::isfinite(base->scores.at("ppl.nll_mean")));
  EXPECT_FALSE(base->scores.count("ppl.kl_mean"));
  EXPECT_EQ(full->scores.at("ppl.delta_nll"), 0.0);
  EXPECT_EQ(full->scores.at("ppl.kl_mean"), 0.0);
  EXPECT_EQ(full->scores.at("ppl.top1"), 1.0);
  EXPECT_EQ(full->scores.at("ppl.ref_nll_mean"), base->scores.at("ppl.nll_mean"));
  EXPECT_GE(int4->scores.at("ppl.kl_mean"), 0.0);
  EXPECT_TRUE(std::isfinite(int4->scores.at("ppl.kl_mean")));
  EXPECT_EQ(int4->scores.at("ppl.ref_nll_mean"), base->scores.at("ppl.nll_mean"));
  // Per-sample rows: teacher-forced scoring stores no prediction text; the reference is the
  // continuation's ids, the same for every method.
  EXPECT_FALSE(base->prediction);
  ASSERT_TRUE(base->sample_reference.is_array());
  EXPECT_EQ(base->sample_reference.size(), 24u);
  EXPECT_EQ(full->sample_reference, base->sample_reference);
}

// A text-scored suite stores each trial's generation as text beside the sample's reference: the
// NIAH grid on the tiny family (random weights: the text is noise, but it is the decoded output).
TEST(SampleRows, NiahTrialsStoreTheDecodedPredictionAndTheReferenceAnswer) {
  test::TempDir dir;
  const std::string plan = dir.file("plan.json"), db = dir.file("r.sqlite");
  const std::string text = dir.file("essays.txt");
  {
    std::ofstream f(text);
    f << test::fixture_essays();
  }
  std::ofstream(plan) << nlohmann::json{
      {"name", "sample-rows-test"},
      {"models", {{{"name", "tiny"}, {"family", "tiny"}}}},
      {"methods", {{{"name", "baseline"}}}},
      {"context_lengths", {600}},
      {"suite",
       {{"name", "niah"},
        {"params", {{"data", text}, {"depths", 2}, {"max_new_tokens", 6}}},
        {"samples", 2}}},
      {"warmup", 0},
      {"trials", 1},
      {"threads", 1}}.dump();
  std::string out;
  ASSERT_EQ(
      test::run_cli("run " + plan + " --db " + db + " --models-dir " + dir.file("models"), &out), 0)
      << out;
  const auto trials = results::ResultStore::open_readonly(db).trials();
  ASSERT_EQ(trials.size(), 2u) << out;
  for (const auto& t : trials) {
    ASSERT_TRUE(t.prediction) << t.sample_id;
    EXPECT_EQ(t.output_tokens.size(), 6u);
    EXPECT_FALSE(t.prediction->empty());
    EXPECT_EQ(t.sample_reference,
              nlohmann::json::array({"eat a sandwich and sit in Dolores Park on a sunny day"}));
    EXPECT_TRUE(t.scores.count("niah.score"));
  }
  EXPECT_NE(trials[0].sample_id, trials[1].sample_id);
}

}  // namespace
}  // namespace accel
