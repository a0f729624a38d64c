// RoPE scaling from GGUF files: the `{arch}.rope.scaling.*` keys and `rope.dimension_count` read
// into ModelConfig as llama.cpp reads them, the Llama 3 `rope_freqs.weight` tensor loaded and
// validated, and the file's RoPE reaching the kernel (checked through Model::store_pre_rope_kv
// against the independent reference in tests/support/rope_reference). The files are a tiny
// synthetic member rewritten with extra keys and tensors through GgufWriter. Tests only.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "models/gguf.h"
#include "models/model.h"
#include "models/model_config.h"
#include "models/synthetic.h"
#include "tests/support/rope_reference.h"
#include "tests/support/test_support.h"

namespace {

using namespace accel;

// llama: head_dim 16 (64 / 4 heads), 2 KV heads; qwen2 the same shape (HalfSplit, biases).
SyntheticMemberSpec tiny_spec(Arch arch) {
  SyntheticMemberSpec s;
  s.role = "t";
  s.arch = arch;
  s.n_layer = 1;
  s.n_embd = 64;
  s.n_head = 4;
  s.n_head_kv = 2;
  s.n_ff = 96;
  s.n_ctx = 4096;
  return s;
}

struct Extra {
  Extra() = default;
  Extra(std::vector<std::pair<std::string, GgufValue>> k, std::vector<float> f = {})
      : keys(std::move(k)), rope_freqs(std::move(f)) {}
  std::vector<std::pair<std::string, GgufValue>> keys;  // "{a}" is replaced by the architecture
  std::vector<float> rope_freqs;                        // written as rope_freqs.weight when set
};

// A tiny synthetic member with `extra` keys set (replacing existing ones) and tensors appended.
std::string write_variant(const test::TempDir& dir, const std::string& name, Arch arch,
                          const Extra& extra) {
  const std::string base = dir.file(name + ".base.gguf");
  write_synthetic_model(tiny_spec(arch), "ropetest", 7, DType::F32, base);
  const GgufFile in = GgufFile::open(base);
  GgufWriter w;
  for (const auto& [k, v] : in.metadata()) w.set(k, v);
  const std::string a = arch_name(arch);
  for (auto [k, v] : extra.keys) {
    if (k.rfind("{a}", 0) == 0) k = a + k.substr(3);
    w.set(k, v);
  }
  for (const GgufTensorInfo& t : in.tensors())
    w.add_tensor(t.name, t.dims, t.type, in.tensor_data(t), t.n_bytes);
  if (!extra.rope_freqs.empty())
    w.add_tensor("rope_freqs.weight", {extra.rope_freqs.size()}, DType::F32,
                 extra.rope_freqs.data(), extra.rope_freqs.size() * sizeof(float));
  const std::string out = dir.file(name + ".gguf");
  w.write(out);
  return out;
}

GgufValue f32(float v) {
  return GgufValue::of_f32(v);
}
GgufValue str(const std::string& v) {
  return GgufValue::of_string(v);
}
GgufValue u32(uint32_t v) {
  return GgufValue::of_u32(v);
}

TEST(RopeScalingConfig, ReadsScalingKeysAsLlamaCppDoes) {
  struct Case {
    std::string name;
    Extra extra;
    float freq_scale, ext_factor, attn_factor;
    int n_ctx_orig, n_rot;
  };
  const std::vector<Case> cases = {
      {"no keys", {}, 1.f, 0.f, 1.f, 0, 16},
      {"linear x4",
       {{{"{a}.rope.scaling.type", str("linear")}, {"{a}.rope.scaling.factor", f32(4)}}},
       0.25f,
       0.f,
       1.f,
       0,
       16},
      // llama.cpp's type defaults to linear: a factor alone scales.
      {"factor without type", {{{"{a}.rope.scaling.factor", f32(2)}}}, 0.5f, 0.f, 1.f, 0, 16},
      {"type none ignores factor",
       {{{"{a}.rope.scaling.type", str("none")}, {"{a}.rope.scaling.factor", f32(4)}}},
       1.f,
       0.f,
       1.f,
       0,
       16},
      {"legacy rope.scale_linear", {{{"{a}.rope.scale_linear", f32(8)}}}, 0.125f, 0.f, 1.f, 0, 16},
      {"factor 0 is no scaling", {{{"{a}.rope.scaling.factor", f32(0)}}}, 1.f, 0.f, 1.f, 0, 16},
      {"yarn x4 from 1024",
       {{{"{a}.rope.scaling.type", str("yarn")},
         {"{a}.rope.scaling.factor", f32(4)},
         {"{a}.rope.scaling.original_context_length", u32(1024)}}},
       0.25f,
       1.f,
       1.f,
       1024,
       16},
      {"yarn without original context uses the training context",
       {{{"{a}.rope.scaling.type", str("yarn")}, {"{a}.rope.scaling.factor", f32(2)}}},
       0.5f,
       1.f,
       1.f,
       4096,
       16},
      {"attn_factor with linear",
       {{{"{a}.rope.scaling.factor", f32(2)}, {"{a}.rope.scaling.attn_factor", f32(0.5f)}}},
       0.5f,
       0.f,
       0.5f,
       0,
       16},
      {"partial rotary 8 of 16", {{{"{a}.rope.dimension_count", u32(8)}}}, 1.f, 0.f, 1.f, 0, 8},
  };
  test::TempDir dir;
  for (Arch arch : {Arch::Llama, Arch::Qwen2}) {
    for (const Case& c : cases) {
      SCOPED_TRACE(std::string(arch_name(arch)) + ": " + c.name);
      const GgufFile f = GgufFile::open(write_variant(dir, "cfg", arch, c.extra));
      const RopeParams r = ModelConfig::from_gguf(f).rope;
      EXPECT_EQ(r.freq_scale, c.freq_scale);
      EXPECT_EQ(r.ext_factor, c.ext_factor);
      EXPECT_EQ(r.attn_factor, c.attn_factor);
      EXPECT_EQ(r.n_rot, c.n_rot);
      EXPECT_EQ(r.head_dim, 16);
      EXPECT_EQ(r.layout, arch == Arch::Llama ? RopeLayout::Adjacent : RopeLayout::HalfSplit);
      if (c.ext_factor != 0.f) {
        EXPECT_EQ(r.n_ctx_orig, c.n_ctx_orig);
        EXPECT_EQ(r.beta_fast, 32.f);  // llama.cpp's defaults for these architectures
        EXPECT_EQ(r.beta_slow, 1.f);
      }
    }
  }
}

TEST(RopeScalingConfig, RefusesUnsupportedScalingNamingFileAndKey) {
  struct Case {
    std::string name;
    Extra extra;
    std::string key_in_error;
  };
  const std::vector<Case> cases = {
      {"longrope", {{{"{a}.rope.scaling.type", str("longrope")}}}, "rope.scaling.type"},
      {"factor below 1", {{{"{a}.rope.scaling.factor", f32(0.5f)}}}, "rope.scaling.factor"},
      {"factor NaN", {{{"{a}.rope.scaling.factor", f32(std::nanf(""))}}}, "rope.scaling.factor"},
      {"attn_factor 0", {{{"{a}.rope.scaling.attn_factor", f32(0)}}}, "rope.scaling.attn_factor"},
      {"yarn log multiplier",
       {{{"{a}.rope.scaling.type", str("yarn")},
         {"{a}.rope.scaling.factor", f32(4)},
         {"{a}.rope.scaling.yarn_log_multiplier", f32(0.1f)}}},
       "yarn_log_multiplier"},
      {"yarn original context 0",
       {{{"{a}.rope.scaling.type", str("yarn")},
         {"{a}.rope.scaling.original_context_length", u32(0)}}},
       "original_context_length"},
      {"odd dimension_count", {{{"{a}.rope.dimension_count", u32(7)}}}, "rope.dimension_count"},
      {"dimension_count past head_dim",
       {{{"{a}.rope.dimension_count", u32(32)}}},
       "rope.dimension_count"},
  };
  test::TempDir dir;
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string path = write_variant(dir, "bad", Arch::Llama, c.extra);
    const GgufFile f = GgufFile::open(path);
    try {
      (void)ModelConfig::from_gguf(f);
      ADD_FAILURE() << "accepted";
    } catch (const GgufError& e) {
      EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(c.key_in_error), std::string::npos) << e.what();
    }
  }
}

// Llama 3.1-like factors for n_rot 16: 1 for the fast pairs, up to 8 for the slowest.
const std::vector<float> kFactors = {1, 1, 1, 1.5f, 2, 4, 8, 8};

TEST(RopeScalingModel, LoadsRopeFreqsTensorAndRefusesBadOnes) {
  test::TempDir dir;
  const auto m = Model::load(write_variant(dir, "freqs", Arch::Llama, {{}, kFactors}));
  EXPECT_EQ(m->config().rope.freq_factors, kFactors);
  const auto plain = Model::load(write_variant(dir, "plain", Arch::Llama, {}));
  EXPECT_TRUE(plain->config().rope.freq_factors.empty());

  const std::vector<std::pair<std::string, std::vector<float>>> bad = {
      {"wrong length", {1, 1, 1, 1}},
      {"zero factor", {1, 1, 1, 0, 1, 1, 1, 1}},
      {"negative factor", {1, 1, 1, -2, 1, 1, 1, 1}},
      {"infinite factor", {1, 1, 1, INFINITY, 1, 1, 1, 1}},
  };
  for (const auto& [name, factors] : bad) {
    SCOPED_TRACE(name);
    const std::string path = write_variant(dir, "badfreqs", Arch::Llama, {{}, factors});
    try {
      (void)Model::load(path);
      ADD_FAILURE() << "accepted";
    } catch (const GgufError& e) {
      EXPECT_NE(std::string(e.what()).find("rope_freqs.weight"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
    }
  }
}

// The file's RoPE as the forward pass applies it to K (store_pre_rope_kv runs the same kernel call
// on the same RopeParams as forward()), against the independent reference with the scaling the
// test states (not the one the loader produced). Tolerance as in the kernel test: 8u * m * max|k|.
TEST(RopeScalingModel, FileScalingReachesTheKernelLikeTheIndependentReference) {
  struct Case {
    std::string name;
    Arch arch;
    Extra extra;
    RopeParams want;  // head_dim 16; layout from the arch
  };
  auto params = [](int n_rot, float scale, float ext, int orig, std::vector<float> ff,
                   float attn = 1.f) {
    RopeParams p;
    p.head_dim = 16;
    p.n_rot = n_rot;
    p.freq_base = 10000.f;  // the synthetic members' base
    p.freq_scale = scale;
    p.ext_factor = ext;
    p.n_ctx_orig = orig;
    p.freq_factors = std::move(ff);
    p.attn_factor = attn;
    return p;
  };
  const std::vector<Case> cases = {
      {"plain", Arch::Llama, {}, params(16, 1, 0, 0, {})},
      {"linear x4",
       Arch::Llama,
       {{{"{a}.rope.scaling.type", str("linear")}, {"{a}.rope.scaling.factor", f32(4)}}},
       params(16, 0.25f, 0, 0, {})},
      {"yarn x8 from 512",
       Arch::Qwen2,
       {{{"{a}.rope.scaling.type", str("yarn")},
         {"{a}.rope.scaling.factor", f32(8)},
         {"{a}.rope.scaling.original_context_length", u32(512)}}},
       params(16, 0.125f, 1, 512, {})},
      {"yarn x4 attn 0.9, training context",
       Arch::Llama,
       {{{"{a}.rope.scaling.type", str("yarn")},
         {"{a}.rope.scaling.factor", f32(4)},
         {"{a}.rope.scaling.attn_factor", f32(0.9f)}}},
       params(16, 0.25f, 1, 4096, {}, 0.9f)},
      {"llama3 rope_freqs", Arch::Llama, {{}, kFactors}, params(16, 1, 0, 0, kFactors)},
      {"partial 8 of 16 adjacent",
       Arch::Llama,
       {{{"{a}.rope.dimension_count", u32(8)}}},
       params(8, 1, 0, 0, {})},
      {"partial 8 of 16 halfsplit + linear",
       Arch::Qwen2,
       {{{"{a}.rope.dimension_count", u32(8)}, {"{a}.rope.scaling.factor", f32(2)}}},
       params(8, 0.5f, 0, 0, {})},
      {"partial 8 of 16 + rope_freqs",
       Arch::Llama,
       {{{"{a}.rope.dimension_count", u32(8)}}, {1, 2, 4, 8}},
       params(8, 1, 0, 0, {1, 2, 4, 8})},
  };
  test::TempDir dir;
  const std::vector<int32_t> pos = {0, 1, 5, 100, 2047, 4095};
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    RopeParams want = c.want;
    want.layout = c.arch == Arch::Llama ? RopeLayout::Adjacent : RopeLayout::HalfSplit;
    const auto m = Model::load(write_variant(dir, "fwd", c.arch, c.extra));
    const ModelConfig& cfg = m->config();
    const size_t n = pos.size(), kvd = size_t(cfg.kv_dim());
    std::vector<float> k = test::random_normal(n * kvd, 9, 1.f);
    const std::vector<float> v = test::random_normal(n * kvd, 10, 1.f);
    std::vector<double> ref(k.begin(), k.end());
    for (size_t r = 0; r < n; ++r)
      for (int h = 0; h < cfg.n_head_kv; ++h) {
        std::vector<double> head(ref.begin() + long(r * kvd + size_t(h) * 16),
                                 ref.begin() + long(r * kvd + size_t(h) * 16 + 16));
        test::rope_reference_head(head, want, pos[r]);
        std::copy(head.begin(), head.end(), ref.begin() + long(r * kvd + size_t(h) * 16));
      }
    double max_k = 0;
    for (float x : k) max_k = std::max(max_k, double(std::fabs(x)));
    KVCache cache = m->make_cache();
    cache.stage(pos.data(), n);
    m->store_pre_rope_kv(0, 1, pos.data(), n, k.data(), v.data(), kvd, cache);
    EXPECT_TRUE(
        test::near_all(k, ref, 8 * 0x1p-24 * test::rope_attention_factor(want) * max_k, 0.0));
  }
}

// Scaling reaches the logits: a token at position 0 is unaffected by any scaling without an
// attention factor (angle 0), one at a later position is not; and a scaled model's logits are
// bit-identical whether the prompt runs as one batch or token by token (batch invariance).
TEST(RopeScalingModel, ScaledLogitsAreBatchInvariantAndDifferFromPlainPastPositionZero) {
  test::TempDir dir;
  const auto plain = Model::load(write_variant(dir, "p", Arch::Llama, {}));
  const auto scaled = Model::load(write_variant(
      dir, "s", Arch::Llama,
      {{{"{a}.rope.scaling.type", str("linear")}, {"{a}.rope.scaling.factor", f32(4)}}, kFactors}));
  const std::vector<int32_t> toks = {3, 70, 120, 9, 200}, pos = {0, 1, 2, 3, 4};
  const std::vector<int32_t> rows = {0, 1, 2, 3, 4};
  auto run = [&](const Model& m) {
    KVCache c = m.make_cache();
    return m.forward(toks, pos, c, rows);
  };
  const std::vector<float> a = run(*plain), b = run(*scaled);
  const size_t V = size_t(plain->config().n_vocab);
  EXPECT_TRUE(test::bit_equal(std::span(a).first(V), std::span(b).first(V)));
  EXPECT_FALSE(test::bit_equal(std::span(a).subspan(V, V), std::span(b).subspan(V, V)));
  KVCache c = scaled->make_cache();
  for (size_t i = 0; i < toks.size(); ++i) {
    const std::vector<int32_t> row0 = {0};
    const std::vector<float> one =
        scaled->forward(std::span(toks).subspan(i, 1), std::span(pos).subspan(i, 1), c, row0);
    EXPECT_TRUE(test::bit_equal(one, std::span(b).subspan(i * V, V))) << "token " << i;
  }
}

}  // namespace
