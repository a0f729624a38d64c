// The nemotron_h forward pass (models/model_nemotron_h.cpp: Mamba-2, attention without RoPE and
// FFN-only blocks): layer kinds and what the cache holds for each, against the naive double
// forward, batch invariance of every kind of call, rollback by checkpoint + replay bit for bit
// against plain decoding, and files whose markers or sizes disagree with their tensors.
#include <gtest/gtest.h>

#include "models/generation.h"
#include "models/gguf.h"
#include "models/model.h"
#include "models/synthetic.h"
#include "tests/support/hybrid_checks.h"
#include "tests/support/prefill_logits.h"
#include "tests/support/reference_forward.h"
#include "tests/support/test_support.h"

namespace accel {
namespace {

using test::all_logits;
using test::seeded_tokens;

// The tiny-nemotron-h pair (f32, seed 11) made and loaded once for the tests that only read it.
class NemotronH : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new test::TempDir();
    paths_ = make_synthetic_family("tiny-nemotron-h", dir_->path().string(), 11, DType::F32);
    target_ = Model::load(paths_[0]).release();
  }
  static void TearDownTestSuite() {
    delete target_;
    delete dir_;
  }
  static inline test::TempDir* dir_ = nullptr;
  static inline std::vector<std::string> paths_;
  static inline Model* target_ = nullptr;
};

// Blocks M-M*-M*-: Mamba-2 at 0, 2, 5; attention at 3, 6; FFN-only at 1, 4, 7. Recurrent layers
// hold a fixed state, attention layers K/V that grow with the context, FFN blocks nothing (were
// they counted as attention layers, bytes() would grow 2.5x faster per token).
TEST_F(NemotronH, LayerKindsAndCacheFollowTheFile) {
  const ModelConfig& c = target_->config();
  EXPECT_EQ(c.arch, Arch::NemotronH);
  EXPECT_EQ(c.recurrent_layers, (std::vector<uint8_t>{1, 0, 1, 0, 0, 1, 0, 0}));
  EXPECT_EQ(c.ffn_layers, (std::vector<uint8_t>{0, 1, 0, 0, 1, 0, 0, 1}));
  EXPECT_EQ(c.n_head_kv, 2);
  EXPECT_EQ(c.n_ff, 352);
  KVCache cache = target_->make_cache();
  for (int l = 0; l < c.n_layer; ++l) {
    EXPECT_EQ(cache.is_recurrent(l), is_recurrent_layer(c, l)) << l;
    EXPECT_EQ(cache.has_kv(l), is_attention_layer(c, l)) << l;
  }
  // Fixed state: 3 layers x (3 conv rows x (256 + 2 x 2 x 16) channels + 8 heads x 32 x 16).
  const size_t state = 3 * (3 * 320 + 8 * 32 * 16) * sizeof(float);
  EXPECT_EQ(cache.recurrent_bytes(), state);
  EXPECT_EQ(cache.bytes(), state);
  const auto toks = seeded_tokens(10, c.n_vocab, 1);
  prefill(*target_, toks, iota_positions(0, 10), cache, 4);
  // 2 attention layers of 2 KV heads x 32, K and V, f32, plus a position per entry.
  EXPECT_EQ(cache.bytes(), state + 10 * (2 * 2 * 2 * 32 * 4 + 4));
  EXPECT_EQ(cache.recurrent_state(5).tokens(), 10u);
  EXPECT_THROW(cache.f32_keys(1), std::logic_error);
}

// Tolerance as ForwardVsReference (model_test.cpp): f32 over <= 8 blocks of width <= 584 loses
// ~1e-6 relative per op, so 1e-4 absolute + 1e-4 relative leaves > 10x margin. The scan over 37
// tokens adds ~37 rounding steps per state element (each ~6e-8 relative, decays <= 1 so errors
// do not grow), still ~1e-5. A wrong split of the in-projection, group map, D skip, norm grouping
// or relu^2 moves logits by far more (the deliberate-break check in the report: 1e-2 and up).
// The draft carries the optional attention and FFN biases.
TEST_F(NemotronH, BothMembersMatchNaiveDoubleForward) {
  test::expect_members_match_reference(paths_);
}

// A sparse prefill (kept tokens at their original positions): attention layers mask by position,
// recurrent layers consume only the kept tokens, in order, on both sides.
TEST_F(NemotronH, SparsePositionsMatchNaiveDoubleForward) {
  test::expect_sparse_positions_match_reference(*target_, paths_[0], 4);
}

// Batch invariance bit for bit: the conv and scan kernels run in token order on every path
// (kernels/ssm_scan.h, causal_conv1d.h); the rest is the engine's batch-invariant GEMM, norms and
// attention.
TEST_F(NemotronH, EveryPositionBitIdenticalAcrossChunkSizesAndThreads) {
  test::expect_chunk_and_thread_invariance(*target_, 5);
}

TEST_F(NemotronH, DecodeStepEqualsSameTokenInsideVerifyBatch) {
  test::expect_decode_equals_verify_and_prefill(*target_, 6);
}

TEST_F(NemotronH, TrimThenDecodeEqualsPlainDecode) {
  test::expect_trim_replay_equals_plain_decode(*target_, 8);
}

TEST_F(NemotronH, TrimBeyondTheLastBatchIsRefusedAndTrimAllClears) {
  test::expect_trim_beyond_last_batch_refused(*target_, 9);
}

TEST_F(NemotronH, KvPredictionIsRefusedByName) {
  test::expect_kv_prediction_refused(*target_, 3);
}

// Kind arrays that disagree with the tensors are refused naming the arrays: layer 1 (an FFN
// block in the file) marked attention, and layer 3 (attention) marked recurrent. The same arrays
// as the file's load.
TEST_F(NemotronH, KindsThatDisagreeWithTheTensorsAreRefusedByKey) {
  const std::string hkv = "nemotron_h.attention.head_count_kv",
                    ff = "nemotron_h.feed_forward_length";
  const std::vector<std::vector<std::pair<std::string, GgufValue>>> cases = {
      {{hkv, GgufValue::of_i32_array({0, 2, 0, 2, 0, 0, 2, 0})},
       {ff, GgufValue::of_i32_array({0, 0, 0, 0, 352, 0, 0, 352})}},
      {{hkv, GgufValue::of_i32_array({0, 0, 0, 0, 0, 0, 2, 0})}}};
  for (const auto& keys : cases) {
    const std::string path = test::with_keys(paths_[0], dir_->file("bad.gguf"), keys);
    try {
      Model::load(path);
      ADD_FAILURE() << "accepted";
    } catch (const GgufError& e) {
      EXPECT_NE(std::string(e.what()).find(hkv), std::string::npos) << e.what();
    }
  }
  EXPECT_NO_THROW(
      Model::load(test::with_keys(paths_[0], dir_->file("ok.gguf"),
                                  {{hkv, GgufValue::of_i32_array({0, 0, 0, 2, 0, 0, 2, 0})}})));
}

// Sizes that disagree with the tensors: a state size the conv and in-projection do not have is
// refused naming the tensor whose shape it contradicts.
TEST_F(NemotronH, SsmSizesThatDisagreeWithTheTensorsAreRefused) {
  const std::string path = test::with_keys(paths_[0], dir_->file("bad-state.gguf"),
                                           {{"nemotron_h.ssm.state_size", GgufValue::of_u32(8)}});
  try {
    Model::load(path);
    ADD_FAILURE() << "accepted";
  } catch (const GgufError& e) {
    EXPECT_NE(std::string(e.what()).find("ssm_in.weight"), std::string::npos) << e.what();
  }
}

// tiny-nemotron-h-moe's target (sigmoid-routed relu^2 experts with a selection bias, normalised
// and scaled weights, a latent width, the shared expert) against the naive forward with the
// tolerance above (the experts add two GEMMs of width <= 128 per block), its batch invariance
// (chunkings, threads, decode inside a verify batch) and rollback by replay. The latent
// projections must come with moe_latent_size, and the reverse.
TEST(NemotronHMoe, MatchesNaiveDoubleForwardAndIsBatchInvariant) {
  test::TempDir dir;
  const auto paths =
      make_synthetic_family("tiny-nemotron-h-moe", dir.path().string(), 7, DType::F32);
  auto m = Model::load(paths[0]);
  const ModelConfig& c = m->config();
  EXPECT_EQ(c.arch, Arch::NemotronHMoe);
  EXPECT_EQ(c.n_expert, 8);
  EXPECT_EQ(c.n_ff_expert, 64);
  EXPECT_EQ(c.n_ff_shexp, 128);
  EXPECT_EQ(c.moe_latent, 64);
  EXPECT_TRUE(c.expert_weights_norm);
  EXPECT_EQ(c.expert_weights_scale, 2.5f);
  const auto toks = seeded_tokens(37, c.n_vocab, 3);
  EXPECT_TRUE(test::near_all(all_logits(*m, toks, 16), test::reference_forward(paths[0], toks),
                             1e-4, 1e-4));
  test::expect_chunk_and_thread_invariance(*m, 5);
  test::expect_decode_equals_verify_and_prefill(*m, 6);
  test::expect_trim_replay_equals_plain_decode(*m, 8);
  const std::string no_latent =
      test::with_keys(paths[0], dir.file("no-latent.gguf"),
                      {{"nemotron_h_moe.moe_latent_size", GgufValue::of_u32(0)}});
  try {
    Model::load(no_latent);
    ADD_FAILURE() << "accepted";
  } catch (const GgufError& e) {
    EXPECT_NE(std::string(e.what()).find("moe_latent_size"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace accel
