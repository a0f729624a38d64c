// tokenizer_difference names the first field that differs (or "" for equal tokenizers), and
// model_tokenizer_spec's rule for files without tokenizer metadata: only an accelbench synthetic
// file with the byte-level vocabulary size has a known (byte-level) tokenizer.
#include "models/tokenizer_match.h"

#include <gtest/gtest.h>

#include "models/tokenizer_metadata.h"
#include "tests/support/test_support.h"

namespace accel {
namespace {

TEST(TokenizerDifference, EqualSpecsHaveNone) {
  EXPECT_EQ(tokenizer_difference(byte_level_tokenizer_spec(), byte_level_tokenizer_spec()), "");
}

TEST(TokenizerDifference, EmptyScoreAndTypeListsMeanZeroAndNormal) {
  TokenizerSpec explicit_ = byte_level_tokenizer_spec();
  explicit_.scores.assign(explicit_.tokens.size(), 0.f);
  EXPECT_EQ(tokenizer_difference(byte_level_tokenizer_spec(), explicit_), "");
  TokenizerSpec a = byte_level_tokenizer_spec(), b = a;
  a.types.clear();
  b.types.assign(b.tokens.size(), int32_t(TokenType::Normal));
  EXPECT_EQ(tokenizer_difference(a, b), "");
}

TEST(TokenizerDifference, NamesTheFirstDifferingField) {
  const TokenizerSpec base = byte_level_tokenizer_spec();
  struct Case {
    const char* what;
    void (*change)(TokenizerSpec&);
    const char* want;
  };
  const Case cases[] = {
      {"model", [](TokenizerSpec& s) { s.model = "llama"; }, "model: 'gpt2' vs 'llama'"},
      {"pre", [](TokenizerSpec& s) { s.pre = "llama3"; }, "pre-tokenizer: 'gpt-2' vs 'llama3'"},
      {"size", [](TokenizerSpec& s) { s.tokens.push_back("x"); }, "vocabulary size: 258 vs 259"},
      {"piece", [](TokenizerSpec& s) { s.tokens[65] = "Z"; }, "token 65: 'A' vs 'Z'"},
      {"score", [](TokenizerSpec& s) { s.scores.assign(258, 0.f), s.scores[3] = 0.5f; },
       "token 3 score: 0.000000 vs 0.500000"},
      {"type", [](TokenizerSpec& s) { s.types[7] = 4; }, "token 7 type: 1 vs 4"},
      {"merge", [](TokenizerSpec& s) { s.merges = {"a b"}; }, "merge count: 0 vs 1"},
      {"eos", [](TokenizerSpec& s) { s.eos = 3; }, "eos: 257 vs 3"},
      {"unknown", [](TokenizerSpec& s) { s.unk = 0; }, "unknown: -1 vs 0"},
      {"padding", [](TokenizerSpec& s) { s.pad = 1; }, "padding: -1 vs 1"},
      {"add_bos", [](TokenizerSpec& s) { s.add_bos = false; }, "add_bos: true vs false"},
      {"space", [](TokenizerSpec& s) { s.add_space_prefix = true; },
       "add_space_prefix: false vs true"},
  };
  for (const Case& c : cases) {
    TokenizerSpec other = base;
    c.change(other);
    EXPECT_EQ(tokenizer_difference(base, other), c.want) << c.what;
  }
  TokenizerSpec a = base, b = base;
  a.merges = {"a b", "c d"};
  b.merges = {"a b", "c e"};
  EXPECT_EQ(tokenizer_difference(a, b), "merge 1: 'c d' vs 'c e'");
}

TEST(TokenizerDifference, LlamaIgnoresThePreTokenizerName) {
  TokenizerSpec a = byte_level_tokenizer_spec(), b = a;
  a.model = b.model = "llama";
  a.pre = "default";
  b.pre = "anything";
  EXPECT_EQ(tokenizer_difference(a, b), "");
}

// A metadata-only GGUF (no tensors), with the given keys.
GgufFile metadata_file(const test::TempDir& dir, const std::string& name, bool family,
                       const TokenizerSpec* tokenizer) {
  GgufWriter w;
  w.set("general.architecture", GgufValue::of_string("llama"));
  if (family) w.set("accelbench.family", GgufValue::of_string("tiny"));
  if (tokenizer) write_tokenizer_metadata(w, *tokenizer);
  w.write(dir.file(name));
  return GgufFile::open(dir.file(name));
}

TEST(ModelTokenizerSpec, TokenizerLessFilesHaveOneOnlyAsSyntheticByteVocabularies) {
  const test::TempDir dir;
  const TokenizerSpec bytes = byte_level_tokenizer_spec();
  const int64_t n = int64_t(bytes.tokens.size());
  const GgufFile synthetic = metadata_file(dir, "synthetic.gguf", true, nullptr);
  ASSERT_TRUE(model_tokenizer_spec(synthetic, n).has_value());
  EXPECT_EQ(tokenizer_difference(*model_tokenizer_spec(synthetic, n), bytes), "");
  EXPECT_FALSE(model_tokenizer_spec(synthetic, n + 1).has_value()) << "not the byte-level size";
  const GgufFile plain = metadata_file(dir, "plain.gguf", false, nullptr);
  EXPECT_FALSE(model_tokenizer_spec(plain, n).has_value()) << "not a synthetic file";
}

TEST(ModelTokenizerSpec, MetadataWinsOverTheSyntheticRule) {
  const test::TempDir dir;
  TokenizerSpec other = byte_level_tokenizer_spec();
  std::swap(other.tokens[97], other.tokens[98]);
  const GgufFile f = metadata_file(dir, "other.gguf", true, &other);
  const auto spec = model_tokenizer_spec(f, int64_t(other.tokens.size()));
  ASSERT_TRUE(spec.has_value());
  EXPECT_EQ(tokenizer_difference(*spec, other), "");
}

}  // namespace
}  // namespace accel
