// The qwen35 hybrid forward pass (models/model.cpp: gated attention and Gated DeltaNet layers,
// recurrent state in the cache): against the naive double forward, batch invariance of every
// kind of call (prefill chunkings, threads, a token alone or inside a verify batch), and the
// cache's rollback of recurrent layers by checkpoint + replay, bit for bit against plain decoding.
#include <gtest/gtest.h>

#include <cmath>

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

using test::seeded_tokens;

using test::all_logits;
using test::same_states;
using test::with_keys;

// The tiny-qwen35 pair (f32, seed 11) made and loaded once for the tests that only read it.
class Qwen35 : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new test::TempDir();
    paths_ = make_synthetic_family("tiny-qwen35", dir_->path().string(), 11, DType::F32);
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

TEST_F(Qwen35, LayerKindsAndCacheFollowTheFile) {
  const ModelConfig& c = target_->config();
  EXPECT_EQ(c.arch, Arch::Qwen35);
  EXPECT_EQ(c.recurrent_layers, (std::vector<uint8_t>{1, 0, 1, 0}));
  KVCache cache = target_->make_cache();
  EXPECT_TRUE(cache.is_recurrent(0) && !cache.is_recurrent(1));
  // Fixed state: 2 layers x (3 conv rows x 256 channels + 4 heads x 32 x 32) floats.
  const size_t state = 2 * (3 * 256 + 4 * 32 * 32) * sizeof(float);
  EXPECT_EQ(cache.recurrent_bytes(), state);
  EXPECT_EQ(cache.bytes(), state);
  const auto toks = seeded_tokens(10, c.n_vocab, 1);
  prefill(*target_, toks, iota_positions(0, 10), cache, 4);
  // Attention entries grow with the context (2 attention layers of 2 KV heads x 32, K and V, f32,
  // plus a position); the state does not.
  EXPECT_EQ(cache.bytes(), state + 10 * (2 * 2 * 2 * 32 * 4 + 4));
  EXPECT_EQ(cache.recurrent_state(0).tokens(), 10u);
}

// Tolerance as ForwardVsReference (model_test.cpp): f32 over <= 4 layers of width <= 352 loses
// ~1e-6 relative per op, so 1e-4 absolute + 1e-4 relative leaves > 10x margin; a wrong head map,
// gate, norm or RoPE span moves logits by > 1e-2 (the llama.cpp comparison shows 1.8 for a wrong
// head map). The recurrence over 37 tokens adds ~37 rounding steps per state row, still ~1e-5.
TEST_F(Qwen35, BothMembersMatchNaiveDoubleForward) {
  test::expect_members_match_reference(paths_);
}

// tiny-qwen35-moe's target (routed experts plus the gated shared expert) against the naive
// forward with the same tolerance and reasoning, and its batch invariance (chunkings, a decode
// step inside the whole prefill).
TEST(Qwen35Moe, MatchesNaiveDoubleForwardAndIsBatchInvariant) {
  test::TempDir dir;
  const auto paths = make_synthetic_family("tiny-qwen35-moe", dir.path().string(), 7, DType::F32);
  auto m = Model::load(paths[0]);
  EXPECT_EQ(m->config().arch, Arch::Qwen35Moe);
  EXPECT_EQ(m->config().n_ff_shexp, 128);
  const auto toks = seeded_tokens(37, m->config().n_vocab, 3);
  const auto got = all_logits(*m, toks, 16);
  EXPECT_TRUE(test::near_all(got, test::reference_forward(paths[0], toks), 1e-4, 1e-4));
  for (size_t chunk : {1, 5, 37}) EXPECT_TRUE(test::bit_equal(all_logits(*m, toks, chunk), got));
}

// A sparse prefill (kept tokens at their original positions): attention layers mask by position
// and recurrent layers consume only the kept tokens, in order, on both sides.
TEST_F(Qwen35, SparsePositionsMatchNaiveDoubleForward) {
  test::expect_sparse_positions_match_reference(*target_, paths_[0], 4);
}

// Batch invariance (ARCHITECTURE.md invariant 1) holds bit for bit on qwen35: the recurrent
// kernels scan in token order on every path (kernels/gated_delta_rule.h), the conv is per token,
// and the rest are the engine's batch-invariant GEMM, norms and attention.
TEST_F(Qwen35, EveryPositionBitIdenticalAcrossChunkSizesAndThreads) {
  test::expect_chunk_and_thread_invariance(*target_, 5);
}

// A token decoded alone equals the same token inside a verify batch (several new tokens after a
// prefix), and inside the whole prefill.
TEST_F(Qwen35, DecodeStepEqualsSameTokenInsideVerifyBatch) {
  test::expect_decode_equals_verify_and_prefill(*target_, 6);
}

// PLD's verify step on a hybrid: rolled back + replayed, the recurrent states and every later
// logit equal plain decoding's bit for bit (hybrid_checks.h).
TEST_F(Qwen35, TrimThenDecodeEqualsPlainDecode) {
  test::expect_trim_replay_equals_plain_decode(*target_, 8);
}

// Recurrent layers roll back only within the last batch (the replay's inputs); further back is
// refused without changing the cache, and trimming everything clears the states.
TEST_F(Qwen35, TrimBeyondTheLastBatchIsRefusedAndTrimAllClears) {
  test::expect_trim_beyond_last_batch_refused(*target_, 9);
}

// greedy_decode stages its steps without rollback checkpoints: its tokens and the states it
// leaves equal checkpointed decoding's bit for bit, trim() of such a step is refused by name, the
// caller's setting is back afterwards, and the next batch it stages can be trimmed again.
TEST_F(Qwen35, GreedyDecodeSkipsCheckpointsAndTrimRefusesItsSteps) {
  const Model& m = *target_;
  const std::vector<int32_t> prompt = seeded_tokens(40, m.config().n_vocab, 5);
  std::vector<int32_t> pos(prompt.size());
  for (size_t i = 0; i < pos.size(); ++i) pos[i] = int32_t(i);
  KVCache a = m.make_cache(), b = m.make_cache();
  const std::vector<float> la = prefill(m, prompt, pos, a, 16), lb = prefill(m, prompt, pos, b, 16);
  DecodeOptions opt;
  opt.max_tokens = 6;
  const std::vector<int32_t> got = greedy_decode(m, a, la, int32_t(prompt.size()), opt);
  EXPECT_TRUE(a.rollback_checkpoints());
  // The same steps by hand, each staged with its checkpoint.
  std::vector<int32_t> want = {argmax(lb)};
  const int32_t row0 = 0;
  for (int i = 1; i < opt.max_tokens; ++i) {
    const int32_t t = want.back(), p = int32_t(prompt.size()) + i - 1;
    want.push_back(argmax(m.forward({&t, 1}, {&p, 1}, b, {&row0, 1})));
  }
  EXPECT_EQ(got, want);
  EXPECT_TRUE(same_states(a, b, m.config().n_layer));
  try {
    a.trim(1);
    ADD_FAILURE() << "trim of an uncheckpointed step accepted";
  } catch (const std::logic_error& e) {
    EXPECT_NE(std::string(e.what()).find("set_rollback_checkpoints"), std::string::npos)
        << e.what();
  }
  // A checkpointed batch of two tokens: trimming one of them works on both caches alike.
  const int32_t two[2] = {want.back(), 7}, at[2] = {int32_t(a.size()), int32_t(a.size()) + 1};
  m.forward(two, at, a, {&row0, 1});
  m.forward(two, at, b, {&row0, 1});
  a.trim(1);
  b.trim(1);
  EXPECT_TRUE(same_states(a, b, m.config().n_layer));
}

TEST_F(Qwen35, KvPredictionIsRefusedByName) {
  test::expect_kv_prediction_refused(*target_, 1);
}

// Layer-kind markers that disagree with the tensors are refused naming the marker key: an
// interval that makes layer 1 recurrent, and per-layer flags that make layer 0 attend.
TEST_F(Qwen35, MarkersThatDisagreeWithTheTensorsAreRefusedByKey) {
  GgufValue flags;
  flags.type = GgufType::ARRAY;
  flags.elem = GgufType::BOOL;
  flags.arr_u = {0, 0, 1, 0};
  const std::vector<std::pair<std::string, GgufValue>> cases = {
      {"qwen35.full_attention_interval", GgufValue::of_u32(4)},
      {"qwen35.attention.recurrent_layers", flags}};
  for (const auto& [key, value] : cases) {
    const std::string path = with_keys(paths_[0], dir_->file("bad.gguf"), {{key, value}});
    try {
      Model::load(path);
      ADD_FAILURE() << key << " accepted";
    } catch (const GgufError& e) {
      EXPECT_NE(std::string(e.what()).find(key), std::string::npos) << e.what();
    }
  }
  // The same flags as the interval gives load.
  flags.arr_u = {1, 0, 1, 0};
  EXPECT_NO_THROW(Model::load(
      with_keys(paths_[0], dir_->file("ok.gguf"), {{"qwen35.attention.recurrent_layers", flags}})));
}

}  // namespace
}  // namespace accel
