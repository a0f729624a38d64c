// The ratio cost model: analytic FLOP counts on hand-worked configs, the least-squares eps fit,
// the costmodel table on a store of known timings, and draft ranking; the linear + quadratic
// model's fit and its predictions on timings that follow its law exactly; hybrid counts against
// the methods' own (methods/ttft_flops.h).
#include "reports/cost_model.h"
#include "reports/linquad_model.h"

#include <gtest/gtest.h>

#include "methods/ttft_flops.h"
#include "models/model_config.h"
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

// Sliding-window layers (n_swa, swa_layers, head_dim_swa) count only the pairs within the window.
// Two layers, the second sliding with a window of 4 and head_dim_swa 4: 10 tokens give 55 pairs in
// the full layer and 4*5/2 + 6*4 = 34 in the sliding one; attention MACs 8 * 55 + 16 * 34 = 984.
// Five kept tokens spread over 10 positions: the window holds 2 of them, so the sliding layer sees
// 2*3/2 + 3*2 = 9 pairs and the full one 15: 8 * 15 + 16 * 9 = 264 MACs.
TEST(CostModel, SlidingLayersCountPairsWithinTheWindow) {
  nlohmann::json c = tiny_cfg();
  c["n_layer"] = 2;
  c["n_swa"] = 4;
  c["swa_layers"] = {0, 1};  // as config_json writes them
  c["head_dim_swa"] = 4;
  EXPECT_DOUBLE_EQ(prefill_attention_flops(c, 10, 10), 2 * 984.0);
  EXPECT_DOUBLE_EQ(prefill_attention_flops(c, 5, 10), 2 * 264.0);
  EXPECT_DOUBLE_EQ(prefill_flops(c, 10), prefill_linear_flops(c, 10) + 2 * 984.0);
  const PrefillFlops f = prefill_flops_split(c, 5, 10);
  EXPECT_DOUBLE_EQ(f.attention, 2 * 264.0);
  c["swa_layers"] = {false, true};  // booleans read alike
  EXPECT_DOUBLE_EQ(prefill_attention_flops(c, 10, 10), 2 * 984.0);
  // Without a window every layer is full: 2 layers * 8 MACs * 55 pairs.
  c.erase("n_swa");
  EXPECT_DOUBLE_EQ(prefill_attention_flops(c, 10, 10), 2 * 2 * 8 * 55.0);
  // A window without per-layer flags is refused by name.
  c["n_swa"] = 4;
  c.erase("swa_layers");
  EXPECT_THROW(prefill_attention_flops(c, 10, 10), std::invalid_argument);
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

// Timings generated exactly from seconds = a x linear GFLOPs + b x attention GFLOPs + c at four
// prefill sizes: the fit recovers a, b and c to rounding (1e-9 relative: the normal equations of
// a well-conditioned 3 x 3 system in double), with zero residual; one size alone is refused.
TEST(LinQuadModel, FitRecoversTheConstantsOfExactTimings) {
  const nlohmann::json cfg = tiny_cfg();
  const double a = 20, b = 0.5, c = 0.003;
  std::vector<PrefillObservation> obs;
  for (int64_t m : {100, 400, 1000, 4000}) {
    const PrefillFlops f = prefill_flops_split(cfg, m, m);
    obs.push_back({f, a * f.linear * 1e-9 + b * f.attention * 1e-9 + c});
  }
  // The split adds up to prefill_flops: per-token part + output row, and 8 x 2 FLOPs per pair.
  const PrefillFlops f3 = prefill_flops_split(cfg, 3, 3);
  EXPECT_DOUBLE_EQ(f3.linear + f3.attention, prefill_flops(cfg, 3));
  EXPECT_DOUBLE_EQ(f3.attention, 16.0 * 6);
  const LinQuadFit fit = fit_linquad(obs);
  ASSERT_TRUE(fit.ok);
  EXPECT_NEAR(fit.a, a, 1e-9 * a);
  EXPECT_NEAR(fit.b, b, 1e-9 * b);
  EXPECT_NEAR(fit.c, c, 1e-9 * c);
  EXPECT_LT(fit.rms_rel, 1e-9);
  const std::vector<PrefillObservation> one_size(3, obs[0]);
  EXPECT_FALSE(fit_linquad(one_size).ok);
  EXPECT_FALSE(fit_linquad(std::span(obs).first(2)).ok);
}

// A store whose baseline and sparse prefills follow the linear + quadratic law exactly (the
// config's FLOPs at a = 2 s per linear GFLOP and b = 5 s per attention GFLOP, the tiny config's
// FLOPs being few, and c = 1 ms: attention dominates), with SpecPrefill keeping 20% at contexts
// 1000, 2000 and 4000 and 1 ms of draft scoring: the lin+quad prediction equals the measured
// speedup (G = 1 to 1e-6, in sample and leaving each context out), while the ratio model, which
// charges the sparse prefill k x the full one, mispredicts (its G differs from 1 by over 5%).
TEST(LinQuadModel, CostmodelTablePredictsTimingsThatFollowTheLawExactly) {
  test::TempDir dir;
  auto s = results::ResultStore::open(dir.file("r.sqlite"));
  const std::string run = s.begin_run(test::full_run());
  const nlohmann::json cfg = tiny_cfg();
  const auto law = [&](int64_t m) {
    const PrefillFlops f = prefill_flops_split(cfg, m, m);
    return 2 * f.linear * 1e-9 + 5 * f.attention * 1e-9 + 0.001;
  };
  for (int64_t n : {1000, 2000, 4000}) {
    auto b = test::simple_trial(run, "baseline", nlohmann::json::object(), n, "s0", 0, law(n));
    b.target.config = cfg;
    b.prompt_tokens = n;
    b.phases = {{"prefill", law(n)}, {"first_token", 0.0}};
    s.record_case({b});
    const int64_t kept = n / 5;
    auto t = test::simple_trial(run, "specprefill", {{"keep", 0.2}, {"lookahead", 8}}, n, "s0", 0,
                                0.001 + law(kept));
    t.target = b.target;
    t.draft = results::ModelRef{"/m/draft.gguf", "sha-draft", "llama", 100, cfg};
    t.phases = {{"draft_prefill", 0.006},
                {"lookahead", 0.003},
                {"score", 0.001},
                {"prefill", law(kept)},
                {"first_token", 0.0}};
    t.prompt_tokens = n;
    t.kept_tokens = kept;
    s.record_case({t});
  }
  const auto j = to_json(make_report(s, "costmodel", {}));
  ASSERT_EQ(j["rows"].size(), 3u);
  for (const auto& row : j["rows"]) {
    EXPECT_NEAR(row["G_lq"].get<double>(), 1.0, 1e-6) << row.dump();
    EXPECT_NEAR(row["G_lq_loco"].get<double>(), 1.0, 1e-6) << row.dump();
    EXPECT_GT(std::fabs(row["G"].get<double>() - 1.0), 0.05) << row.dump();
  }
  const std::string md = render(make_report(s, "costmodel", {}), Format::Markdown);
  EXPECT_NE(md.find("lin+quad fit for target (6 prefills): linear 0.5 GFLOP/s, attention 0.2 "
                    "GFLOP/s, constant 1 ms"),
            std::string::npos)
      << md;
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

// The cost model reads stored JSON configs; the methods count FLOPs from the loaded ModelConfig
// (methods/ttft_flops.h). On a qwen35moe-style hybrid (Gated DeltaNet layers 0 and 2, gated
// attention 1 and 3, routed plus shared experts) both must give the same prefill and decode
// counts, exactly: every term is an integer-valued double far below 2^53.
// Four layers of width 32 (4 heads of 8, 2 KV heads) with the ssm.* sizes both hybrid tests use:
// conv 4, 2 groups (key heads), 4 heads (value heads), state 8, inner 32.
ModelConfig hybrid_base(const char* arch_name) {
  ModelConfig c;
  c.arch_name = arch_name;
  c.n_vocab = 100;
  c.n_layer = 4;
  c.n_embd = 32;
  c.n_head = 4;
  c.n_head_kv = 2;
  c.head_dim = 8;
  c.ssm_d_conv = 4;
  c.ssm_n_group = 2;
  c.ssm_dt_rank = 4;
  c.ssm_d_state = 8;
  c.ssm_d_inner = 32;
  return c;
}

// A qwen35moe-style MoE hybrid under the given architecture name.
ModelConfig hybrid_moe(const char* arch_name) {
  ModelConfig c = hybrid_base(arch_name);
  c.n_expert = 8;
  c.n_expert_used = 2;
  c.n_ff_expert = 16;
  c.n_ff_shexp = 24;
  c.attn_output_gate = true;
  c.recurrent_layers = {1, 0, 1, 0};
  return c;
}

TEST(CostModel, HybridCountsEqualTheMethodsCounts) {
  // The same layers under both names: the JSON twin doubles attn_q's rows by the arch's name.
  for (const char* arch : {"qwen3next", "qwen35moe"}) {
    const ModelConfig c = hybrid_moe(arch);
    const nlohmann::json j = config_json(c);
    for (int64_t n : {1, 7, 300}) {
      EXPECT_DOUBLE_EQ(prefill_flops(j, n), forward_flops(c, double(n), 0, 1)) << arch << n;
      EXPECT_DOUBLE_EQ(decode_step_flops(j, n), forward_flops(c, 1, double(n - 1), 1)) << arch << n;
    }
  }
  const nlohmann::json j = config_json(hybrid_moe("qwen35moe"));
  // Attention counts only the two attention layers: per pair 2 layers x 2 x 4 heads x 8.
  EXPECT_DOUBLE_EQ(attention_pair_flops(j), 2 * 2 * 2 * 4 * 8.0);
  nlohmann::json bad = j;
  bad["recurrent_layers"] = {1, 0};
  EXPECT_THROW(prefill_flops(bad, 10), std::invalid_argument);
}

// The same on Nemotron-H blocks: Mamba-2 (layers 0, 3), attention without an FFN (1), FFN-only
// (2), dense and then with latent experts and a shared expert (nemotron_h_moe). Mamba-2 by hand:
// 4 heads of 8 (inner 32), state 8, 2 groups, conv 4: in 32 x (32 + 64 + 4) = 3200, out 1024,
// conv 64 x 4 = 256, scan 3 x 32 x 8 = 768: 5248 MACs per token.
TEST(CostModel, NemotronCountsEqualTheMethodsCounts) {
  ModelConfig c = hybrid_base("nemotron_h");
  c.arch = Arch::NemotronH;
  c.n_ff = 48;
  c.recurrent_layers = {1, 0, 0, 1};
  c.ffn_layers = {0, 0, 1, 0};
  EXPECT_DOUBLE_EQ(mamba2_macs_per_token(c), 5248.0);
  EXPECT_DOUBLE_EQ(nemotron_ffn_macs_per_token(c), 2 * 32 * 48.0);
  for (int moe = 0; moe < 2; ++moe) {
    if (moe) {
      c.arch = Arch::NemotronHMoe;
      c.arch_name = "nemotron_h_moe";
      c.n_expert = 8;
      c.n_expert_used = 2;
      c.n_ff_expert = 16;
      c.n_ff_shexp = 24;
      c.moe_latent = 16;
      // 2 experts x 2 x 16 x 16 + router 32 x 8 + latent 2 x 32 x 16 + shared 2 x 32 x 24.
      EXPECT_DOUBLE_EQ(nemotron_ffn_macs_per_token(c), 1024.0 + 256 + 1024 + 1536);
    }
    const nlohmann::json j = config_json(c);
    for (int64_t n : {1, 7, 300}) {
      EXPECT_DOUBLE_EQ(prefill_flops(j, n), forward_flops(c, double(n), 0, 1)) << n;
      EXPECT_DOUBLE_EQ(decode_step_flops(j, n), forward_flops(c, 1, double(n - 1), 1)) << n;
    }
    // One attention layer: per pair 2 x 4 heads x 8 x 2 FLOPs.
    EXPECT_DOUBLE_EQ(attention_pair_flops(j), 2 * 2 * 4 * 8.0);
  }
}

}  // namespace
}  // namespace accel::reports
