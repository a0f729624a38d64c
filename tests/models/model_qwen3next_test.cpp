// qwen3next (Qwen3-Next) through the hybrid forward pass (models/model_hybrid.cpp): the naive
// double forward with its interleaved key heads and ssm_ba layout, batch invariance, decode
// against a verify batch, the legacy ssm_in layout against the new one bit for bit, and hostile
// files refused by key or tensor name.
#include <gtest/gtest.h>

#include <cstring>

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

// The tiny-qwen3next pair (f32, seed 5) made and its target loaded once.
class Qwen3Next : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new test::TempDir();
    paths_ = make_synthetic_family("tiny-qwen3next", dir_->path().string(), 5, DType::F32);
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

// The file's legacy form: every recurrent layer's attn_qkv and attn_gate re-laid, whole rows, into
// one ssm_in holding per key-head group g [q_g | k_g | v_g | z_g] (llama.cpp qwen3next.cpp's
// build_qkvz, legacy path), in the file's own types.
std::string legacy_copy(const std::string& src, const std::string& dst) {
  const GgufFile f = GgufFile::open(src);
  const ModelConfig c = ModelConfig::from_gguf(f);
  const size_t nk = size_t(c.ssm_n_group), nv = size_t(c.ssm_dt_rank), dk = size_t(c.ssm_d_state);
  const size_t dv = size_t(c.ssm_d_inner) / nv, r = nv / nk, Kd = nk * dk;
  std::vector<std::string> drop;
  std::vector<test::TensorBytes> add;
  for (int l = 0; l < c.n_layer; ++l) {
    if (!is_recurrent_layer(c, l)) continue;
    const std::string p = "blk." + std::to_string(l) + ".";
    const GgufTensorInfo& qkv = *f.find_tensor(p + "attn_qkv.weight");
    const GgufTensorInfo& z = *f.find_tensor(p + "attn_gate.weight");
    EXPECT_EQ(qkv.type, z.type);
    const size_t rb = size_t(qkv.n_bytes / qkv.dims[1]);
    auto rows = [&](const GgufTensorInfo& t, size_t first, size_t n, std::vector<uint8_t>& out) {
      const uint8_t* b = f.tensor_data(t) + first * rb;
      out.insert(out.end(), b, b + n * rb);
    };
    test::TensorBytes in{p + "ssm_in.weight", {qkv.dims[0], 2 * Kd + 2 * nv * dv}, qkv.type, {}};
    for (size_t g = 0; g < nk; ++g) {
      rows(qkv, g * dk, dk, in.bytes);
      rows(qkv, Kd + g * dk, dk, in.bytes);
      rows(qkv, 2 * Kd + g * r * dv, r * dv, in.bytes);
      rows(z, g * r * dv, r * dv, in.bytes);
    }
    drop.push_back(qkv.name);
    drop.push_back(z.name);
    add.push_back(std::move(in));
  }
  return test::with_tensors(src, dst, drop, add);
}

// Loading `path` throws GgufError whose message contains every string in `want`.
void expect_refused(const std::string& path, const std::vector<std::string>& want) {
  try {
    Model::load(path);
    ADD_FAILURE() << path << " accepted";
  } catch (const GgufError& e) {
    for (const std::string& w : want)
      EXPECT_NE(std::string(e.what()).find(w), std::string::npos) << e.what();
  }
}

TEST_F(Qwen3Next, ConfigIsQwen35MoesWithPlainNeoxRope) {
  const ModelConfig& c = target_->config();
  EXPECT_EQ(c.arch, Arch::Qwen3Next);
  EXPECT_EQ(c.recurrent_layers, (std::vector<uint8_t>{1, 0, 1, 0}));
  EXPECT_TRUE(c.rope_sections.empty());  // the file has no rope.dimension_sections
  EXPECT_EQ(c.rope.n_rot, 16);
  EXPECT_EQ(c.n_expert, 8);
  EXPECT_EQ(c.n_ff_shexp, 128);
  EXPECT_EQ(c.ssm_dt_rank / c.ssm_n_group, 2);  // two value heads per key head: the map matters
}

// Tolerance as Qwen35.BothMembersMatchNaiveDoubleForward (model_qwen35_test.cpp): f32 over 4
// layers of width <= 256 loses ~1e-6 relative per op and the 37-step recurrence ~1e-5, so 1e-4
// absolute + 1e-4 relative leaves > 10x margin, while a wrong head map or beta/alpha order moves
// logits by > 1e-2. The reference reads key head h / 2 and ssm_ba's groups by index
// (reference_forward.cpp), not through the engine's row order.
TEST_F(Qwen3Next, BothMembersMatchNaiveDoubleForward) {
  test::expect_members_match_reference(paths_);
}

TEST_F(Qwen3Next, SparsePositionsMatchNaiveDoubleForward) {
  test::expect_sparse_positions_match_reference(*target_, paths_[0], 4);
}

TEST_F(Qwen3Next, EveryPositionBitIdenticalAcrossChunkSizesAndThreads) {
  test::expect_chunk_and_thread_invariance(*target_, 5);
}

TEST_F(Qwen3Next, DecodeStepEqualsSameTokenInsideVerifyBatch) {
  test::expect_decode_equals_verify_and_prefill(*target_, 6);
}

TEST_F(Qwen3Next, TrimThenDecodeEqualsPlainDecode) {
  test::expect_trim_replay_equals_plain_decode(*target_, 8);
}

// The legacy ssm_in file holds the same rows in another order; the loader re-lays them into the
// same packed GEMM, so every logit is bit-identical to the new layout's, in f32 and in q8_0
// (whole quantized rows move unchanged). The naive forward reads the legacy layout by its own
// indexing and agrees within the tolerance above.
TEST_F(Qwen3Next, LegacySsmInFileGivesBitIdenticalLogits) {
  for (DType t : {DType::F32, DType::Q8_0}) {
    SCOPED_TRACE(dtype_name(t));
    const std::string dir = dir_->file("legacy-" + std::string(dtype_name(t)));
    const std::string src = make_synthetic_family("tiny-qwen3next", dir, 5, t)[0];
    const std::string legacy = legacy_copy(src, dir + "/legacy.gguf");
    const GgufFile lf = GgufFile::open(legacy);
    ASSERT_NE(lf.find_tensor("blk.0.ssm_in.weight"), nullptr);
    ASSERT_EQ(lf.find_tensor("blk.0.attn_qkv.weight"), nullptr);
    const auto toks = seeded_tokens(40, target_->config().n_vocab, 9);
    const auto want = all_logits(*Model::load(src), toks, 40);
    const auto got = all_logits(*Model::load(legacy), toks, 40);
    EXPECT_TRUE(test::bit_equal(got, want));
    if (t == DType::F32) {
      EXPECT_TRUE(test::near_all(got, test::reference_forward(legacy, toks), 1e-4, 1e-4));
    }
  }
}

TEST_F(Qwen3Next, ZeroExpertsAreRefusedByKey) {
  expect_refused(test::with_keys(paths_[0], dir_->file("e0.gguf"),
                                 {{"qwen3next.expert_count", GgufValue::of_u32(0)}}),
                 {"qwen3next.expert_count"});
}

// ssm_ba must be [n_embd, 2 * value heads]: one value head's worth too few is refused naming it.
TEST_F(Qwen3Next, SsmBaOfTheWrongShapeIsRefusedByName) {
  const ModelConfig& c = target_->config();
  const uint64_t E = uint64_t(c.n_embd), rows = 2 * uint64_t(c.ssm_dt_rank) - 1;
  test::TensorBytes ba{"blk.0.ssm_ba.weight",
                       {E, rows},
                       DType::F32,
                       std::vector<uint8_t>(E * rows * sizeof(float), 0)};
  expect_refused(test::with_tensors(paths_[0], dir_->file("ba.gguf"), {ba.name}, {ba}),
                 {"blk.0.ssm_ba.weight", "shape"});
}

// Exactly one in-projection form per layer: ssm_in beside attn_qkv, or neither, is refused
// naming ssm_in.
TEST_F(Qwen3Next, BothOrNeitherInProjectionIsRefusedByName) {
  const std::string legacy = legacy_copy(paths_[0], dir_->file("legacy.gguf"));
  const GgufFile lf = GgufFile::open(legacy);
  const GgufTensorInfo& in = *lf.find_tensor("blk.2.ssm_in.weight");
  const uint8_t* b = lf.tensor_data(in);
  test::TensorBytes both{in.name, in.dims, in.type, std::vector<uint8_t>(b, b + in.n_bytes)};
  expect_refused(test::with_tensors(paths_[0], dir_->file("both.gguf"), {}, {both}),
                 {"blk.2.ssm_in.weight", "attn_qkv"});
  expect_refused(test::with_tensors(paths_[0], dir_->file("neither.gguf"),
                                    {"blk.0.attn_qkv.weight", "blk.0.attn_gate.weight"}, {}),
                 {"blk.0.ssm_in.weight", "missing"});
}

}  // namespace
}  // namespace accel
