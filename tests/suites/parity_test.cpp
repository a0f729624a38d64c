// The parity suite: its token comparison on hand-worked sequences, its scores, and the prompt
// classes (deterministic, exactly the requested length on the synthetic families' byte-level
// tokenizer, different per seed, the quoted record or function whole, clear refusals).
#include "suites/parity.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <set>

#include "models/tokenizer.h"
#include "suites/prompt_classes.h"
#include "tests/support/pattern.h"
#include "tests/support/test_support.h"

namespace accel {
namespace {

using V = std::vector<int32_t>;

TEST(CompareTokens, EqualSequencesAreExactWithDivergenceAtTheirLength) {
  const ParityResult r = compare_tokens(V{5, 6, 7}, V{5, 6, 7});
  EXPECT_TRUE(r.exact);
  EXPECT_EQ(r.first_divergence, 3);
  EXPECT_EQ(r.matching_prefix_frac, 1.0);
  EXPECT_EQ(r.ref_token, -1);
  EXPECT_EQ(r.method_token, -1);
}

TEST(CompareTokens, FirstDifferingTokenGivesPositionAndBothTokens) {
  const ParityResult r = compare_tokens(V{1, 2, 3, 4}, V{1, 2, 9, 4});
  EXPECT_FALSE(r.exact);
  EXPECT_EQ(r.first_divergence, 2);
  EXPECT_EQ(r.matching_prefix_frac, 0.5);  // 2 of 4: exact in binary
  EXPECT_EQ(r.ref_token, 3);
  EXPECT_EQ(r.method_token, 9);
}

TEST(CompareTokens, AShorterOutputDivergesWhereItEndsWithTokenMinusOne) {
  const ParityResult shorter = compare_tokens(V{1, 2, 3}, V{1, 2});
  EXPECT_FALSE(shorter.exact);
  EXPECT_EQ(shorter.first_divergence, 2);
  EXPECT_DOUBLE_EQ(shorter.matching_prefix_frac, 2.0 / 3.0);
  EXPECT_EQ(shorter.ref_token, 3);
  EXPECT_EQ(shorter.method_token, -1);
  const ParityResult longer = compare_tokens(V{1, 2}, V{1, 2, 8, 8});
  EXPECT_FALSE(longer.exact);
  EXPECT_EQ(longer.first_divergence, 2);
  EXPECT_EQ(longer.matching_prefix_frac, 0.5);  // the longer output's length is the denominator
  EXPECT_EQ(longer.ref_token, -1);
  EXPECT_EQ(longer.method_token, 8);
}

TEST(CompareTokens, DivergenceAtTheFirstTokenAndEmptyOutputs) {
  const ParityResult r = compare_tokens(V{4}, V{7});
  EXPECT_EQ(r.first_divergence, 0);
  EXPECT_EQ(r.matching_prefix_frac, 0.0);
  EXPECT_TRUE(compare_tokens(V{}, V{}).exact);
  EXPECT_EQ(compare_tokens(V{}, V{}).matching_prefix_frac, 1.0);
}

TEST(ParitySuite, ScoresAreTheDeclaredMetricsAndTheReferenceGetsNone) {
  const Suite& s = find_suite("parity");
  const nlohmann::json p = resolve_suite_params(s, nlohmann::json::object());
  Generation ref, got;
  ref.tokens = {10, 11, 12, 13};
  got.tokens = {10, 11, 99, 13};
  const Scores sc = s.score(Sample{}, got, &ref, {}, p);
  std::set<std::string> declared;
  for (const auto& m : s.metrics()) declared.insert(m.name);
  ASSERT_EQ(sc.size(), declared.size());
  for (const auto& [k, v] : sc) EXPECT_TRUE(declared.count(k)) << k;
  EXPECT_EQ(sc.at("parity.exact"), 0.0);
  EXPECT_EQ(sc.at("parity.first_divergence"), 2.0);
  EXPECT_EQ(sc.at("parity.matching_prefix_frac"), 0.5);
  EXPECT_EQ(sc.at("parity.ref_token_at_divergence"), 12.0);
  EXPECT_EQ(sc.at("parity.method_token_at_divergence"), 99.0);
  EXPECT_EQ(s.score(Sample{}, ref, &ref, {}, p).at("parity.exact"), 1.0);
  EXPECT_TRUE(s.score(Sample{}, got, nullptr, {}, p).empty());
  EXPECT_EQ(s.reference_need(p).kind, ReferenceNeed::Kind::Tokens);
}

TEST(ParitySuite, ParamsDefaultToPassageAndRejectUnknownClasses) {
  const Suite& s = find_suite("parity");
  const nlohmann::json p = resolve_suite_params(s, nlohmann::json::object());
  EXPECT_EQ(p["prompt_class"], "passage");
  EXPECT_EQ(p["data"], "");
  EXPECT_THROW(resolve_suite_params(s, {{"prompt_class", "poetry"}}), std::invalid_argument);
  EXPECT_THROW(resolve_suite_params(s, {{"data", 3}}), std::invalid_argument);
}

// The synthetic families' tokenizer: one token per byte, BOS 256, EOS 257.
struct ByteLevel : ::testing::Test {
  std::unique_ptr<Tokenizer> tok = Tokenizer::create(byte_level_tokenizer_spec());
  SuiteContext ctx{258, 256, 257, tok.get()};
  std::string essays() const {
    const auto d = test::shared_data("niah");
    return d ? d->string() : "";
  }
  std::vector<std::string> text_classes() const {
    std::vector<std::string> c = {"passage", "json_rag", "code"};
    if (!essays().empty()) c.push_back("essay");
    return c;
  }
  ClassPrompt make(const std::string& cls, int len, uint64_t seed, const SuiteContext& c) const {
    return make_class_prompt(cls, len, seed, c, essays(), "suite 'parity'");
  }
  std::string text(const ClassPrompt& p) const {
    return tok->decode(std::span<const int32_t>(p.tokens).subspan(1));
  }
};

TEST_F(ByteLevel, EveryClassIsExactlyTheContextLengthWithBosFirst) {
  // Lengths that end mid-unit and mid-token-run; 320 is near the smallest json_rag and code
  // accept (a record or function and the question about it must fit).
  for (const auto& cls : text_classes())
    for (int len : {320, 1001, 4096}) {
      const ClassPrompt p = make(cls, len, 7, ctx);
      ASSERT_EQ(p.tokens.size(), size_t(len)) << cls << " " << len;
      EXPECT_EQ(p.tokens[0], 256) << cls;
      EXPECT_EQ(std::count(p.tokens.begin(), p.tokens.end(), 256), 1) << cls;
      EXPECT_EQ(p.meta["prompt_class"], cls);
    }
  EXPECT_EQ(make("passage", 97, 1, ctx).tokens.size(), 97u);
  SuiteContext no_bos = ctx;
  no_bos.bos = -1;
  const ClassPrompt p = make("passage", 300, 3, no_bos);
  ASSERT_EQ(p.tokens.size(), 300u);
  EXPECT_NE(p.tokens[0], 256);
}

TEST_F(ByteLevel, SameSeedSamePromptAndSeedsDiffer) {
  for (const auto& cls : text_classes()) {
    EXPECT_EQ(make(cls, 512, 11, ctx).tokens, make(cls, 512, 11, ctx).tokens) << cls;
    EXPECT_NE(make(cls, 512, 11, ctx).tokens, make(cls, 512, 12, ctx).tokens) << cls;
  }
  EXPECT_EQ(make("random_tokens", 64, 5, ctx).tokens, make("random_tokens", 64, 5, ctx).tokens);
  EXPECT_NE(make("random_tokens", 64, 5, ctx).tokens, make("random_tokens", 64, 6, ctx).tokens);
}

TEST_F(ByteLevel, JsonRagQuestionQuotesARecordThatIsWholeInThePrompt) {
  for (uint64_t seed : {1, 2, 3, 4}) {
    const std::string t = text(make("json_rag", 2048, seed, ctx));
    const auto m = test::Pattern(R"re("id": (\d+) and "name": "([A-Za-z ]+)")re").search(t);
    ASSERT_TRUE(m) << t;
    const std::string record = "{\"id\": " + m->groups[0] + ", \"name\": \"" + m->groups[1] + "\"";
    const size_t at = t.find(record);
    ASSERT_NE(at, std::string::npos) << record;
    EXPECT_NE(t.find("},\n", at), std::string::npos);  // the record's closing brace is there too
    EXPECT_LT(t.find("},\n", at), t.find("Question:"));
    EXPECT_TRUE(t.ends_with("Answer: "));
  }
}

TEST_F(ByteLevel, CodeInstructionNamesAFunctionDefinedInThePrompt) {
  bool saw_python = false, saw_c = false;
  for (uint64_t seed = 0; seed < 8; ++seed) {
    const ClassPrompt p = make("code", 1500, seed, ctx);
    const std::string t = text(p);
    const auto m = test::Pattern("Change the function `(\\w+)`").search(t);
    ASSERT_TRUE(m) << t;
    const bool python = p.meta["language"] == "python";
    (python ? saw_python : saw_c) = true;
    const std::string def = python ? "def " + m->groups[0] + "(x, y):\n"
                                   : "static int " + m->groups[0] + "(int x, int y) {\n";
    const size_t at = t.find(def);
    ASSERT_NE(at, std::string::npos) << def;
    EXPECT_NE(t.find(python ? "return acc %" : "}\n", at), std::string::npos);
  }
  EXPECT_TRUE(saw_python && saw_c);  // the seed picks the language
}

TEST_F(ByteLevel, PassageEndsWithItsInstructionWhole) {
  for (int len : {200, 999}) {
    const std::string t = text(make("passage", len, 9, ctx));
    EXPECT_TRUE(t.ends_with("word for word.\n") || t.ends_with("in the same style.\n")) << t;
    EXPECT_TRUE(t.starts_with("Passage:\nThe ")) << t;
  }
}

TEST_F(ByteLevel, EssayComesFromTheDataFile) {
  if (essays().empty()) GTEST_SKIP() << test::missing_shared_data("niah");
  const std::string t = text(make("essay", 800, 2, ctx));
  EXPECT_TRUE(t.starts_with("Essay:\n"));
  // Its second line is a whole line of the essays file.
  const size_t nl = t.find('\n', 7);
  const std::string line = t.substr(7, nl - 7);
  std::ifstream f(*test::shared_data("niah/paul_graham_essays.txt"));
  const std::string all((std::istreambuf_iterator<char>(f)), {});
  EXPECT_NE(all.find(line + "\n"), std::string::npos) << line;
}

TEST_F(ByteLevel, RefusalsNameTheSuiteAndTheReason) {
  SuiteContext no_tok = ctx;
  no_tok.tokenizer = nullptr;
  const auto message = [&](auto f) {
    try {
      f();
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const std::string m1 = message([&] { make("passage", 64, 1, no_tok); });
  EXPECT_NE(m1.find("suite 'parity'"), std::string::npos) << m1;
  EXPECT_NE(m1.find("no tokenizer"), std::string::npos) << m1;
  EXPECT_EQ(make("random_tokens", 64, 1, no_tok).tokens.size(), 64u);
  const std::string m2 =
      message([&] { make_class_prompt("essay", 512, 1, ctx, "", "suite 'parity'"); });
  EXPECT_NE(m2.find("'data'"), std::string::npos) << m2;
  const std::string m3 = message(
      [&] { make_class_prompt("essay", 512, 1, ctx, "/nonexistent/essays", "suite 'parity'"); });
  EXPECT_NE(m3.find("no text"), std::string::npos) << m3;
  const std::string m4 = message([&] { make("json_rag", 40, 1, ctx); });
  EXPECT_NE(m4.find("too short"), std::string::npos) << m4;
}

TEST_F(ByteLevel, SuiteSamplesAreNamedByClassAndIndex) {
  const Suite& s = find_suite("parity");
  const nlohmann::json p = resolve_suite_params(s, {{"prompt_class", "code"}});
  const Sample a = s.make_sample(512, 1, 0, ctx, p);
  EXPECT_EQ(a.id, "code-1");
  EXPECT_EQ(a.prompt.size(), 512u);
  EXPECT_NE(a.prompt, s.make_sample(512, 0, 0, ctx, p).prompt);
  EXPECT_EQ(a.prompt, s.make_sample(512, 1, 0, ctx, p).prompt);
}

TEST_F(ByteLevel, MixedTakesTheTextClassesInTurnAndEssayOnlyWithData) {
  const Suite& s = find_suite("parity");
  const nlohmann::json p = resolve_suite_params(s, {{"prompt_class", "mixed"}});
  std::vector<std::string> ids;
  for (int i = 0; i < 4; ++i) ids.push_back(s.make_sample(512, i, 0, ctx, p).id);
  EXPECT_EQ(ids, (std::vector<std::string>{"passage-0", "json_rag-1", "code-2", "passage-3"}));
  if (essays().empty()) return;
  const nlohmann::json pd =
      resolve_suite_params(s, {{"prompt_class", "mixed"}, {"data", essays()}});
  EXPECT_EQ(s.make_sample(512, 3, 0, ctx, pd).id, "essay-3");
}

}  // namespace
}  // namespace accel
