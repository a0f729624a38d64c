// The ratio cost model: analytic FLOP counts on hand-worked configs, the least-squares eps fit,
// the costmodel table on a store of known timings, and draft ranking.
#include "reports/cost_model.h"

#include <gtest/gtest.h>

#include "tests/results/store_fixtures.h"
#include "tests/support/test_support.h"

namespace accel::reports {
namespace {

// A config small enough to count by hand: E = 4, 2 heads of dim 2 (q_dim 4), 1 kv head (kv_dim
// 2), FFN 8, 1 layer, vocab 10.
nlohmann::json tiny_cfg() {
  return {{"n_embd", 4},   {"n_layer", 1}, {"n_head", 2},   {"n_head_kv", 1},
          {"head_dim", 2}, {"n_ff", 8},    {"n_vocab", 10}, {"n_expert", 0}};
}

TEST(CostModel, PrefillFlopsHandWorked) {
  // MACs per token: Q 4*4 + K,V 2*4*2 + O 4*4 + FFN 3*4*8 = 16 + 16 + 16 + 96 = 144.
  // Attention: 2 * heads * head_dim = 8 MACs per (query, key); causal pairs of 3 tokens = 6.
  // Output layer, last row only: 4 * 10 = 40.  Total 3*144 + 48 + 40 = 520 MACs = 1040 FLOPs.
  EXPECT_DOUBLE_EQ(prefill_flops(tiny_cfg(), 3), 1040.0);
  // Decode with 5 keys: 144 + 8*5 + 40 = 224 MACs.
  EXPECT_DOUBLE_EQ(decode_step_flops(tiny_cfg(), 5), 448.0);
  // Scoring with lookahead 2: prefill(3) + one decode step at 4 keys (2*(144+32+40) = 432) + the
  // two lookahead queries' q.k over 3 keys in 2 heads of dim 2: 2 * 1*2*2*2*3 = 48.
  EXPECT_DOUBLE_EQ(scoring_flops(tiny_cfg(), 3, 2), 1040.0 + 432.0 + 48.0);
  EXPECT_DOUBLE_EQ(analytic_ratio(tiny_cfg(), tiny_cfg(), 3, 1), 1.0 + 24.0 / 1040.0);
}

TEST(CostModel, MoeCountsOnlyRoutedExperts) {
  nlohmann::json c = tiny_cfg();
  c["n_expert"] = 4;
  c["n_expert_used"] = 2;
  c["n_ff_expert"] = 8;
  // FFN: 2 experts * 3*4*8 + router 4*4 = 208 MACs; linear 48 + 208 = 256 per token.
  EXPECT_DOUBLE_EQ(prefill_flops(c, 3), 2 * (3 * 256.0 + 48 + 40));
}

TEST(CostModel, MissingConfigFieldIsNamed) {
  nlohmann::json c = tiny_cfg();
  c.erase("head_dim");
  try {
    prefill_flops(c, 10);
    FAIL() << "expected an error";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("head_dim"), std::string::npos) << e.what();
  }
  c = tiny_cfg();
  c["n_layer"] = 0;
  EXPECT_THROW(prefill_flops(c, 10), std::invalid_argument);
}

TEST(CostModel, EpsFitIsTheMeanResidual) {
  // eps_i = 1/S - r - k: 1/2.5 - 0.3 = 0.1 and 1/2 - 0.3 = 0.2 -> eps 0.15, rms 0.05.
  const std::vector<CostPoint> pts = {{0.1, 0.2, 2.5}, {0.05, 0.25, 2.0}};
  const EpsFit f = fit_eps(pts);
  EXPECT_EQ(f.n, 2);
  EXPECT_NEAR(f.eps, 0.15, 1e-12);
  EXPECT_NEAR(f.rms, 0.05, 1e-12);
  EXPECT_TRUE(std::isnan(fit_eps({}).eps));
  EXPECT_DOUBLE_EQ(predicted_speedup(0.05, 0.2, 0.05), 1 / 0.3);
}

// Baseline: prefill 1.0 s, TTFT 1.0 s. SpecPrefill: scoring 0.06 + 0.03 + 0.01 = 0.1 s, 200 of
// 1000 tokens kept, TTFT 0.4 s -> r 0.1, k 0.2, predicted 1/0.3 = 3.33, measured 2.5,
// eps 0.4 - 0.3 = 0.1, G = 3.333 / 2.5 = 1.333.
void fill(results::ResultStore& s) {
  const std::string run = s.begin_run(test::full_run());
  std::vector<results::TrialRecord> base, sp, fb;
  for (int i = 0; i < 3; ++i) {
    auto b = test::simple_trial(run, "baseline", nlohmann::json::object(), 1000, "s0", i, 1.0);
    b.phases = {{"prefill", 1.0}, {"first_token", 0.0}};
    b.target.config = tiny_cfg();
    b.target.config["synthetic_family"] = "tiny";
    base.push_back(b);
    auto t = test::simple_trial(run, "specprefill", {{"keep", 0.2}, {"lookahead", 8}}, 1000, "s0",
                                i, 0.4);
    t.target = b.target;
    t.draft = results::ModelRef{"/m/draft.gguf", "sha-draft", "llama", 100, tiny_cfg()};
    t.phases = {{"draft_prefill", 0.06}, {"lookahead", 0.03}, {"score", 0.01}, {"prefill", 0.2}};
    t.prompt_tokens = 1000;
    t.kept_tokens = 200;
    sp.push_back(t);
    auto f = t;  // fell back to full prefill: no scoring phases
    f.case_key += "|fallback";
    f.params["keep"] = 0.5;
    f.phases = {{"prefill", 1.0}};
    f.stats = {{"fallback", "below threshold"}};
    fb.push_back(f);
  }
  s.record_case(base);
  s.record_case(sp);
  s.record_case(fb);
}

TEST(CostModel, TableOnKnownTimings) {
  test::TempDir dir;
  const std::string path = dir.file("r.sqlite");
  {
    auto s = results::ResultStore::open(path);
    fill(s);
  }
  auto s = results::ResultStore::open_readonly(path);
  const Table t = make_report(s, "costmodel", {});
  ASSERT_EQ(t.rows.size(), 1u);
  const auto j = to_json(t);
  const auto& row = j["rows"][0];
  EXPECT_EQ(row["draft"], "draft");
  EXPECT_EQ(row["context_len"], 1000);
  EXPECT_NEAR(row["k"].get<double>(), 0.2, 1e-12);
  EXPECT_NEAR(row["r"].get<double>(), 0.1, 1e-12);
  EXPECT_NEAR(row["predicted"].get<double>(), 1 / 0.3, 1e-9);
  EXPECT_NEAR(row["measured"]["ratio"].get<double>(), 2.5, 1e-9);
  EXPECT_NEAR(row["eps"].get<double>(), 0.1, 1e-9);
  EXPECT_NEAR(row["G"].get<double>(), (1 / 0.3) / 2.5, 1e-9);
  EXPECT_NEAR(row["r_flops"].get<double>(), analytic_ratio(tiny_cfg(), tiny_cfg(), 1000, 8), 1e-12);
  const std::string md = render(t, Format::Markdown);
  EXPECT_NE(md.find("eps fit (least squares, target architecture llama, 1 configurations): "
                    "0.1000"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("3 trial(s) fell back to full prefill"), std::string::npos) << md;
  EXPECT_NE(md.find("random-weight synthetic model"), std::string::npos) << md;
}

TEST(CostModel, DraftRankingOrdersByPredictedSpeedup) {
  nlohmann::json target = tiny_cfg(), big = tiny_cfg(), small = tiny_cfg();
  target["n_layer"] = 8;
  big["n_layer"] = 4;
  small["n_layer"] = 1;
  const Table t = draft_ranking_table(target, "target", {{"big", big}, {"small", small}},
                                      {100, 200}, 0.2, 8, 0.0);
  ASSERT_EQ(t.rows.size(), 2u);
  EXPECT_EQ(t.rows[0][1].text, "small");
  EXPECT_EQ(t.rows[1][1].text, "big");
  const double r = analytic_ratio(small, target, 200, 8);
  EXPECT_NEAR(t.rows[0][5].data.get<double>(), 1 / (r + 0.2), 1e-12);
}

}  // namespace
}  // namespace accel::reports
