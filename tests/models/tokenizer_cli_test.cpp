// End-to-end checks of `accelbench tokenize` and `accelbench models import-llama2c`: output
// formats, the error for an unsupported tokenizer, and an import that tokenize can then use.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "models/gguf.h"
#include "models/tokenizer.h"
#include "models/tokenizer_metadata.h"
#include "tests/support/test_support.h"

namespace accel {
namespace {

TEST(TokenizeCli, JsonAndPlain) {
  const auto v = test::shared_data("llama.cpp-vocab/ggml-vocab-llama-spm.gguf");
  if (!v) GTEST_SKIP() << test::missing_shared_data("llama.cpp-vocab/ggml-vocab-llama-spm.gguf");
  std::string out;
  ASSERT_EQ(test::run_cli("tokenize --model " + v->string() +
                              " --text 'Hello world' --json "
                              "--add-special",
                          &out),
            0)
      << out;
  const auto j = nlohmann::json::parse(out);
  EXPECT_EQ(j["tokens"], nlohmann::json({1, 15043, 3186}));
  EXPECT_EQ(j["pieces"], nlohmann::json({"<s>", "\xE2\x96\x81Hello", "\xE2\x96\x81world"}));
  ASSERT_EQ(test::run_cli("tokenize --model " + v->string() + " --text 'Hello world'", &out), 0);
  EXPECT_NE(out.find("ids: 15043 3186"), std::string::npos) << out;
  EXPECT_NE(test::run_cli("tokenize --model " + v->string(), &out), 0);  // no text
}

TEST(TokenizeCli, UnsupportedTokenizerNamed) {
  test::TempDir dir;
  TokenizerSpec s = byte_level_tokenizer_spec();
  s.pre = "tekken";
  GgufWriter w;
  w.set("general.architecture", GgufValue::of_string("llama"));
  write_tokenizer_metadata(w, s);
  const std::string path = dir.file("tekken.gguf");
  w.write(path);
  std::string out;
  EXPECT_EQ(test::run_cli("tokenize --model " + path + " --text hi", &out), 1);
  EXPECT_NE(out.find(path), std::string::npos) << out;
  EXPECT_NE(out.find("'tekken'"), std::string::npos) << out;
  EXPECT_NE(out.find("tokenizer.ggml.pre"), std::string::npos) << out;
}

TEST(ImportLlama2cCli, ImportThenTokenize) {
  const auto bin = test::shared_data("stories260K/stories260K.bin");
  const auto tok = test::shared_data("stories260K/tok512.bin");
  if (!bin || !tok)
    GTEST_SKIP() << test::missing_shared_data("stories260K/{stories260K.bin,tok512.bin}");
  test::TempDir dir;
  const std::string out_gguf = dir.file("s.gguf");
  std::string out;
  ASSERT_EQ(test::run_cli("models import-llama2c --checkpoint " + bin->string() + " --tokenizer " +
                              tok->string() + " --out " + out_gguf,
                          &out),
            0)
      << out;
  ASSERT_EQ(
      test::run_cli("tokenize --model " + out_gguf + " --text 'Once upon a time' --json", &out), 0)
      << out;
  EXPECT_EQ(nlohmann::json::parse(out)["tokens"], nlohmann::json({403, 407, 261, 378}));
  // A bad checkpoint is one error line naming the file and field.
  ASSERT_EQ(test::run_cli("models import-llama2c --checkpoint " + tok->string() + " --tokenizer " +
                              tok->string() + " --out " + dir.file("x.gguf"),
                          &out),
            1);
  EXPECT_NE(out.find("accelbench: error: [llama2c] " + tok->string() + ": header field"),
            std::string::npos)
      << out;
}

}  // namespace
}  // namespace accel
