// End-to-end tests of the engine commands through the real `accelbench` binary: models make, info,
// generate (text, random and empty prompts, JSON, logits output) and their error paths.
#include <gtest/gtest.h>

#include <filesystem>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "tests/support/test_support.h"

namespace accel {
namespace {

std::string slurp(const std::string& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class CliEngine : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new test::TempDir();
    std::string out;
    ASSERT_EQ(test::run_cli("models make --family tiny --out " + dir_->file("tiny"), &out), 0)
        << out;
    target_ = dir_->file("tiny/target.gguf");
  }
  static void TearDownTestSuite() { delete dir_; }
  static inline test::TempDir* dir_ = nullptr;
  static inline std::string target_;
};

TEST_F(CliEngine, ModelsMakePrintsPathsAndIsDeterministic) {
  std::string out;
  ASSERT_EQ(test::run_cli("models make --family tiny --out " + dir_->file("again"), &out), 0);
  EXPECT_NE(out.find(dir_->file("again/target.gguf")), std::string::npos) << out;
  EXPECT_NE(out.find(dir_->file("again/draft.gguf")), std::string::npos) << out;
  EXPECT_EQ(slurp(dir_->file("again/target.gguf")), slurp(target_));
}

TEST_F(CliEngine, InfoJson) {
  std::string out;
  ASSERT_EQ(test::run_cli("info --json " + target_, &out), 0) << out;
  const auto j = nlohmann::json::parse(out);
  EXPECT_EQ(j["architecture"], "llama");
  EXPECT_EQ(j["n_layer"], 4);
  EXPECT_EQ(j["n_vocab"], 258);
  EXPECT_GT(j["n_params"].get<uint64_t>(), 500000u);
  EXPECT_EQ(j["tokenizer"]["model"], "gpt2");
}

TEST_F(CliEngine, GenerateJsonHasTokensTextAndTimings) {
  std::string out;
  ASSERT_EQ(test::run_cli("generate --model " + target_ + " --prompt 'Hello' --max-tokens 5 --json",
                          &out),
            0)
      << out;
  const auto j = nlohmann::json::parse(out);
  // Byte-level tokenizer: BOS + 5 bytes.
  EXPECT_EQ(j["prompt_tokens"], nlohmann::json({256, 'H', 'e', 'l', 'l', 'o'}));
  EXPECT_LE(j["output_tokens"].size(), 5u);
  EXPECT_TRUE(j["text"].is_string());
  EXPECT_GT(j["timings"]["prefill_tokens_per_s"].get<double>(), 0.0);
  EXPECT_TRUE(j["timings"].contains("decode_tokens_per_s"));
}

TEST_F(CliEngine, EmptyPromptMeansBosOnly) {
  std::string out;
  ASSERT_EQ(
      test::run_cli("generate --model " + target_ + " --prompt '' --max-tokens 2 --json", &out), 0)
      << out;
  EXPECT_EQ(nlohmann::json::parse(out)["prompt_tokens"], nlohmann::json({256}));
}

TEST_F(CliEngine, LogitsOutIsIdenticalAcrossChunkSizesAndThreads) {
  const std::string a = dir_->file("a.f32"), b = dir_->file("b.f32");
  ASSERT_EQ(test::run_cli("generate --model " + target_ +
                          " --random-prompt 200 --seed 3 --max-tokens 8 --prefill-chunk 200"
                          " --threads 2 --logits-out " +
                          a),
            0);
  ASSERT_EQ(test::run_cli("generate --model " + target_ +
                          " --random-prompt 200 --seed 3 --max-tokens 8 --prefill-chunk 7"
                          " --threads 1 --logits-out " +
                          b),
            0);
  const std::string la = slurp(a);
  EXPECT_EQ(la.size(), 8u * 258u * 4u);
  EXPECT_EQ(la, slurp(b));
}

// Decode's prefetch distance (kernels/decode_prefetch.h) moves when bytes are asked for, never
// what is computed: a k-quant model (small, q4_k_m: q4_K and q6_K panels) and a q8_0 one decode to
// the same logits with no software prefetch, the chosen distance and a far one. A malformed
// setting stops the command, naming the variable.
TEST_F(CliEngine, DecodePrefetchDistanceLeavesLogitsUnchanged) {
  std::string out;
  for (const std::string dtype : {"q4_k_m", "q8_0"}) {
    const std::string dir = dir_->file("prefetch-" + dtype);
    ASSERT_EQ(test::run_cli("models make --family small --dtype " + dtype + " --out " + dir, &out),
              0)
        << out;
    std::string first;
    for (const std::string env :
         {"", "ACCELBENCH_DECODE_PREFETCH=0,0 ", "ACCELBENCH_DECODE_PREFETCH=7,40 "}) {
      const std::string logits = dir_->file("prefetch.f32");
      ASSERT_EQ(test::run_command(env + test::accelbench_binary() + " generate --model " + dir +
                                      "/target.gguf --random-prompt 24 --seed 5 --max-tokens 6"
                                      " --threads 2 --logits-out " +
                                      logits + " 2>&1",
                                  &out),
                0)
          << env << out;
      const std::string l = slurp(logits);
      ASSERT_FALSE(l.empty());
      if (first.empty()) first = l;
      EXPECT_EQ(l, first) << dtype << " with '" << env << "'";
    }
  }
  EXPECT_NE(test::run_command("ACCELBENCH_DECODE_PREFETCH=2 " + test::accelbench_binary() +
                                  " generate --model " + target_ + " --prompt x 2>&1",
                              &out),
            0);
  EXPECT_NE(out.find("ACCELBENCH_DECODE_PREFETCH='2'"), std::string::npos) << out;
}

TEST_F(CliEngine, ErrorsNameTheProblem) {
  std::string out;
  EXPECT_NE(test::run_cli("generate --model " + dir_->file("missing.gguf") + " --prompt x", &out),
            0);
  EXPECT_NE(out.find("missing.gguf"), std::string::npos) << out;
  EXPECT_NE(test::run_cli("generate --model " + target_, &out), 0);
  EXPECT_NE(out.find("--prompt"), std::string::npos) << out;
  EXPECT_NE(
      test::run_cli("generate --model " + target_ + " --random-prompt 4000 --max-tokens 200", &out),
      0);
  EXPECT_NE(out.find("context length"), std::string::npos) << out;
  EXPECT_NE(test::run_cli("models make --family nope --out " + dir_->file("x"), &out), 0);
  EXPECT_NE(out.find("nope"), std::string::npos) << out;
  EXPECT_NE(test::run_cli("models make --family tiny --dtype q3_k --out " + dir_->file("x"), &out),
            0);
  // --vocab: a file that is not there is refused by name, and nothing is written.
  EXPECT_NE(test::run_cli("models make --family tiny --out " + dir_->file("v1") + " --vocab " +
                              dir_->file("missing-vocab.gguf"),
                          &out),
            0);
  EXPECT_NE(out.find("missing-vocab.gguf"), std::string::npos) << out;
  EXPECT_FALSE(std::filesystem::exists(dir_->file("v1") + "/target.gguf"));
}

}  // namespace
}  // namespace accel

namespace accel {
namespace {

// `generate --method`: SpecPrefill at keep = 1 writes the baseline's logits byte for byte; a
// sparse keep reports its phases and kept tokens; a method that needs a draft asks for --draft.
TEST(CliGenerateMethod, SpecPrefillThroughGenerate) {
  test::TempDir dir;
  std::string out;
  ASSERT_EQ(test::run_cli("models make --family tiny --out " + dir.file("m"), &out), 0) << out;
  const std::string t = dir.file("m/target.gguf"), d = dir.file("m/draft.gguf");
  const std::string common = " --model " + t + " --random-prompt 300 --seed 5 --max-tokens 6";
  const std::string a = dir.file("a.f32"), b = dir.file("b.f32");
  ASSERT_EQ(test::run_cli("generate" + common + " --logits-out " + a, &out), 0) << out;
  ASSERT_EQ(test::run_cli("generate" + common + " --method specprefill --draft " + d +
                              " --param keep=1 --param threshold=0 --logits-out " + b,
                          &out),
            0)
      << out;
  EXPECT_EQ(slurp(a).size(), 6u * 258u * 4u);
  EXPECT_EQ(slurp(a), slurp(b));
  ASSERT_EQ(test::run_cli("generate" + common + " --method specprefill --draft " + d +
                              " --param keep=0.25 --param threshold=0 --param lookahead_mode=" +
                              "decode --json",
                          &out),
            0)
      << out;
  const auto j = nlohmann::json::parse(out);
  EXPECT_EQ(j["method"], "specprefill");
  EXPECT_EQ(j["params"]["keep"], 0.25);
  EXPECT_EQ(j["params"]["lookahead_mode"], "decode");
  for (const char* ph : {"draft_prefill", "lookahead", "score", "select", "prefill", "first_token"})
    EXPECT_TRUE(j["phases"].contains(ph)) << ph << " in " << j["phases"].dump();
  EXPECT_LT(j["kept_tokens"].get<int>(), 300);
  EXPECT_GT(j["timings"]["ttft_s"].get<double>(), 0.0);
  EXPECT_TRUE(j["stats"].contains("kept_chunks"));
  EXPECT_NE(test::run_cli("generate" + common + " --method specprefill", &out), 0);
  EXPECT_NE(out.find("--draft"), std::string::npos) << out;
  EXPECT_NE(
      test::run_cli("generate" + common + " --method specprefill --draft " + d + " --param keep=0",
                    &out),
      0);
  EXPECT_NE(out.find("keep"), std::string::npos) << out;
  EXPECT_NE(test::run_cli("generate" + common + " --method nope", &out), 0);
  EXPECT_NE(out.find("nope"), std::string::npos) << out;
}

}  // namespace
}  // namespace accel
