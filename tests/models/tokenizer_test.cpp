// Tokenizers against llama.cpp's own test vectors (every vocab GGUF present in
// shared/data/llama.cpp-vocab), seeded round trips, special-token parsing, and hostile metadata.
// What the round trips assert is stated at each test; the vectors must match id for id.
#include <gtest/gtest.h>

#include <fstream>
#include <random>
#include <sstream>

#include "models/gguf.h"
#include "models/tokenizer.h"
#include "models/tokenizer_metadata.h"
#include "tests/support/test_support.h"

namespace accel {
namespace {

std::string read_file(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::string ids_str(const std::vector<int32_t>& v) {
  std::string s;
  for (int32_t x : v) {
    if (!s.empty()) s += ' ';
    s += std::to_string(x);
  }
  return s;
}

// Printable form of a test text for failure messages.
std::string show(std::string_view s) {
  std::string o = "'";
  for (unsigned char c : s) {
    if (c == '\n')
      o += "\\n";
    else if (c == '\t')
      o += "\\t";
    else if (c < 0x20) {
      o += "\\x";
      o += std::to_string(c);
    } else
      o += char(c);
  }
  return o + "'";
}

struct Vector {
  std::string text;
  std::vector<int32_t> ids;
};

// As llama.cpp's tests/test-tokenizer-0.cpp read_tests: texts are separated by
// "\n__ggml_vocab_test__\n" (so the newline before and after each separator line belongs to the
// separator, and the file's final separator leaves no trailing empty text); each .out line is the
// ids of one text, space-separated, surrounding whitespace stripped.
std::vector<Vector> read_vectors(const std::filesystem::path& inp,
                                 const std::filesystem::path& out) {
  const std::string raw = read_file(inp);
  const std::string sep = "\n__ggml_vocab_test__\n";
  std::vector<std::string> texts;
  for (size_t pos = 0; pos < raw.size();) {
    const size_t next = raw.find(sep, pos);
    if (next == std::string::npos) {
      texts.push_back(raw.substr(pos));
      break;
    }
    texts.push_back(raw.substr(pos, next - pos));
    pos = next + sep.size();
  }
  std::ifstream o(out);
  std::vector<Vector> v;
  size_t i = 0;
  for (std::string line; std::getline(o, line); ++i) {
    EXPECT_LT(i, texts.size()) << out << ": more lines than " << inp << " has texts";
    if (i >= texts.size()) break;
    Vector t{texts[i], {}};
    std::istringstream ls(line);
    for (int32_t id; ls >> id;) t.ids.push_back(id);
    v.push_back(std::move(t));
  }
  EXPECT_EQ(v.size(), texts.size()) << inp << " and " << out << " disagree on the test count";
  return v;
}

std::unique_ptr<Tokenizer> load_vocab(const std::string& name, std::string* skip) {
  const auto p = test::shared_data("llama.cpp-vocab/ggml-vocab-" + name + ".gguf");
  if (!p) {
    *skip = test::missing_shared_data("llama.cpp-vocab/ggml-vocab-" + name + ".gguf");
    return nullptr;
  }
  return Tokenizer::create(TokenizerSpec::from_gguf(GgufFile::open(p->string())));
}

class VocabVectors : public ::testing::TestWithParam<const char*> {};

TEST_P(VocabVectors, MatchLlamaCpp) {
  const std::string name = GetParam();
  const auto inp = test::shared_data("llama.cpp-vocab/ggml-vocab-" + name + ".gguf.inp");
  const auto out = test::shared_data("llama.cpp-vocab/ggml-vocab-" + name + ".gguf.out");
  if (!inp || !out)
    GTEST_SKIP() << test::missing_shared_data("llama.cpp-vocab/ggml-vocab-" + name +
                                              ".gguf.{inp,out}");
  std::string skip;
  const auto tok = load_vocab(name, &skip);
  if (!tok) GTEST_SKIP() << skip << " (its " << name << ".inp/.out vectors are, but cannot run)";
  const auto vectors = read_vectors(*inp, *out);
  ASSERT_FALSE(vectors.empty());
  int failed = 0;
  for (const Vector& v : vectors) {
    // test-tokenizer-0 calls common_tokenize(ctx, text, add_special=false, parse_special=false).
    const std::vector<int32_t> got = tok->encode(v.text, false, false);
    if (got != v.ids) {
      ++failed;
      ADD_FAILURE() << name << ": text " << show(v.text) << "\n  expected: " << ids_str(v.ids)
                    << "\n  got:      " << ids_str(got);
    }
    // Every vector is valid UTF-8 without U+2581, so decode must give the text back.
    EXPECT_EQ(tok->decode(got), v.text) << name << ": decode of " << show(v.text);
  }
  std::printf("[ vectors  ] %s: %zu of %zu match\n", name.c_str(), vectors.size() - size_t(failed),
              vectors.size());
}

INSTANTIATE_TEST_SUITE_P(Vocabs, VocabVectors,
                         ::testing::Values("llama-spm", "gpt-2", "llama-bpe", "qwen2", "qwen35",
                                           "gpt-oss", "gemma-4"),
                         test::NameWithUnderscores());

// The 50 qwen35 vectors pass under qwen2's regex too, so these strings tell the two apart: Thai
// and Arabic words whose combining marks (\p{M}) stay inside qwen35's letter runs, where qwen2
// splits them off. Expected ids from llama.cpp 3f545bec's llama-tokenize on the same vocabulary
// file with each pre-tokenizer (the qwen2 file holds the same vocabulary and merges).
TEST(Qwen35PreTokenizer, KeepsCombiningMarksInsideWordsAsLlamaCppDoes) {
  const auto p = test::shared_data("llama.cpp-vocab/ggml-vocab-qwen35.gguf");
  if (!p) GTEST_SKIP() << test::missing_shared_data("llama.cpp-vocab/ggml-vocab-qwen35.gguf");
  TokenizerSpec spec = TokenizerSpec::from_gguf(GgufFile::open(p->string()));
  ASSERT_EQ(spec.pre, "qwen35");
  const auto qwen35 = Tokenizer::create(spec);
  spec.pre = "qwen2";
  const auto qwen2 = Tokenizer::create(spec);
  struct Case {
    std::string text;
    std::vector<int32_t> qwen35, qwen2;
  };
  const std::vector<Case> cases = {
      {"\u0e17\u0e35\u0e48\u0e19\u0e35\u0e48 \u0e2a\u0e27\u0e31\u0e2a\u0e14\u0e35",
       {130742, 129328, 124294, 35648, 124311},
       {35884, 47171, 20184, 47171, 129328, 37213, 23271, 125136, 28319}},
      {"\u0645\u064f\u062d\u064e\u0645\u064e\u0651\u062f",
       {129456, 132078, 130531, 73771, 13325},
       {10176, 64604, 29825, 27910, 10176, 27910, 73771, 13325}},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(qwen35->encode(c.text, false, false), c.qwen35) << show(c.text);
    EXPECT_EQ(qwen2->encode(c.text, false, false), c.qwen2) << show(c.text);
  }
}

// Seeded random strings over pieces chosen to exercise the tokenizers: ASCII words, runs of
// spaces/newlines/tabs, digits, punctuation and contractions, 2/3/4-byte characters, and
// (when `invalid`) bytes that are not UTF-8: lone continuation bytes, truncated sequences,
// overlong and 0xF8..0xFF leads.
std::string random_text(std::mt19937_64& rng, bool invalid) {
  static const std::vector<std::string> valid = {"a",
                                                 "the",
                                                 " ",
                                                 "  ",
                                                 "   ",
                                                 "\n",
                                                 "\n\n",
                                                 "\t",
                                                 " \n",
                                                 "Hello",
                                                 " world",
                                                 "'s",
                                                 "'ll",
                                                 "0",
                                                 "123",
                                                 "4567",
                                                 ".",
                                                 ",",
                                                 "!?",
                                                 "(",
                                                 ")",
                                                 "\xC3\xA9" /* é */,
                                                 "\xC2\xBD" /* ½ */,
                                                 "\xCE\xA9" /* Ω */,
                                                 "\xE4\xB8\xAD" /* 中 */,
                                                 "\xE2\x82\xAC" /* € */,
                                                 "\xF0\x9F\xA6\x99" /* 🦙 */,
                                                 "\xF0\x9F\x98\x81" /* 😁 */,
                                                 "<",
                                                 ">",
                                                 "|",
                                                 "s",
                                                 "x",
                                                 "\r\n"};
  static const std::vector<std::string> bad = {"\x80",     "\xBF",         "\xC3",
                                               "\xE2\x82", "\xF0\x9F\xA6", "\xC0\xAF",
                                               "\xF8",     "\xFF",         "\xED\xA0\x80"};
  std::string s;
  const int n = int(rng() % 24);
  for (int i = 0; i < n; ++i) {
    if (invalid && rng() % 5 == 0)
      s += bad[rng() % bad.size()];
    else
      s += valid[rng() % valid.size()];
  }
  return s;
}

// BPE (byte-level): decode(encode(x)) == x for every byte string x, valid UTF-8 or not, with
// add_special and parse_special off (special texts are then ordinary text).
void check_bpe_round_trip(const Tokenizer& tok, const char* what) {
  std::mt19937_64 rng(1234);
  for (int i = 0; i < 3000; ++i) {
    const std::string x = random_text(rng, /*invalid=*/i % 2 == 1);
    const auto ids = tok.encode(x, false, false);
    ASSERT_EQ(tok.decode(ids), x) << what << ": round trip of " << show(x) << " via "
                                  << ids_str(ids);
  }
}

TEST(TokenizerRoundTrip, Gpt2AnyBytes) {
  std::string skip;
  const auto tok = load_vocab("gpt-2", &skip);
  if (!tok) GTEST_SKIP() << skip;
  check_bpe_round_trip(*tok, "gpt-2");
}

TEST(TokenizerRoundTrip, ByteLevelAnyBytesOneTokenPerByte) {
  const auto tok = Tokenizer::create(byte_level_tokenizer_spec());
  check_bpe_round_trip(*tok, "byte-level");
  std::string all;
  for (int b = 0; b < 256; ++b) all += char(b);
  const auto ids = tok->encode(all, false, false);
  ASSERT_EQ(ids.size(), 256u);
  for (int b = 0; b < 256; ++b) EXPECT_EQ(ids[size_t(b)], b);
  EXPECT_EQ(tok->decode(ids), all);
  const auto with_bos = tok->encode("hi", true, false);
  EXPECT_EQ(with_bos, (std::vector<int32_t>{256, 'h', 'i'}));
  EXPECT_EQ(tok->decode(with_bos), "hi");
  EXPECT_EQ(tok->decode(with_bos, /*render_special=*/true), "<|bos|>hi");
}

// SPM: decode(encode(x)) == x for x built from valid UTF-8 without U+2581 (the escaped space,
// which decodes to ' ') plus any invalid bytes: encode splits invalid sequences into single
// bytes that fall back to <0xNN> tokens. Only add_space_prefix's own space is removed on decode.
TEST(TokenizerRoundTrip, SpmValidAndInvalidBytes) {
  std::string skip;
  const auto tok = load_vocab("llama-spm", &skip);
  if (!tok) GTEST_SKIP() << skip;
  std::mt19937_64 rng(99);
  for (int i = 0; i < 3000; ++i) {
    const std::string x = random_text(rng, i % 2 == 1);
    const auto ids = tok->encode(x, false, false);
    ASSERT_EQ(tok->decode(ids), x) << "round trip of " << show(x) << " via " << ids_str(ids);
    // With BOS too: the prefix space is still the one removed.
    ASSERT_EQ(tok->decode(tok->encode(x, true, false)), x);
  }
  // The documented loss: a literal U+2581 is the escaped space.
  EXPECT_EQ(tok->decode(tok->encode("a\xE2\x96\x81"
                                    "b",
                                    false, false)),
            "a b");
}

// The SPM tokenizer merges word by word when no token holds U+2581 after another character
// (a speed-up; llama.cpp merges over the whole text). Adding the token "\xFF▁" turns that off
// without changing any result on valid UTF-8 (0xFF never occurs in it), so both must agree.
TEST(TokenizerSpm, WordSplittingEqualsWholeRunMerging) {
  const auto p = test::shared_data("llama.cpp-vocab/ggml-vocab-llama-spm.gguf");
  if (!p) GTEST_SKIP() << test::missing_shared_data("llama.cpp-vocab/ggml-vocab-llama-spm.gguf");
  TokenizerSpec spec = TokenizerSpec::from_gguf(GgufFile::open(p->string()));
  const auto split = Tokenizer::create(spec);
  spec.tokens.push_back("\xFF\xE2\x96\x81");
  spec.scores.push_back(0.f);
  spec.types.push_back(int32_t(TokenType::Normal));
  const auto whole = Tokenizer::create(spec);
  std::mt19937_64 rng(7);
  for (int i = 0; i < 500; ++i) {
    const std::string x = random_text(rng, false);
    ASSERT_EQ(split->encode(x, true, false), whole->encode(x, true, false)) << show(x);
  }
  if (const auto essays = test::shared_data("niah/paul_graham_essays.txt")) {
    const std::string text = read_file(*essays).substr(0, 60000);  // whole-run merging is slow
    EXPECT_EQ(split->encode(text, false, false), whole->encode(text, false, false));
  }
}

TEST(TokenizerSpm, SpacePrefixBosAndEmpty) {
  std::string skip;
  const auto tok = load_vocab("llama-spm", &skip);
  if (!tok) GTEST_SKIP() << skip;
  EXPECT_TRUE(tok->encode("", false, false).empty());
  EXPECT_EQ(tok->encode("", true, false), std::vector<int32_t>{1});
  const auto hello = tok->encode("Hello", false, false);
  ASSERT_EQ(hello.size(), 1u);
  EXPECT_EQ(tok->piece(hello[0]), "\xE2\x96\x81Hello");  // "▁Hello"
  EXPECT_EQ(tok->encode("Hello", true, false), (std::vector<int32_t>{1, hello[0]}));
  EXPECT_EQ(tok->decode(hello), "Hello");
  // A character outside the vocabulary falls back to its UTF-8 bytes.
  const auto llama = tok->encode("\xF0\x9F\xA6\x99", false, false);  // 🦙
  ASSERT_GE(llama.size(), 4u);
  EXPECT_EQ(tok->piece(llama[llama.size() - 4]), "<0xF0>");
}

TEST(TokenizerSpecial, ParseSpecialOnOff) {
  std::string skip;
  const auto spm = load_vocab("llama-spm", &skip);
  if (!spm) GTEST_SKIP() << skip;
  const std::string text = "<s>Hi</s>";
  const auto on = spm->encode(text, false, true);
  ASSERT_GE(on.size(), 3u);
  EXPECT_EQ(on.front(), 1);
  EXPECT_EQ(on.back(), 2);
  // After a special token the run gets its space prefix again, and decode removes it again.
  EXPECT_EQ(spm->piece(on[1]).substr(0, 3), "\xE2\x96\x81");
  EXPECT_EQ(spm->decode(on, /*render_special=*/true), text);
  EXPECT_EQ(spm->decode(on), "Hi");
  const auto off = spm->encode(text, false, false);
  for (int32_t id : off) EXPECT_TRUE(id != 1 && id != 2) << ids_str(off);
  EXPECT_EQ(spm->decode(off), text);

  const auto gpt2 = load_vocab("gpt-2", &skip);
  if (!gpt2) GTEST_SKIP() << skip;
  const std::string t2 = "a<|endoftext|>b";
  const auto on2 = gpt2->encode(t2, false, true);
  ASSERT_EQ(on2.size(), 3u) << ids_str(on2);
  EXPECT_EQ(on2[1], 50256);
  EXPECT_EQ(gpt2->decode(on2, true), t2);
  EXPECT_EQ(gpt2->decode(on2), "ab");
  const auto off2 = gpt2->encode(t2, false, false);
  for (int32_t id : off2) EXPECT_NE(id, 50256);
  EXPECT_EQ(gpt2->decode(off2), t2);

  // Longest special text first: "<|bos|>" wins over nothing shorter here, and adjacent
  // specials split cleanly.
  const auto bl = Tokenizer::create(byte_level_tokenizer_spec());
  EXPECT_EQ(bl->encode("<|bos|><|eos|>x", false, true), (std::vector<int32_t>{256, 257, 'x'}));
  EXPECT_EQ(bl->encode("<|bos|>", false, false).size(), 7u);
}

// The pre-tokenizers differ in how they cut text before merging; with merges "1 2" -> "12",
// "12 3" -> "123" and "' S" -> "'S" the cut shows in the ids. (The llama-bpe and qwen2 vocab
// GGUFs are not in shared data, so this is what checks their regexes.)
TEST(TokenizerBpe, PreTokenizerSplits) {
  const auto make = [](const char* pre) {
    TokenizerSpec s = byte_level_tokenizer_spec();
    s.pre = pre;
    for (const char* t : {"12", "123", "'S"}) {
      s.tokens.push_back(t);
      s.types.push_back(int32_t(TokenType::Normal));
    }
    s.merges = {"1 2", "12 3", "' S"};
    return Tokenizer::create(s);
  };
  const int32_t t12 = 258, t123 = 259, tS = 260;
  const std::vector<int32_t> one_piece = {t12, t123};              // "12123" merged whole
  const std::vector<int32_t> three_digits = {t12, '1', '2', '3'};  // "121" | "23"
  const std::vector<int32_t> single_digits = {'1', '2', '1', '2', '3'};
  EXPECT_EQ(make("gpt-2")->encode("12123", false, false), one_piece);
  EXPECT_EQ(make("default")->encode("12123", false, false), three_digits);
  EXPECT_EQ(make("llama-bpe")->encode("12123", false, false), three_digits);
  EXPECT_EQ(make("qwen2")->encode("12123", false, false), single_digits);
  // Contractions: case-insensitive in llama-bpe/qwen2 ("'S" is one piece), lower case only in
  // gpt-2 ("'" and "S" are separate pieces and never merge).
  EXPECT_EQ(make("gpt-2")->encode("'S", false, false), (std::vector<int32_t>{'\'', 'S'}));
  EXPECT_EQ(make("llama-bpe")->encode("'S", false, false), std::vector<int32_t>{tS});
  EXPECT_EQ(make("qwen2")->encode("'S", false, false), std::vector<int32_t>{tS});
  // Unicode letters: \p{L} needs real Unicode support (PCRE2 UCP): "é12" is cut between the
  // letter and the digits by every pre-tokenizer, so "12" still merges (qwen2: single digits).
  for (const char* pre : {"gpt-2", "default", "llama-bpe"}) {
    const auto ids = make(pre)->encode(
        "\xC3\xA9"
        "12",
        false, false);
    EXPECT_EQ(ids, (std::vector<int32_t>{0xC3, 0xA9, t12})) << pre << ": " << ids_str(ids);
  }
  EXPECT_EQ(make("qwen2")->encode("\xC3\xA9"
                                  "12",
                                  false, false),
            (std::vector<int32_t>{0xC3, 0xA9, '1', '2'}));
}

// ---- hostile metadata -------------------------------------------------------------------------

// Writes `s` as tokenizer metadata (plus `extra` keys) to a GGUF file and reads it back.
std::string write_spec(const test::TempDir& dir, const TokenizerSpec& s,
                       const std::vector<std::pair<std::string, GgufValue>>& extra = {}) {
  GgufWriter w;
  w.set("general.architecture", GgufValue::of_string("llama"));
  write_tokenizer_metadata(w, s);
  for (const auto& [k, v] : extra) w.set(k, v);
  const std::string path = dir.file("tok.gguf");
  w.write(path);
  return path;
}

// Expects from_gguf to refuse with a message naming the file and `key`.
void expect_refused(const std::string& path, const std::string& key, const std::string& what) {
  try {
    TokenizerSpec::from_gguf(GgufFile::open(path));
    ADD_FAILURE() << what << ": accepted";
  } catch (const TokenizerError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find(path), std::string::npos) << what << ": message lacks the file: " << msg;
    EXPECT_NE(msg.find(key), std::string::npos) << what << ": message lacks " << key << ": " << msg;
  }
}

TokenizerSpec small_bpe() {
  TokenizerSpec s = byte_level_tokenizer_spec();
  s.tokens.push_back("ab");
  s.types.push_back(int32_t(TokenType::Normal));
  s.merges.push_back("a b");
  return s;
}

TEST(TokenizerHostile, RefusedWithKeyAndFile) {
  test::TempDir dir;
  {
    const auto tok = Tokenizer::create(TokenizerSpec::from_gguf(
        GgufFile::open(write_spec(dir, small_bpe()))));  // the baseline is accepted and merges
    EXPECT_EQ(tok->encode("ab", false, false), std::vector<int32_t>{258});
  }
  {
    TokenizerSpec s = small_bpe();
    s.scores.assign(10, 0.f);
    expect_refused(write_spec(dir, s), "tokenizer.ggml.scores", "scores count");
  }
  {
    TokenizerSpec s = small_bpe();
    s.types.pop_back();
    expect_refused(write_spec(dir, s), "tokenizer.ggml.token_type", "types count");
  }
  {
    TokenizerSpec s = small_bpe();
    s.merges.push_back("a zz");
    expect_refused(write_spec(dir, s), "tokenizer.ggml.merges[1]", "merge with unknown token");
  }
  {
    TokenizerSpec s = small_bpe();
    s.merges.push_back("b a");  // "ba" is not a token
    expect_refused(write_spec(dir, s), "tokenizer.ggml.merges[1]", "merge into a non-token");
  }
  {
    TokenizerSpec s = small_bpe();
    s.bos = 259;
    expect_refused(write_spec(dir, s), "tokenizer.ggml.bos_token_id", "bos out of range");
  }
  {
    TokenizerSpec s = small_bpe();
    s.tokens.back() = std::string(kMaxTokenBytes + 1, 'a');
    expect_refused(write_spec(dir, s), "tokenizer.ggml.tokens", "absurd token length");
  }
  {
    TokenizerSpec s = small_bpe();
    s.pre = "tekken";
    expect_refused(write_spec(dir, s), "tokenizer.ggml.pre", "unknown pre");
  }
  {
    TokenizerSpec s = small_bpe();
    s.model = "t5";
    expect_refused(write_spec(dir, s), "tokenizer.ggml.model", "unknown model");
  }
  {
    TokenizerSpec s = small_bpe();
    s.types[5] = 9;
    expect_refused(write_spec(dir, s), "tokenizer.ggml.token_type", "type out of range");
  }
  {
    TokenizerSpec s = small_bpe();
    s.tokens[65] = "zz";  // byte 'A' has no token left
    s.merges.clear();
    expect_refused(write_spec(dir, s), "tokenizer.ggml.tokens", "missing byte token");
  }
  {
    // A value of the wrong type is refused through the reader's typed getter.
    expect_refused(write_spec(dir, small_bpe(),
                              {{"tokenizer.ggml.bos_token_id", GgufValue::of_string("one")}}),
                   "tokenizer.ggml.bos_token_id", "bos of the wrong type");
  }
  // Specs built in code go through the same checks.
  TokenizerSpec s = small_bpe();
  s.eos = -5;
  EXPECT_THROW(Tokenizer::create(s), TokenizerError);
}

}  // namespace
}  // namespace accel
