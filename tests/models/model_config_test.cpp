// ModelConfig from GGUF metadata: {arch}.attention.scale read, validated and reported; the
// synthetic members' configurations as computed without a file agree with what their files say.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

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

}  // namespace
}  // namespace accel
