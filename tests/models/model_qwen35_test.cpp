// The qwen35 hybrid forward pass (models/model.cpp: gated attention and Gated DeltaNet layers,
// recurrent state in the cache): against the naive double forward, batch invariance of every
// kind of call (prefill chunkings, threads, a token alone or inside a verify batch), and the
// cache's rollback of recurrent layers by checkpoint + replay, bit for bit against plain decoding.
#include <gtest/gtest.h>

#include <cmath>

#include "kernels/threading.h"
#include "models/generation.h"
#include "models/gguf.h"
#include "models/model.h"
#include "models/synthetic.h"
#include "tests/support/prefill_logits.h"
#include "tests/support/reference_forward.h"
#include "tests/support/test_support.h"

namespace accel {
namespace {

using test::seeded_tokens;

using test::all_logits;

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
  for (const auto& path : paths_) {
    auto m = Model::load(path);
    const auto toks = seeded_tokens(37, m->config().n_vocab, 3);
    EXPECT_TRUE(
        test::near_all(all_logits(*m, toks, 16), test::reference_forward(path, toks), 1e-4, 1e-4))
        << path;
  }
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
  const auto toks = seeded_tokens(24, target_->config().n_vocab, 4);
  std::vector<int32_t> pos;
  for (int32_t i = 0; i < 24; ++i) pos.push_back(i * 2 + (i % 2));  // 0, 3, 4, 7, 8, ...
  KVCache cache = target_->make_cache();
  std::vector<float> got;
  prefill(*target_, toks, pos, cache, 7, &got);
  EXPECT_TRUE(test::near_all(got, test::reference_forward(paths_[0], toks, pos), 1e-4, 1e-4));
}

// Batch invariance (ARCHITECTURE.md invariant 1) holds bit for bit on qwen35: the recurrent
// kernels scan in token order on every path (kernels/gated_delta_rule.h), the conv is per token,
// and the rest are the engine's batch-invariant GEMM, norms and attention.
TEST_F(Qwen35, EveryPositionBitIdenticalAcrossChunkSizesAndThreads) {
  const auto toks = seeded_tokens(300, target_->config().n_vocab, 5);
  const int saved = num_threads();
  set_num_threads(1);
  const auto whole = all_logits(*target_, toks, 300);
  for (int threads : {1, 2}) {
    set_num_threads(threads);
    for (size_t chunk : {1, 13, 64, 300}) {
      SCOPED_TRACE(std::to_string(threads) + " threads, chunk " + std::to_string(chunk));
      EXPECT_TRUE(test::bit_equal(all_logits(*target_, toks, chunk), whole));
    }
  }
  set_num_threads(saved);
}

// A token decoded alone equals the same token inside a verify batch (several new tokens after a
// prefix), and inside the whole prefill.
TEST_F(Qwen35, DecodeStepEqualsSameTokenInsideVerifyBatch) {
  const size_t V = size_t(target_->config().n_vocab), n = 120, k = 9;
  const auto toks = seeded_tokens(n + k, target_->config().n_vocab, 6);
  const auto whole = all_logits(*target_, toks, 64);
  KVCache batch = target_->make_cache(), single = target_->make_cache();
  prefill(*target_, std::span(toks).first(n), iota_positions(0, n), batch, 64);
  prefill(*target_, std::span(toks).first(n), iota_positions(0, n), single, 64);
  std::vector<int32_t> rows(k);
  for (size_t i = 0; i < k; ++i) rows[i] = int32_t(i);
  const auto pos = iota_positions(int32_t(n), k);
  const auto verify = target_->forward(std::span(toks).subspan(n, k), pos, batch, rows);
  for (size_t i = 0; i < k; ++i) {
    const int32_t row = 0;
    const auto step = target_->forward({&toks[n + i], 1}, {&pos[i], 1}, single, {&row, 1});
    EXPECT_TRUE(test::bit_equal(step, std::span(verify).subspan(i * V, V))) << "token " << i;
    EXPECT_TRUE(test::bit_equal(step, std::span(whole).subspan((n + i) * V, V))) << "token " << i;
  }
}

// The recurrent states of two caches, bit for bit (conv window and scan state of every layer).
::testing::AssertionResult same_states(const KVCache& a, const KVCache& b, int n_layer) {
  for (int l = 0; l < n_layer; ++l) {
    if (!a.is_recurrent(l)) continue;
    const RecurrentState &x = a.recurrent_state(l), &y = b.recurrent_state(l);
    const RecurrentStateShape& s = x.shape();
    const size_t conv = size_t(s.d_conv - 1) * size_t(s.conv_channels);
    if (x.tokens() != y.tokens())
      return ::testing::AssertionFailure()
             << "layer " << l << " tokens " << x.tokens() << " vs " << y.tokens();
    auto r = test::bit_equal({x.conv_window(), conv}, {y.conv_window(), conv});
    if (r)
      r = test::bit_equal({x.scan_state(), s.scan_elements}, {y.scan_state(), s.scan_elements});
    if (!r) return r << " (layer " << l << ")";
  }
  return ::testing::AssertionSuccess();
}

// PLD's verify step on a hybrid: feed y and a k-token draft, keep j + 1 of them (trim), then go
// on decoding. Rolled back + replayed, the recurrent states and every later logit equal plain
// decoding's bit for bit, for every j (all rejected .. all accepted) and twice in a row.
TEST_F(Qwen35, TrimThenDecodeEqualsPlainDecode) {
  const int n_layer = target_->config().n_layer;
  const size_t n = 80, k = 6, after = 5;
  const auto toks = seeded_tokens(n + k + after, target_->config().n_vocab, 8);
  // Plain decoding of every token after the prefix, one at a time.
  KVCache plain = target_->make_cache();
  prefill(*target_, std::span(toks).first(n), iota_positions(0, n), plain, 32);
  std::vector<std::vector<float>> plain_logits;
  const int32_t row0 = 0;
  for (size_t t = n; t < toks.size(); ++t) {
    const int32_t pos = int32_t(t);
    plain_logits.push_back(target_->forward({&toks[t], 1}, {&pos, 1}, plain, {&row0, 1}));
  }
  for (size_t keep = 1; keep <= k + 1; ++keep) {
    SCOPED_TRACE("keep " + std::to_string(keep));
    KVCache c = target_->make_cache(), ref = target_->make_cache();
    prefill(*target_, std::span(toks).first(n), iota_positions(0, n), c, 32);
    prefill(*target_, std::span(toks).first(n + keep), iota_positions(0, n + keep), ref, 32);
    // A verify batch of k + 1 tokens, trimmed to `keep` twice (the second trim replays again).
    const auto pos = iota_positions(int32_t(n), k + 1);
    target_->forward(std::span(toks).subspan(n, k + 1), pos, c, {});
    const size_t first = std::min(keep + 1, k + 1);
    c.trim(k + 1 - first);
    c.trim(first - keep);
    ASSERT_EQ(c.size(), n + keep);
    // The replayed state is the state of prefilling exactly the kept tokens.
    EXPECT_TRUE(same_states(c, ref, n_layer));
    for (size_t t = n + keep; t < toks.size(); ++t) {
      const int32_t p = int32_t(t);
      const auto got = target_->forward({&toks[t], 1}, {&p, 1}, c, {&row0, 1});
      ASSERT_TRUE(test::bit_equal(got, plain_logits[t - n])) << "token " << t;
    }
  }
}

// Recurrent layers roll back only within the last batch (the replay's inputs); further back is
// refused without changing the cache, and trimming everything clears the states.
TEST_F(Qwen35, TrimBeyondTheLastBatchIsRefusedAndTrimAllClears) {
  const auto toks = seeded_tokens(40, target_->config().n_vocab, 9);
  KVCache c = target_->make_cache();
  prefill(*target_, toks, iota_positions(0, 40), c, 16);  // batches of 16, 16, 8
  EXPECT_THROW(c.trim(9), std::logic_error);
  EXPECT_EQ(c.size(), 40u);
  EXPECT_EQ(c.recurrent_state(0).tokens(), 40u);
  EXPECT_NO_THROW(c.trim(8));
  EXPECT_EQ(c.recurrent_state(2).tokens(), 32u);
  c.trim(100);
  EXPECT_EQ(c.size(), 0u);
  EXPECT_EQ(c.recurrent_state(0).tokens(), 0u);
  // After clearing, a fresh prefill gives the fresh cache's logits.
  std::vector<float> again;
  prefill(*target_, toks, iota_positions(0, 40), c, 40, &again);
  EXPECT_TRUE(test::bit_equal(again, all_logits(*target_, toks, 40)));
}

TEST_F(Qwen35, KvPredictionIsRefusedByName) {
  KVCache c = target_->make_cache();
  std::vector<float> k(64), v(64);
  const int32_t pos = 0;
  try {
    target_->store_pre_rope_kv(1, 1, &pos, 1, k.data(), v.data(), 64, c);
    ADD_FAILURE() << "accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("qwen35"), std::string::npos) << e.what();
  }
}

// Copies a file with some metadata keys replaced (tensors unchanged).
std::string with_keys(const std::string& src, const std::string& dst,
                      const std::vector<std::pair<std::string, GgufValue>>& keys) {
  const GgufFile f = GgufFile::open(src);
  GgufWriter w;
  for (const auto& [k, v] : f.metadata()) w.set(k, v);
  for (const auto& [k, v] : keys) w.set(k, v);
  for (const auto& t : f.tensors())
    w.add_tensor(t.name, t.dims, t.type, f.tensor_data(t), size_t(t.n_bytes));
  w.write(dst);
  return dst;
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
