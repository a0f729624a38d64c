// `accelbench kvcalc` end to end: the seed's Llama-3.1-70B figures in the table and the JSON, a
// GGUF header and a synthetic member sized alike, budgets, and bad input refused naming the flag
// or file with a non-zero exit.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

#include "models/synthetic.h"
#include "tests/support/test_support.h"

namespace accel {
namespace {

TEST(KvcalcCli, Llama31_70BTableShowsTheSeedsFigures) {
  std::string out;
  ASSERT_EQ(test::run_cli("kvcalc --config llama-3.1-70b --context 131072", &out), 0) << out;
  EXPECT_NE(out.find("| f16 | 4096 | 327680 | 42949672960 | 42.95 | 40.00 |"), std::string::npos)
      << out;
  EXPECT_NE(out.find("| int4 | 1280 | 102400 | 13421772800 | 13.42 | 12.50 |"), std::string::npos)
      << out;
  EXPECT_NE(out.find("| f32 | 8192 | 655360 | 85899345920 | 85.90 | 80.00 |"), std::string::npos)
      << out;
  EXPECT_NE(out.find("attention scale 0.0883883"), std::string::npos) << out;
  EXPECT_EQ(out.find("longest context"), std::string::npos) << "no budget, no column: " << out;
}

TEST(KvcalcCli, JsonWithBudget) {
  std::string out;
  ASSERT_EQ(test::run_cli("kvcalc --config llama-3.1-70b --context 131072 --kv-dtype f16 "
                          "--kv-dtype int4 --budget 64GiB --json",
                          &out),
            0)
      << out;
  const auto j = nlohmann::json::parse(out);
  EXPECT_EQ(j["context"], 131072);
  EXPECT_EQ(j["budget_bytes"], 64ull << 30);
  EXPECT_EQ(j["config"]["n_layer"], 80);
  ASSERT_EQ(j["kv_dtypes"].size(), 2u);
  const auto& f16 = j["kv_dtypes"][0];
  EXPECT_EQ(f16["kv_dtype"], "f16");
  EXPECT_EQ(f16["bytes_per_token_per_layer"][0], 4096);
  EXPECT_EQ(f16["bytes_per_token"], 327680);
  EXPECT_EQ(f16["cache_bytes"], 42949672960ull);
  EXPECT_DOUBLE_EQ(f16["cache_gib"].get<double>(), 40.0);
  EXPECT_EQ(f16["max_context"], 209715);
  EXPECT_EQ(f16["max_context_exceeds_model"], true);
  const auto& int4 = j["kv_dtypes"][1];
  EXPECT_EQ(int4["cache_bytes"], 13421772800ull);
  EXPECT_DOUBLE_EQ(int4["cache_gib"].get<double>(), 12.5);
  EXPECT_EQ(int4["max_context"], 671088);
}

// A model file and its family/role name give the same sizes; the file's attention.scale shows.
TEST(KvcalcCli, GgufHeaderAndSyntheticMemberAgree) {
  test::TempDir dir;
  SyntheticMemberSpec spec = find_synthetic_family("tiny").members.at(0);
  spec.attn_scale = 1.f;
  const std::string path = dir.file("t.gguf");
  write_synthetic_model(spec, "tiny", 0, DType::F32, path);
  std::string from_file, from_name;
  ASSERT_EQ(
      test::run_cli("kvcalc --model " + path + " --context 4096 --budget 1MiB --json", &from_file),
      0)
      << from_file;
  ASSERT_EQ(
      test::run_cli("kvcalc --config tiny/target --context 4096 --budget 1MiB --json", &from_name),
      0)
      << from_name;
  const auto a = nlohmann::json::parse(from_file), b = nlohmann::json::parse(from_name);
  EXPECT_EQ(a["kv_dtypes"], b["kv_dtypes"]);
  EXPECT_EQ(a["config"]["groups"], b["config"]["groups"]);
  EXPECT_EQ(a["config"]["attn_scale"], 1.0);
  EXPECT_EQ(b["config"]["attn_scale"].get<float>(), float(1.0 / std::sqrt(32.0)));
  // tiny/target: 4 layers x 2 KV heads x 32 -> f16 256 B per layer, 1 KiB per token.
  EXPECT_EQ(a["kv_dtypes"][1]["kv_dtype"], "f16");
  EXPECT_EQ(a["kv_dtypes"][1]["bytes_per_token"], 1024);
  EXPECT_EQ(a["kv_dtypes"][1]["max_context"], 1024);
}

TEST(KvcalcCli, BadInputIsRefusedNamingTheFlagOrFile) {
  test::TempDir dir;
  std::ofstream(dir.file("junk.gguf")) << "not a gguf";
  struct Case {
    std::string args, needle;
  };
  const Case cases[] = {
      {"--config nope --context 8", "nope"},
      {"--config small/nope --context 8", "nope"},
      {"--config llama-3.1-70b --context 8 --kv-dtype int3", "--kv-dtype"},
      {"--config llama-3.1-70b --context 0", "--context"},
      {"--config llama-3.1-70b --context -5", "--context"},
      {"--config llama-3.1-70b --context lots", "--context"},
      {"--config llama-3.1-70b --context 8 --budget 12XB", "--budget"},
      {"--config llama-3.1-70b --context 8 --budget 0", "--budget"},
      {"--config llama-3.1-70b --context 8 --budget -1GiB", "--budget"},
      {"--config llama-3.1-70b", "--context"},
      {"--context 8", "--config"},
      {"--config llama-3.1-70b --model x.gguf --context 8", "--model"},
      {"--model " + dir.file("missing.gguf") + " --context 8", "missing.gguf"},
      {"--model " + dir.file("junk.gguf") + " --context 8", "junk.gguf"},
  };
  for (const Case& c : cases) {
    std::string out;
    EXPECT_NE(test::run_cli("kvcalc " + c.args, &out), 0) << c.args << "\n" << out;
    EXPECT_NE(out.find(c.needle), std::string::npos) << c.args << "\n" << out;
  }
}

// What `generate --json` reports as kv_bytes after a prompt of n tokens (--max-tokens 1: n
// entries), and kvcalc's JSON for the same file, context and storage type.
struct KvFigures {
  uint64_t generate_kv_bytes = 0;
  nlohmann::json kvcalc;
};

KvFigures kv_figures(const std::string& model, int n, const std::string& kv) {
  std::string gen, calc;
  const std::string at = " --kv-dtype " + kv + " --json";
  EXPECT_EQ(test::run_cli("generate --model " + model + " --random-prompt " + std::to_string(n) +
                              " --seed 3 --max-tokens 1" + at,
                          &gen),
            0)
      << gen;
  EXPECT_EQ(
      test::run_cli("kvcalc --model " + model + " --context " + std::to_string(n) + at, &calc), 0)
      << calc;
  return {nlohmann::json::parse(gen)["kv_bytes"].get<uint64_t>(), nlohmann::json::parse(calc)};
}

// Sliding-window families: the kv_bytes `generate --json` reports after a prompt of N tokens
// equals kvcalc's engine_kv_bytes byte for byte, for f32 and int4 rows, and the growth from 600
// to 2000 tokens is the full layers' rows and the positions only: the sliding layers (window 32)
// hold the same bytes at both lengths.
TEST(KvcalcCli, GenerateKvBytesEqualKvcalcOnSlidingFamilies) {
  test::TempDir dir;
  for (const char* family : {"tiny-gemma3", "tiny-gemma4", "tiny-gpt-oss"}) {
    const std::string model = make_synthetic_family(family, dir.file(family), 3, DType::F32)[0];
    for (const char* kv : {"f32", "int4"}) {
      SCOPED_TRACE(std::string(family) + " " + kv);
      uint64_t got[2] = {0, 0}, full_rows[2] = {0, 0};
      for (int i = 0; i < 2; ++i) {
        const int n = i == 0 ? 600 : 2000;
        const KvFigures f = kv_figures(model, n, kv);
        const nlohmann::json& c = f.kvcalc;
        got[i] = f.generate_kv_bytes;
        for (size_t g = 0; g < c["config"]["groups"].size(); ++g)
          if (c["config"]["groups"][g]["window"] == 0)
            full_rows[i] = uint64_t(n) * c["config"]["groups"][g]["n_layer"].get<uint64_t>() *
                           c["kv_dtypes"][0]["bytes_per_token_per_layer"][g].get<uint64_t>();
        EXPECT_EQ(got[i], c["kv_dtypes"][0]["engine_kv_bytes"].get<uint64_t>());
      }
      EXPECT_EQ(got[1] - got[0], full_rows[1] - full_rows[0] + 4 * (2000 - 600));
    }
  }
}

// Hybrid families: the same equality with the recurrent layers' fixed state inside both figures,
// and growth from 300 to 1000 tokens that is the attention layers' rows and the positions only
// (the state does not grow with the context).
TEST(KvcalcCli, GenerateKvBytesEqualKvcalcOnHybridFamilies) {
  test::TempDir dir;
  for (const char* family : {"tiny-qwen35", "tiny-qwen35-moe", "tiny-qwen3next", "tiny-nemotron-h",
                             "tiny-nemotron-h-moe"}) {
    const std::string model = make_synthetic_family(family, dir.file(family), 3, DType::F32)[0];
    for (const char* kv : {"f32", "int4"}) {
      SCOPED_TRACE(std::string(family) + " " + kv);
      uint64_t got[2] = {0, 0}, rows[2] = {0, 0}, state[2] = {0, 0};
      for (int i = 0; i < 2; ++i) {
        const int n = i == 0 ? 300 : 1000;
        const KvFigures f = kv_figures(model, n, kv);
        const nlohmann::json& c = f.kvcalc;
        got[i] = f.generate_kv_bytes;
        rows[i] = uint64_t(n) * c["kv_dtypes"][0]["bytes_per_token"].get<uint64_t>();
        state[i] = c["config"]["recurrent_state_bytes"].get<uint64_t>();
        EXPECT_EQ(got[i], c["kv_dtypes"][0]["engine_kv_bytes"].get<uint64_t>());
        EXPECT_EQ(c["kv_dtypes"][0]["cache_bytes"].get<uint64_t>(), rows[i] + state[i]);
      }
      EXPECT_GT(state[0], 0u);
      EXPECT_EQ(state[0], state[1]);
      EXPECT_EQ(got[1] - got[0], rows[1] - rows[0] + 4 * (1000 - 300));
    }
  }
}

}  // namespace
}  // namespace accel
