// ModelConfig from GGUF metadata: {arch}.attention.scale read, validated and reported; the
// synthetic members' configurations as computed without a file agree with what their files say.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <tuple>

#include "models/gguf.h"
#include "models/model_config.h"
#include "models/synthetic.h"
#include "tests/support/test_support.h"

namespace accel {
namespace {

// The tiny family's target (head_dim 32) with the given scale, written as metadata only (no
// tensors: ModelConfig reads metadata only).
std::string write_tiny_header(const test::TempDir& dir, std::optional<float> scale,
                              const std::string& name) {
  SyntheticMemberSpec spec = find_synthetic_family("tiny").members.at(0);
  spec.attn_scale = scale;
  GgufWriter w;
  set_synthetic_metadata(w, spec, "tiny", 0, DType::F32);
  const std::string path = dir.file(name);
  w.write(path);
  return path;
}

TEST(AttentionScale, AbsentMeansOneOverSqrtHeadDimAndStaysOutOfTheJson) {
  test::TempDir dir;
  const std::string path = write_tiny_header(dir, std::nullopt, "plain.gguf");
  const ModelConfig c = ModelConfig::from_gguf(GgufFile::open(path));
  EXPECT_EQ(c.attn_scale, 0.f);
  EXPECT_EQ(attention_scale(c), float(1.0 / std::sqrt(32.0)));
  // Store keys hash this object: files without the key must give the object they always gave.
  EXPECT_FALSE(config_json(c).contains("attn_scale")) << config_json(c).dump();
  EXPECT_EQ(config_json(c).size(), 12u) << config_json(c).dump();
}

TEST(AttentionScale, ReadBackAsWritten) {
  test::TempDir dir;
  for (const float scale : {1.0f, 0.0625f, 3.5f}) {
    const std::string path = write_tiny_header(dir, scale, "s.gguf");
    const GgufFile f = GgufFile::open(path);
    ASSERT_TRUE(f.has("llama.attention.scale"));
    EXPECT_EQ(f.find("llama.attention.scale")->type, GgufType::FLOAT32);
    const ModelConfig c = ModelConfig::from_gguf(f);
    EXPECT_EQ(c.attn_scale, scale);
    EXPECT_EQ(attention_scale(c), scale);
    EXPECT_EQ(config_json(c).at("attn_scale").get<float>(), scale);
  }
}

TEST(AttentionScale, BadValuesAreRefusedNamingFileAndKey) {
  test::TempDir dir;
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  for (const float bad : {0.f, -0.f, -1.f, nan, inf, -inf}) {
    const std::string path = write_tiny_header(dir, bad, "bad.gguf");
    try {
      ModelConfig::from_gguf(GgufFile::open(path));
      ADD_FAILURE() << "attention.scale " << bad << " accepted";
    } catch (const GgufError& e) {
      const std::string msg = e.what();
      EXPECT_NE(msg.find(path), std::string::npos) << msg;
      EXPECT_NE(msg.find("llama.attention.scale"), std::string::npos) << msg;
    }
  }
  // Wrong type (an integer) and a float64 beyond float's range are refused the same way.
  for (const GgufValue& v : {GgufValue::of_u32(1), [] {
                               GgufValue d;
                               d.type = GgufType::FLOAT64;
                               d.f = 1e300;
                               return d;
                             }()}) {
    GgufWriter w;
    set_synthetic_metadata(w, find_synthetic_family("tiny").members.at(0), "tiny", 0, DType::F32);
    w.set("llama.attention.scale", v);
    const std::string path = dir.file("typed.gguf");
    w.write(path);
    try {
      ModelConfig::from_gguf(GgufFile::open(path));
      ADD_FAILURE() << "attention.scale of type " << gguf_type_name(v.type) << " accepted";
    } catch (const GgufError& e) {
      EXPECT_NE(std::string(e.what()).find("llama.attention.scale"), std::string::npos) << e.what();
    }
  }
}

// ---- sliding-window architectures (per-layer attention kinds) -----------------------------------

// Minimal metadata of a sliding-window architecture: 12 layers, n_embd 256, 8 heads of 32, 4 KV
// heads, plus `extra` keys (replacing defaults). Metadata only: ModelConfig reads nothing else.
std::string write_swa_header(const test::TempDir& dir, const std::string& arch,
                             const std::vector<std::pair<std::string, GgufValue>>& extra) {
  GgufWriter w;
  const std::string a = arch + ".";
  w.set("general.architecture", GgufValue::of_string(arch));
  w.set(a + "context_length", GgufValue::of_u32(4096));
  w.set(a + "embedding_length", GgufValue::of_u32(256));
  w.set(a + "block_count", GgufValue::of_u32(12));
  w.set(a + "feed_forward_length", GgufValue::of_u32(512));
  w.set(a + "attention.head_count", GgufValue::of_u32(8));
  w.set(a + "attention.head_count_kv", GgufValue::of_u32(4));
  w.set(a + "attention.layer_norm_rms_epsilon", GgufValue::of_f32(1e-6f));
  w.set(a + "rope.freq_base", GgufValue::of_f32(1e6f));
  if (arch != "gemma3") w.set(a + "attention.sliding_window", GgufValue::of_u32(128));
  if (arch == "gemma4") {
    w.set(a + "attention.key_length_swa", GgufValue::of_u32(32));
    w.set(a + "attention.value_length_swa", GgufValue::of_u32(32));
    w.set(a + "embedding_length_per_layer_input", GgufValue::of_u32(0));
    GgufValue flags;
    flags.type = GgufType::ARRAY;
    flags.elem = GgufType::BOOL;
    for (int il = 0; il < 12; ++il) flags.arr_u.push_back(il % 6 != 5);
    w.set(a + "attention.sliding_window_pattern", flags);
  }
  for (const auto& [k, v] : extra) w.set(k, v);
  const std::string path = dir.file(arch + ".gguf");
  w.write(path);
  return path;
}

std::vector<int> sliding_of(const ModelConfig& c) {
  std::vector<int> out;
  for (int il = 0; il < c.n_layer; ++il) out.push_back(layer_attention(c, il).sliding);
  return out;
}

// The layer patterns llama.cpp 3f545bec's loaders give: gemma3 without the window key has no
// sliding layer; with it, period 6 by default (il % 6 < 5 slides); gpt-oss period 2 (even layers
// slide); gemma4 one flag per layer. Sliding layers take the window, RoPE base (gemma default
// 10000, gpt-oss the full base) and head size of their kind.
TEST(SlidingWindowConfig, PatternsAndPerKindValuesAsLlamaCppReadsThem) {
  test::TempDir dir;
  {
    const ModelConfig c =
        ModelConfig::from_gguf(GgufFile::open(write_swa_header(dir, "gemma3", {})));
    EXPECT_EQ(c.n_swa, 0);
    EXPECT_FALSE(has_sliding_layers(c));
    EXPECT_EQ(layer_attention(c, 3).window, 0);
    EXPECT_FLOAT_EQ(attention_scale(c), float(1.0 / std::sqrt(32.0)));
  }
  {
    const ModelConfig c = ModelConfig::from_gguf(GgufFile::open(write_swa_header(
        dir, "gemma3", {{"gemma3.attention.sliding_window", GgufValue::of_u32(512)}})));
    EXPECT_EQ(c.n_swa, 512);
    EXPECT_EQ(sliding_of(c), (std::vector<int>{1, 1, 1, 1, 1, 0, 1, 1, 1, 1, 1, 0}));
    EXPECT_EQ(layer_attention(c, 0).window, 512);
    EXPECT_EQ(layer_attention(c, 5).window, 0);
    EXPECT_EQ(layer_attention(c, 0).rope_base, 10000.f);
    EXPECT_EQ(layer_attention(c, 5).rope_base, 1e6f);
    EXPECT_TRUE(c.qk_norm);
    EXPECT_EQ(config_json(c).at("n_swa"), 512);
  }
  {
    const ModelConfig c = ModelConfig::from_gguf(GgufFile::open(
        write_swa_header(dir, "gemma3",
                         {{"gemma3.attention.sliding_window", GgufValue::of_u32(64)},
                          {"gemma3.attention.sliding_window_pattern", GgufValue::of_u32(3)},
                          {"gemma3.rope.freq_base_swa", GgufValue::of_f32(5000.f)},
                          {"gemma3.final_logit_softcapping", GgufValue::of_f32(30.f)}})));
    EXPECT_EQ(sliding_of(c), (std::vector<int>{1, 1, 0, 1, 1, 0, 1, 1, 0, 1, 1, 0}));
    EXPECT_EQ(layer_attention(c, 0).rope_base, 5000.f);
    EXPECT_EQ(c.final_softcap, 30.f);
  }
  {
    const ModelConfig c =
        ModelConfig::from_gguf(GgufFile::open(write_swa_header(dir, "gpt-oss", {})));
    EXPECT_EQ(sliding_of(c), (std::vector<int>{1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0}));
    EXPECT_EQ(layer_attention(c, 0).rope_base, 1e6f);
    EXPECT_TRUE(c.attn_sinks);
    EXPECT_TRUE(c.qkv_bias);
    EXPECT_EQ(config_json(c).at("attn_sinks"), true);
  }
  {
    GgufValue kv;
    kv.type = GgufType::ARRAY;
    kv.elem = GgufType::UINT32;
    for (int il = 0; il < 12; ++il) kv.arr_u.push_back(il % 6 == 5 ? 2 : 4);
    const ModelConfig c = ModelConfig::from_gguf(GgufFile::open(
        write_swa_header(dir, "gemma4",
                         {{"gemma4.attention.key_length", GgufValue::of_u32(64)},
                          {"gemma4.attention.value_length", GgufValue::of_u32(64)},
                          {"gemma4.attention.head_count_kv", kv},
                          {"gemma4.final_logit_softcapping", GgufValue::of_f32(30.f)}})));
    EXPECT_EQ(sliding_of(c), (std::vector<int>{1, 1, 1, 1, 1, 0, 1, 1, 1, 1, 1, 0}));
    EXPECT_EQ(attention_scale(c), 1.f);
    const LayerAttention s = layer_attention(c, 0), g = layer_attention(c, 5);
    EXPECT_EQ(s.head_dim, 32);
    EXPECT_EQ(g.head_dim, 64);
    EXPECT_EQ(s.n_head_kv, 4);
    EXPECT_EQ(g.n_head_kv, 2);
    EXPECT_EQ(s.n_rot, 32);
    EXPECT_EQ(g.n_rot, 64);
    EXPECT_EQ(s.window, 128);
    EXPECT_EQ(c.final_softcap, 30.f);
  }
}

// The refusals name the key: a window of 0, a period longer than the layer count, a per-layer
// array of the wrong length, KV heads that do not divide the query heads, an odd sliding head
// size, a sliding RoPE dimension count beyond the head, and Gemma 4 features not implemented.
TEST(SlidingWindowConfig, BadKeysAreRefusedNamingTheKey) {
  test::TempDir dir;
  GgufValue short_flags;
  short_flags.type = GgufType::ARRAY;
  short_flags.elem = GgufType::BOOL;
  short_flags.arr_u = {1, 1, 0};
  GgufValue kv3;
  kv3.type = GgufType::ARRAY;
  kv3.elem = GgufType::UINT32;
  kv3.arr_u.assign(12, 3);
  struct Bad {
    std::string arch, key;
    GgufValue value;
  };
  const std::vector<Bad> cases = {
      {"gemma3", "gemma3.attention.sliding_window", GgufValue::of_u32(0)},
      {"gpt-oss", "gpt-oss.attention.sliding_window", GgufValue::of_u32(0)},
      {"gemma4", "gemma4.attention.sliding_window", GgufValue::of_u32(0)},
      {"gpt-oss", "gpt-oss.attention.sliding_window_pattern", GgufValue::of_u32(13)},
      {"gemma4", "gemma4.attention.sliding_window_pattern", short_flags},
      {"gemma4", "gemma4.attention.head_count_kv", kv3},
      {"gemma4", "gemma4.attention.key_length_swa", GgufValue::of_u32(33)},
      {"gpt-oss", "gpt-oss.rope.dimension_count_swa", GgufValue::of_u32(64)},
      {"gemma4", "gemma4.embedding_length_per_layer_input", GgufValue::of_u32(256)},
      {"gemma4", "gemma4.attention.shared_kv_layers", GgufValue::of_u32(2)},
      {"gpt-oss", "gpt-oss.rope.freq_base_swa", GgufValue::of_f32(0.5f)},
  };
  for (const Bad& b : cases) {
    std::vector<std::pair<std::string, GgufValue>> extra = {{b.key, b.value}};
    if (b.arch == "gemma3" && b.key != "gemma3.attention.sliding_window")
      extra.insert(extra.begin(), {"gemma3.attention.sliding_window", GgufValue::of_u32(64)});
    const std::string path = write_swa_header(dir, b.arch, extra);
    try {
      ModelConfig::from_gguf(GgufFile::open(path));
      ADD_FAILURE() << b.key << " accepted";
    } catch (const GgufError& e) {
      EXPECT_NE(std::string(e.what()).find(b.key), std::string::npos) << b.key << ": " << e.what();
    }
  }
  // A required key that is missing is named too.
  for (const std::string& arch : {std::string("gpt-oss"), std::string("gemma4")}) {
    GgufWriter w;
    const std::string path = write_swa_header(dir, arch, {});
    const GgufFile f = GgufFile::open(path);
    for (const auto& [k, v] : f.metadata())
      if (k != arch + ".attention.sliding_window") w.set(k, v);
    w.write(dir.file("missing.gguf"));
    try {
      ModelConfig::from_gguf(GgufFile::open(dir.file("missing.gguf")));
      ADD_FAILURE() << arch << " without a window accepted";
    } catch (const GgufError& e) {
      EXPECT_NE(std::string(e.what()).find(arch + ".attention.sliding_window"), std::string::npos)
          << e.what();
    }
  }
}

// synthetic_member_config (what kvcalc sizes `family/role` from) against the file's metadata, for
// every member of every family, with and without a scale.
TEST(SyntheticMemberConfig, MatchesWhatItsFileSays) {
  test::TempDir dir;
  for (const auto& fam : synthetic_families()) {
    for (SyntheticMemberSpec m : fam.members) {
      for (const std::optional<float> scale : {std::optional<float>{}, std::optional<float>{1.f}}) {
        m.attn_scale = scale;
        GgufWriter w;
        set_synthetic_metadata(w, m, fam.name, 3, DType::F16);
        const std::string path = dir.file(fam.name + "-" + m.role + ".gguf");
        w.write(path);
        const ModelConfig want = ModelConfig::from_gguf(GgufFile::open(path));
        const ModelConfig got = synthetic_member_config(m);
        const std::string at = fam.name + "/" + m.role;
        EXPECT_EQ(config_json(got), config_json(want)) << at;
        EXPECT_EQ(attention_scale(got), attention_scale(want)) << at;
        EXPECT_EQ(got.arch, want.arch) << at;
        EXPECT_EQ(got.rms_eps, want.rms_eps) << at;
        EXPECT_EQ(got.rope.n_rot, want.rope.n_rot) << at;
        EXPECT_EQ(got.rope.freq_base, want.rope.freq_base) << at;
        EXPECT_EQ(got.rope.layout, want.rope.layout) << at;
        EXPECT_EQ(got.qkv_bias, want.qkv_bias) << at;
        EXPECT_EQ(got.qk_norm, want.qk_norm) << at;
      }
    }
  }
}

// ---- hybrid architectures (qwen35) --------------------------------------------------------------

// A family's target metadata with `keys` replaced and the keys in `drop` left out. Metadata only.
std::string write_target_header(const test::TempDir& dir, const std::string& family,
                                const std::vector<std::pair<std::string, GgufValue>>& keys,
                                const std::vector<std::string>& drop = {}) {
  GgufWriter full;
  set_synthetic_metadata(full, find_synthetic_family(family).members.at(0), family, 0, DType::F32);
  const std::string tmp = dir.file("full.gguf");
  full.write(tmp);
  const GgufFile f = GgufFile::open(tmp);
  GgufWriter w;
  for (const auto& [k, v] : f.metadata())
    if (std::find(drop.begin(), drop.end(), k) == drop.end()) w.set(k, v);
  for (const auto& [k, v] : keys) w.set(k, v);
  const std::string path = dir.file("header.gguf");
  w.write(path);
  return path;
}

std::string write_qwen35_header(const test::TempDir& dir,
                                const std::vector<std::pair<std::string, GgufValue>>& keys,
                                const std::vector<std::string>& drop = {}) {
  return write_target_header(dir, "tiny-qwen35", keys, drop);
}

GgufValue int_array(GgufType elem, std::vector<uint64_t> v) {
  GgufValue a;
  a.type = GgufType::ARRAY;
  a.elem = elem;
  a.arr_u = std::move(v);
  return a;
}

// The layer kinds as llama_model_qwen35::load_arch_hparams gives them: per-layer flags when the
// file has attention.recurrent_layers, else (il + 1) % full_attention_interval != 0 with a
// default interval of 4; NextN blocks are not counted as layers.
TEST(HybridConfig, LayerKindsAsLlamaCppReadsThem) {
  test::TempDir dir;
  const std::string fi = "qwen35.full_attention_interval";
  auto kinds = [&](const std::vector<std::pair<std::string, GgufValue>>& keys,
                   const std::vector<std::string>& drop = {}) {
    return ModelConfig::from_gguf(GgufFile::open(write_qwen35_header(dir, keys, drop)))
        .recurrent_layers;
  };
  using K = std::vector<uint8_t>;
  EXPECT_EQ(kinds({}), (K{1, 0, 1, 0}));
  EXPECT_EQ(kinds({}, {fi}), (K{1, 1, 1, 0}));
  EXPECT_EQ(kinds({{fi, GgufValue::of_u32(1)}}), (K{0, 0, 0, 0}));
  EXPECT_EQ(kinds({{"qwen35.attention.recurrent_layers", int_array(GgufType::BOOL, {0, 1, 1, 0})}}),
            (K{0, 1, 1, 0}));
  const ModelConfig c = ModelConfig::from_gguf(GgufFile::open(
      write_qwen35_header(dir, {{"qwen35.block_count", GgufValue::of_u32(5)},
                                {"qwen35.nextn_predict_layers", GgufValue::of_u32(1)}})));
  EXPECT_EQ(c.n_layer, 4);
  EXPECT_EQ(c.n_layer_nextn, 1);
  EXPECT_EQ(c.rope_sections, (std::vector<int>{3, 3, 2, 0}));
  EXPECT_EQ(c.rope.n_rot, 16);
  const DeltaLayerDims d = delta_layer_dims(c);
  EXPECT_EQ(d.conv_channels(), 2u * 2 * 32 + 4 * 32);
}

// Hostile hybrid metadata is refused naming the key: a state size of 0, key heads (group count)
// that do not divide the value heads, an inner size that is not heads x state, an interval of 0
// (llama.cpp would divide by it), flags of the wrong length or marking a NextN block recurrent,
// and M-RoPE sections that leave a rotated pair at the vision position or exceed the head.
TEST(HybridConfig, BadKeysAreRefusedNamingTheKey) {
  test::TempDir dir;
  const std::vector<std::pair<std::string, GgufValue>> cases = {
      {"qwen35.ssm.state_size", GgufValue::of_u32(0)},
      {"qwen35.ssm.group_count", GgufValue::of_u32(3)},
      {"qwen35.ssm.group_count", GgufValue::of_u32(0)},
      {"qwen35.ssm.inner_size", GgufValue::of_u32(100)},
      {"qwen35.ssm.conv_kernel", GgufValue::of_u32(0)},
      {"qwen35.full_attention_interval", GgufValue::of_u32(0)},
      {"qwen35.attention.recurrent_layers", int_array(GgufType::BOOL, {1, 0, 1})},
      {"qwen35.nextn_predict_layers", GgufValue::of_u32(4)},
      {"qwen35.rope.dimension_sections", GgufValue::of_i32_array({3, 1, 2, 0})},
      {"qwen35.rope.dimension_sections", GgufValue::of_i32_array({30, 3, 2, 0})},
      {"qwen35.rope.dimension_sections", GgufValue::of_u32(3)},
  };
  for (const auto& [key, value] : cases) {
    try {
      ModelConfig::from_gguf(GgufFile::open(write_qwen35_header(dir, {{key, value}})));
      ADD_FAILURE() << key << " = " << value.u << " accepted";
    } catch (const GgufError& e) {
      EXPECT_NE(std::string(e.what()).find(key), std::string::npos) << key << ": " << e.what();
    }
  }
  // A NextN block flagged recurrent.
  try {
    ModelConfig::from_gguf(GgufFile::open(write_qwen35_header(
        dir, {{"qwen35.block_count", GgufValue::of_u32(5)},
              {"qwen35.nextn_predict_layers", GgufValue::of_u32(1)},
              {"qwen35.attention.recurrent_layers", int_array(GgufType::BOOL, {1, 0, 1, 0, 1})}})));
    ADD_FAILURE() << "recurrent NextN block accepted";
  } catch (const GgufError& e) {
    EXPECT_NE(std::string(e.what()).find("qwen35.attention.recurrent_layers"), std::string::npos)
        << e.what();
  }
  // Missing required keys are named.
  for (const std::string key : {"qwen35.ssm.state_size", "qwen35.rope.dimension_sections"}) {
    try {
      ModelConfig::from_gguf(GgufFile::open(write_qwen35_header(dir, {}, {key})));
      ADD_FAILURE() << key << " missing accepted";
    } catch (const GgufError& e) {
      EXPECT_NE(std::string(e.what()).find(key), std::string::npos) << key << ": " << e.what();
    }
  }
}

// ---- nemotron_h --------------------------------------------------------------------------------

// The block kinds as llama_model_nemotron_h::load_arch_hparams gives them from the per-layer
// arrays: recurrent iff head_count_kv and feed_forward_length are both 0, attention iff only
// feed_forward_length is 0, else FFN-only; the Mamba-2 sizes as build_mamba2_layer derives them.
TEST(NemotronHConfig, LayerKindsAsLlamaCppReadsThem) {
  test::TempDir dir;
  const ModelConfig c =
      ModelConfig::from_gguf(GgufFile::open(write_target_header(dir, "tiny-nemotron-h", {})));
  EXPECT_EQ(c.arch, Arch::NemotronH);
  EXPECT_EQ(c.recurrent_layers, (std::vector<uint8_t>{1, 0, 1, 0, 0, 1, 0, 0}));
  EXPECT_EQ(c.ffn_layers, (std::vector<uint8_t>{0, 1, 0, 0, 1, 0, 0, 1}));
  for (int il : {3, 6}) EXPECT_TRUE(is_attention_layer(c, il)) << il;
  EXPECT_FALSE(is_attention_layer(c, 1));
  EXPECT_EQ(c.n_head_kv, 2);
  EXPECT_EQ(c.n_ff, 352);
  const Mamba2LayerDims d = mamba2_layer_dims(c);
  EXPECT_EQ(d.head_dim, 32);
  EXPECT_EQ(d.conv_channels(), 256u + 2 * 2 * 16);
  EXPECT_EQ(d.in_proj(), 256u + 320 + 8);
  EXPECT_EQ(config_json(c).at("ffn_layers").size(), 8u);
}

// Hostile nemotron_h metadata is refused naming the key: a state size of 0, heads that do not
// divide the inner size (also an inner size the heads do not divide), groups that do not divide
// the heads, kind arrays of the wrong length, an FFN block that states KV heads, attention layers
// with different KV head counts or one that does not divide the query heads, FFN blocks of
// different widths, experts (nemotron_h_moe's), and missing kind arrays.
TEST(NemotronHConfig, BadKeysAreRefusedNamingTheKey) {
  test::TempDir dir;
  const std::string a = "nemotron_h.", hkv = a + "attention.head_count_kv",
                    ff = a + "feed_forward_length";
  using I = std::vector<int32_t>;
  const std::vector<std::tuple<std::string, GgufValue, std::string>> cases = {
      {a + "ssm.state_size", GgufValue::of_u32(0), a + "ssm.state_size"},
      {a + "ssm.time_step_rank", GgufValue::of_u32(7), a + "ssm.time_step_rank"},
      {a + "ssm.inner_size", GgufValue::of_u32(100), a + "ssm.time_step_rank"},
      {a + "ssm.group_count", GgufValue::of_u32(3), a + "ssm.group_count"},
      {a + "ssm.group_count", GgufValue::of_u32(0), a + "ssm.group_count"},
      {a + "ssm.conv_kernel", GgufValue::of_u32(0), a + "ssm.conv_kernel"},
      {hkv, GgufValue::of_i32_array(I{0, 0, 0, 2, 0, 0, 2}), hkv},
      {ff, GgufValue::of_i32_array(I{0, 352, 0, 0, 352, 0, 0, 352, 0}), ff},
      {hkv, GgufValue::of_i32_array(I{0, 2, 0, 2, 0, 0, 2, 0}), hkv},
      {hkv, GgufValue::of_i32_array(I{0, 0, 0, 2, 0, 0, 4, 0}), hkv},
      {hkv, GgufValue::of_i32_array(I{0, 0, 0, 3, 0, 0, 3, 0}), hkv},
      {ff, GgufValue::of_i32_array(I{0, 352, 0, 0, 176, 0, 0, 352}), ff},
      {ff, GgufValue::of_i32_array(I{0, -1, 0, 0, 352, 0, 0, 352}), ff},
      {a + "expert_count", GgufValue::of_u32(4), a + "expert_count"},
      {a + "nextn_predict_layers", GgufValue::of_u32(8), a + "nextn_predict_layers"},
  };
  for (const auto& [key, value, named] : cases) {
    try {
      ModelConfig::from_gguf(
          GgufFile::open(write_target_header(dir, "tiny-nemotron-h", {{key, value}})));
      ADD_FAILURE() << key << " accepted";
    } catch (const GgufError& e) {
      EXPECT_NE(std::string(e.what()).find(named), std::string::npos) << key << ": " << e.what();
    }
  }
  for (const std::string& key : {hkv, ff, a + "ssm.state_size", a + "ssm.group_count"}) {
    try {
      ModelConfig::from_gguf(
          GgufFile::open(write_target_header(dir, "tiny-nemotron-h", {}, {key})));
      ADD_FAILURE() << key << " missing accepted";
    } catch (const GgufError& e) {
      EXPECT_NE(std::string(e.what()).find(key), std::string::npos) << key << ": " << e.what();
    }
  }
}

// nemotron_h_moe's expert keys: read as written (norm flag, scale, latent width, widths), and
// refused by key when the shared expert's width is missing, the norm flag is not a bool, the
// scale is negative, expert groups are asked for, or the expert counts are out of range.
TEST(NemotronHConfig, MoeKeysReadAndRefusedByKey) {
  test::TempDir dir;
  const ModelConfig c =
      ModelConfig::from_gguf(GgufFile::open(write_target_header(dir, "tiny-nemotron-h-moe", {})));
  EXPECT_EQ(c.arch, Arch::NemotronHMoe);
  EXPECT_EQ(c.ffn_layers, (std::vector<uint8_t>{0, 1, 0, 0, 1, 0, 0, 1}));
  EXPECT_EQ(c.n_ff_expert, 64);
  EXPECT_EQ(c.n_ff_shexp, 128);
  EXPECT_EQ(c.moe_latent, 64);
  EXPECT_TRUE(c.expert_weights_norm);
  EXPECT_EQ(c.expert_weights_scale, 2.5f);
  const std::string a = "nemotron_h_moe.";
  const std::vector<std::pair<std::string, GgufValue>> cases = {
      {a + "expert_weights_norm", GgufValue::of_u32(1)},
      {a + "expert_weights_scale", GgufValue::of_f32(-1.f)},
      {a + "expert_group_count", GgufValue::of_u32(2)},
      {a + "expert_count", GgufValue::of_u32(0)},
      {a + "expert_used_count", GgufValue::of_u32(9)},
  };
  for (const auto& [key, value] : cases) {
    try {
      ModelConfig::from_gguf(
          GgufFile::open(write_target_header(dir, "tiny-nemotron-h-moe", {{key, value}})));
      ADD_FAILURE() << key << " accepted";
    } catch (const GgufError& e) {
      EXPECT_NE(std::string(e.what()).find(key), std::string::npos) << key << ": " << e.what();
    }
  }
  const std::string shk = a + "expert_shared_feed_forward_length";
  try {
    ModelConfig::from_gguf(
        GgufFile::open(write_target_header(dir, "tiny-nemotron-h-moe", {}, {shk})));
    ADD_FAILURE() << shk << " missing accepted";
  } catch (const GgufError& e) {
    EXPECT_NE(std::string(e.what()).find(shk), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace accel
