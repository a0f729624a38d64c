// SpecPrefill end to end on the tiny family: keep = 1.0 reproduces the baseline bit for bit,
// sparse selections keep original positions and decode continues at the full prompt length,
// the threshold and error fallbacks, and the cached-prefix offset.
#include <gtest/gtest.h>

#include "methods/method.h"
#include "models/generation.h"
#include "models/synthetic.h"
#include "suites/synthetic_prompt.h"
#include "tests/support/test_support.h"
#include "tests/support/tiny_family.h"

namespace accel {
namespace {

class SpecPrefill : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const test::TinyFamily& family = test::tiny_family();
    dir_ = family.dir.get();
    target_ = family.target.get();
    draft_ = family.draft.get();
  }
  Outcome run(const std::string& method, nlohmann::json params, size_t n, int keep_logits = 16) {
    const Method& m = find_method(method);
    Engine e{.target = target_, .models = {{"draft", draft_}}, .prefill_chunk = 64};
    Request r;
    r.prompt = synthetic_prompt(target_->config().n_vocab, 256, {257}, n, 9);
    r.max_new_tokens = 16;
    r.keep_logits = keep_logits;
    return m.run(e, r, resolve_params(m, params));
  }
  static inline const test::TempDir* dir_ = nullptr;
  static inline const Model* target_ = nullptr;
  static inline const Model* draft_ = nullptr;
};

TEST_F(SpecPrefill, KeepOneEqualsBaselineBitForBit) {
  const Outcome base = run("baseline", {}, 700);
  const Outcome sp = run("specprefill", {{"keep", 1.0}, {"force", true}}, 700);
  EXPECT_EQ(sp.tokens, base.tokens);
  ASSERT_EQ(sp.logits.size(), base.logits.size());
  for (size_t i = 0; i < sp.logits.size(); ++i)
    EXPECT_TRUE(test::bit_equal(sp.logits[i], base.logits[i])) << "step " << i;
  EXPECT_EQ(sp.kept_tokens, 700u);
  EXPECT_EQ(sp.stats["n_chunks"], 22);  // ceil(700 / 32)
}

TEST_F(SpecPrefill, SparseKeepsChunksAndDecodesAtFullLength) {
  const Outcome sp = run("specprefill", {{"keep", 0.2}, {"force", true}}, 1000);
  // 32 chunks (31 full + one of 8), ceil(32 * 0.2) = 7 chunks kept.
  EXPECT_EQ(sp.stats["n_chunks"], 32);
  const auto chunks = sp.stats["kept_chunks"].get<std::vector<int>>();
  ASSERT_EQ(chunks.size(), 7u);
  EXPECT_TRUE(std::is_sorted(chunks.begin(), chunks.end()));
  const size_t expect_k = chunks.back() == 31 ? 6 * 32 + 8 : 7 * 32;
  EXPECT_EQ(sp.kept_tokens, expect_k);
  // Cache: K prompt entries + 15 fed-back decode tokens (the 16th is never fed).
  EXPECT_EQ(sp.kv_bytes, (expect_k + 15) * (4u * 2 * 64 * 4 + 4));  // 4 layers, K+V, kv_dim 64
  EXPECT_EQ(sp.tokens.size(), 16u);
  for (const char* ph :
       {"draft_prefill", "lookahead", "score", "select", "prefill", "first_token"}) {
    bool found = false;
    for (const auto& [name, s] : sp.phases) found = found || name == ph;
    EXPECT_TRUE(found) << ph;
  }
  EXPECT_EQ(sp.stats["lookahead_queries"], 8);
}

TEST_F(SpecPrefill, BelowThresholdFallsBackToFullPrefill) {
  const Outcome base = run("baseline", {}, 300);
  const Outcome sp = run("specprefill", {{"keep", 0.2}}, 300);  // default threshold 8192
  EXPECT_EQ(sp.stats["fallback"], "below_threshold");
  EXPECT_EQ(sp.tokens, base.tokens);
  EXPECT_EQ(sp.kept_tokens, 300u);
}

TEST_F(SpecPrefill, PrefixIsKeptAndOnlySuffixIsScored) {
  const Outcome sp =
      run("specprefill", {{"keep", 0.25}, {"force", true}, {"prefix_tokens", 256}}, 512);
  EXPECT_EQ(sp.stats["n_chunks"], 8);  // 256 suffix tokens / 32
  EXPECT_EQ(sp.stats["kept_chunks"].size(), 2u);
  EXPECT_EQ(sp.kept_tokens, 256u + 64u);
}

TEST_F(SpecPrefill, InvalidKeepIsRefusedByName) {
  const Method& m = find_method("specprefill");
  for (double keep : {0.0, -0.1, 1.5}) {
    try {
      resolve_params(m, {{"keep", keep}});
      FAIL() << keep;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("'keep'"), std::string::npos) << e.what();
    }
  }
}

TEST_F(SpecPrefill, TailModesCaptureTheRightQueryCount) {
  EXPECT_EQ(run("specprefill", {{"force", true}, {"lookahead_mode", "tail"}}, 400)
                .stats["lookahead_queries"],
            8);
  EXPECT_EQ(
      run("specprefill", {{"force", true}, {"lookahead_mode", "decode"}, {"lookahead", 4}}, 400)
          .stats["lookahead_queries"],
      4);
}

}  // namespace
}  // namespace accel

namespace accel {
namespace {

// Teacher forcing (Request::forced_tokens, used for agreement scoring): step t's logits are those
// of the prompt followed by forced tokens 0..t-1, whatever the method would have chosen; the
// reference is one plain prefill of that sequence (bit-equal by batch invariance).
TEST_F(SpecPrefill, ForcedTokensDriveTheDecode) {
  const Method& m = find_method("baseline");
  Request r;
  r.prompt = synthetic_prompt(target_->config().n_vocab, 256, {257}, 100, 9);
  r.max_new_tokens = 4;
  r.keep_logits = 4;
  r.forced_tokens = {5, 9, 13};
  const Outcome o = m.run(Engine{.target = target_, .prefill_chunk = 64}, r, resolve_params(m, {}));
  ASSERT_EQ(o.logits.size(), 4u);
  ASSERT_EQ(o.tokens.size(), 4u);
  std::vector<int32_t> seq = r.prompt;
  for (size_t t = 1; t < 4; ++t) {
    seq.push_back(r.forced_tokens[t - 1]);
    KVCache cache = target_->make_cache();
    const auto lg = prefill(*target_, seq, iota_positions(0, seq.size()), cache, 64);
    EXPECT_TRUE(test::bit_equal(lg, o.logits[t])) << "step " << t;
    EXPECT_EQ(o.tokens[t], argmax(lg)) << "tokens hold the argmax of each forced step";
  }
}

// On a hybrid family (target and draft with recurrent and attention layers) the draft scores with
// its attention layers only, and keep = 1.0 reproduces the baseline bit for bit (the recurrent
// layers consume every token, in order, as the baseline's do); a sparse keep prefills the
// recurrent layers with the kept tokens only and decodes at the full prompt length. Returns the
// sparse run's stats.
nlohmann::json expect_hybrid_keep_one_parity(
    const std::string& family, const nlohmann::json& extra = nlohmann::json::object()) {
  test::TempDir dir;
  const auto paths = make_synthetic_family(family, dir.path().string(), 5, DType::F32);
  const auto target = Model::load(paths[0]), draft = Model::load(paths[1]);
  auto run = [&](const std::string& method, nlohmann::json params) {
    const Method& m = find_method(method);
    Engine e{.target = target.get(), .models = {{"draft", draft.get()}}, .prefill_chunk = 64};
    Request r;
    r.prompt = synthetic_prompt(target->config().n_vocab, 256, {257}, 500, 9);
    r.max_new_tokens = 12;
    r.keep_logits = 12;
    return m.run(e, r, resolve_params(m, params));
  };
  const Outcome base = run("baseline", {});
  nlohmann::json one = {{"keep", 1.0}, {"force", true}};
  one.update(extra);
  const Outcome sp = run("specprefill", one);
  EXPECT_EQ(sp.tokens, base.tokens);
  EXPECT_EQ(sp.logits.size(), base.logits.size());
  for (size_t i = 0; i < std::min(sp.logits.size(), base.logits.size()); ++i)
    EXPECT_TRUE(test::bit_equal(sp.logits[i], base.logits[i])) << "step " << i;
  EXPECT_EQ(sp.kept_tokens, 500u);
  EXPECT_GT(sp.stats["lookahead_queries"].get<int>(), 0);
  nlohmann::json part = {{"keep", 0.3}, {"force", true}};
  part.update(extra);
  const Outcome sparse = run("specprefill", part);
  EXPECT_LT(sparse.kept_tokens, 200u);
  EXPECT_EQ(sparse.tokens.size(), 12u);
  return sparse.stats;
}

TEST(SpecPrefillHybrid, KeepOneEqualsBaselineBitForBitOnTinyQwen35) {
  expect_hybrid_keep_one_parity("tiny-qwen35");
}

// nemotron_h: the draft's 1 attention layer of 3 blocks scores (its Mamba-2 and FFN-only blocks
// hold no keys), with its queries as they are (no RoPE), also when asked for pre-RoPE scoring.
TEST(SpecPrefillHybrid, KeepOneEqualsBaselineBitForBitOnTinyNemotronH) {
  EXPECT_EQ(expect_hybrid_keep_one_parity("tiny-nemotron-h")["scoring_layers"], 1);
  EXPECT_EQ(
      expect_hybrid_keep_one_parity("tiny-nemotron-h", {{"qk_rope", "pre"}})["scoring_layers"], 1);
}

// nemotron_h_moe target (routed relu^2 experts) with tiny-nemotron-h's dense draft.
TEST(SpecPrefillHybrid, KeepOneEqualsBaselineBitForBitOnTinyNemotronHMoe) {
  EXPECT_EQ(expect_hybrid_keep_one_parity("tiny-nemotron-h-moe")["scoring_layers"], 1);
}

// qwen3next target (interleaved key heads, ssm_ba, NeoX RoPE) with tiny-qwen35's dense draft.
TEST(SpecPrefillHybrid, KeepOneEqualsBaselineBitForBitOnTinyQwen3Next) {
  expect_hybrid_keep_one_parity("tiny-qwen3next");
}

}  // namespace
}  // namespace accel
