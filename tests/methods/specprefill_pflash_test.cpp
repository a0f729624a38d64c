// SpecPrefill's pflash preset end to end on the tiny family: keep = 1 with original positions
// reproduces the baseline bit for bit; contiguous positions make the kept tokens a new prompt at
// 0..K-1 (logits equal a baseline run on exactly that prompt); and a draft with another
// tokenizer (stories260K's SPM vs the synthetic byte-level BPE) re-tokenizes the kept text.
#include <gtest/gtest.h>

#include <filesystem>

#include "methods/method.h"
#include "models/generation.h"
#include "models/synthetic.h"
#include "models/tokenizer.h"
#include "suites/synthetic_prompt.h"
#include "tests/support/test_support.h"
#include "tests/support/tiny_family.h"

namespace accel {
namespace {

class SpecPrefillPflash : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const test::TinyFamily& family = test::tiny_family();
    dir_ = family.dir.get();
    target_ = family.target.get();
    draft_ = family.draft.get();
  }
  static Outcome run(const std::string& method, const nlohmann::json& params,
                     std::vector<int32_t> prompt, const Model* draft = draft_) {
    const Method& m = find_method(method);
    Engine e{.target = target_, .models = {{"draft", draft}}, .prefill_chunk = 64};
    Request r;
    r.prompt = std::move(prompt);
    r.max_new_tokens = 12;
    r.keep_logits = 12;
    return m.run(e, r, resolve_params(m, params));
  }
  static std::vector<int32_t> prompt(size_t n) {
    return synthetic_prompt(target_->config().n_vocab, 256, {257}, n, 11);
  }
  static void expect_same_run(const Outcome& a, const Outcome& b) {
    EXPECT_EQ(a.tokens, b.tokens);
    ASSERT_EQ(a.logits.size(), b.logits.size());
    for (size_t i = 0; i < a.logits.size(); ++i)
      EXPECT_TRUE(test::bit_equal(a.logits[i], b.logits[i])) << "step " << i;
  }
  static inline const test::TempDir* dir_ = nullptr;
  static inline const Model* target_ = nullptr;
  static inline const Model* draft_ = nullptr;
};

TEST_F(SpecPrefillPflash, KeepOneWithOriginalPositionsEqualsBaselineBitForBit) {
  const auto p = prompt(900);
  const Outcome base = run("baseline", {}, p);
  const Outcome pf =
      run("specprefill",
          {{"preset", "pflash"}, {"keep", 1.0}, {"positions", "original"}, {"force", true}}, p);
  expect_same_run(pf, base);
  EXPECT_EQ(pf.kept_tokens, 900u);
  EXPECT_EQ(pf.stats["config"]["lookahead_mode"], "tail");
  EXPECT_EQ(pf.stats["config"]["qk_rope"], "pre");
  EXPECT_EQ(pf.stats["config"]["positions"], "original");
  EXPECT_EQ(pf.stats["lookahead_queries"], 8);
}

TEST_F(SpecPrefillPflash, PresetSetsEverySwitchAndExplicitValuesWin) {
  const auto p = prompt(700);
  const Outcome pf = run("specprefill", {{"preset", "pflash"}, {"keep", 0.5}, {"force", true}}, p);
  const nlohmann::json want = {{"preset", "pflash"},
                               {"lookahead_mode", "tail"},
                               {"tail_mask", "causal"},
                               {"qk_rope", "pre"},
                               {"pool_edges", "renormalize"},
                               {"aggregation", "max_mean_pool"},
                               {"keep_rounding", "floor_min1"},
                               {"head_chunks", 8},
                               {"tail_chunks", 24},
                               {"anchor_ngram", 4},
                               {"positions", "contiguous"}};
  EXPECT_EQ(pf.stats["config"], want);
  // 22 chunks, floor(11) = 11 kept; head 8 + tail 24 >= 11 -> F = 5: head 1, tail 4.
  EXPECT_EQ(pf.stats["forced_head_chunks"], 1);
  EXPECT_EQ(pf.stats["forced_tail_chunks"], 4);
  EXPECT_EQ(pf.stats["kept_chunks"].size(), 11u);
  const Outcome mixed =
      run("specprefill",
          {{"preset", "pflash"}, {"qk_rope", "post"}, {"head_chunks", 0}, {"force", true}}, p);
  EXPECT_EQ(mixed.stats["config"]["qk_rope"], "post");
  EXPECT_EQ(mixed.stats["config"]["head_chunks"], 0);
  const Outcome canon = run("specprefill", {{"force", true}}, p);
  EXPECT_EQ(canon.stats["config"]["lookahead_mode"], "reference");
  EXPECT_EQ(canon.stats["config"]["positions"], "original");
}

TEST_F(SpecPrefillPflash, ContiguousPositionsPrefillExactlyTheKeptTokensAsANewPrompt) {
  const auto p = prompt(1000);
  for (const char* rope : {"pre", "post"}) {
    const Outcome pf =
        run("specprefill",
            {{"preset", "pflash"}, {"keep", 0.3}, {"qk_rope", rope}, {"force", true}}, p);
    std::vector<int32_t> kept;
    for (int c : pf.stats["kept_chunks"].get<std::vector<int>>())
      for (size_t j = size_t(c) * 32; j < std::min<size_t>(size_t(c) * 32 + 32, p.size()); ++j)
        kept.push_back(p[j]);
    ASSERT_LT(kept.size(), p.size());
    EXPECT_EQ(pf.kept_tokens, kept.size());
    // Same model, same chunking: a baseline on the shortened prompt must match bit for bit.
    expect_same_run(pf, run("baseline", {}, kept));
  }
}

TEST_F(SpecPrefillPflash, ContiguousPositionsAfterACachedPrefixStartRightAfterIt) {
  const auto p = prompt(800);
  const Outcome pf =
      run("specprefill",
          {{"preset", "pflash"}, {"keep", 0.25}, {"prefix_tokens", 128}, {"force", true}}, p);
  std::vector<int32_t> seq(p.begin(), p.begin() + 128);
  for (int c : pf.stats["kept_chunks"].get<std::vector<int>>())
    for (size_t j = 128 + size_t(c) * 32; j < std::min<size_t>(128 + size_t(c) * 32 + 32, p.size());
         ++j)
      seq.push_back(p[j]);
  EXPECT_EQ(pf.kept_tokens, seq.size());
  expect_same_run(pf, run("baseline", {}, seq));
}

TEST_F(SpecPrefillPflash, DraftWithAnotherVocabularyNeedsContiguousPositions) {
  const auto stories = test::shared_data("stories260K/stories260K.gguf");
  if (!stories) GTEST_SKIP() << test::missing_shared_data("stories260K/stories260K.gguf");
  const auto spm = Model::load(stories->string());
  EXPECT_THROW(
      run("specprefill", {{"preset", "pflash"}, {"positions", "original"}, {"force", true}},
          prompt(200), spm.get()),
      std::invalid_argument);
}

TEST_F(SpecPrefillPflash, DraftWithAnotherTokenizerReTokenizesTheKeptText) {
  const auto stories = test::shared_data("stories260K/stories260K.gguf");
  if (!stories) GTEST_SKIP() << test::missing_shared_data("stories260K/stories260K.gguf");
  const auto spm_model = Model::load(stories->string());
  const auto target_tok = Tokenizer::create(TokenizerSpec::from_gguf(target_->file()));
  const auto draft_tok = Tokenizer::create(TokenizerSpec::from_gguf(spm_model->file()));
  std::string text;
  for (int i = 0; i < 2; ++i)  // stories260K's context is 128 tokens
    text +=
        "Once upon a time there was a little girl named Lily. She liked to play in the park "
        "with her dog, and one day they found a big red ball under a tree. ";
  const std::vector<int32_t> p = target_tok->encode(text, true, false);
  const std::vector<int32_t> draft_ids = draft_tok->encode(target_tok->decode(p), true, false);
  ASSERT_LT(draft_ids.size() + 8, size_t(spm_model->config().n_ctx)) << "prompt too long";

  // keep = 1: the whole text comes back, so the target sees its own prompt again.
  const Outcome all = run("specprefill", {{"preset", "pflash"}, {"keep", 1.0}, {"force", true}}, p,
                          spm_model.get());
  EXPECT_EQ(all.stats["draft_prompt_tokens"], draft_ids.size());
  EXPECT_EQ(all.stats["target_kept_tokens"], p.size());
  expect_same_run(all, run("baseline", {}, p));

  // keep 0.5 of 8-token chunks: the target prefills exactly the target tokenization of the
  // kept draft text (the repeated text also gives the final 4-grams earlier anchors).
  const Outcome pf =
      run("specprefill", {{"preset", "pflash"}, {"keep", 0.5}, {"chunk", 8}, {"force", true}}, p,
          spm_model.get());
  EXPECT_GT(pf.stats["anchor_chunks"].get<int>(), 0);
  std::vector<int32_t> kept;
  for (int c : pf.stats["kept_chunks"].get<std::vector<int>>())
    for (size_t j = size_t(c) * 8; j < std::min<size_t>(size_t(c) * 8 + 8, draft_ids.size()); ++j)
      kept.push_back(draft_ids[j]);
  const std::vector<int32_t> retok = target_tok->encode(draft_tok->decode(kept), true, false);
  EXPECT_EQ(pf.stats["draft_kept_tokens"], kept.size());
  EXPECT_EQ(pf.stats["target_kept_tokens"], retok.size());
  EXPECT_EQ(pf.kept_tokens, retok.size());
  EXPECT_LT(retok.size(), p.size());
  expect_same_run(pf, run("baseline", {}, retok));
}

}  // namespace
}  // namespace accel
