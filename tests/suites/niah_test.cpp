// The NIAH grid suite against hand-worked cases of gkamradt's tester (7b90d28): its depth grid,
// insert_needle's walk back to a sentence end, the Anthropic plain-text template around the
// haystack, exact lengths, needles at their requested depths (within the sentence the depth
// falls in), seeds, and exact containment scoring through the context's tokenizer. The
// byte-level tokenizer (one token per byte, BOS 256, EOS 257) makes token positions byte
// positions; an essay fixture is written per test, the real essays are used when present. With
// model_template gguf the same prompt sits in the model's chat turns.
#include "suites/niah.h"

#include <gtest/gtest.h>

#include <fstream>
#include <set>

#include "models/chat_template.h"
#include "models/tokenizer.h"
#include "suites/niah_haystack.h"
#include "tests/support/test_support.h"

namespace accel {
namespace {

// Sentences of varying length with line breaks inside them, as the essays have.
std::string fixture_essays() {
  const char* words[] = {"remarkable", "foundation", "creative", "engineer", "careful",
                         "attention",  "valuable",   "movement", "founder",  "curious"};
  std::string t = "March 2024Essays begin without a break.";
  for (int i = 0; i < 600; ++i) {
    t += " Sentence " + std::to_string(i) + " is";
    for (int w = 0; w < 2 + (i * 7) % 9; ++w) t += std::string(" ") + words[(i + w) % 10];
    t += (i % 3 == 0) ? ".\n" : ".";
  }
  return t + "\n";
}

struct Niah : ::testing::Test {
  test::TempDir dir;
  std::string essays = dir.file("essays.txt");
  const Suite& s = find_suite("niah");
  std::unique_ptr<Tokenizer> tok = Tokenizer::create(byte_level_tokenizer_spec());
  SuiteContext ctx{258, 256, 257, tok.get()};
  void SetUp() override { std::ofstream(essays) << fixture_essays(); }
  nlohmann::json params(nlohmann::json given = nlohmann::json::object()) const {
    if (!given.contains("data")) given["data"] = essays;
    return resolve_suite_params(s, given);
  }
  std::string text(std::span<const int32_t> ids) const { return tok->decode(ids); }
  std::string error_of(int len, int index, const nlohmann::json& p) const {
    try {
      s.make_sample(len, index, 0, ctx, p);
    } catch (const std::invalid_argument& e) {
      return e.what();
    }
    return "(no error)";
  }
};

// A tokenizer whose ids decode to fixed strings (for ends_sentence on multi-byte pieces).
struct TableTokenizer : Tokenizer {
  std::vector<std::string> pieces;
  explicit TableTokenizer(std::vector<std::string> p)
      : Tokenizer(byte_level_tokenizer_spec()), pieces(std::move(p)) {}
  std::vector<int32_t> encode(std::string_view, bool, bool) const override { return {}; }
  std::string decode(std::span<const int32_t> ids, bool) const override {
    std::string o;
    for (int32_t i : ids) o += pieces.at(size_t(i));
    return o;
  }
};

TEST_F(Niah, IsRegisteredWithKamradtsDefaults) {
  EXPECT_EQ(s.name(), "niah");
  EXPECT_NE(s.version().find("gkamradt-7b90d28"), std::string::npos);
  const nlohmann::json p = params();
  EXPECT_EQ(p["depths"], 11);
  EXPECT_EQ(p["max_new_tokens"], 50);
  EXPECT_EQ(p["needle"],
            "\nThe best thing to do in San Francisco is eat a sandwich and sit in Dolores Park on "
            "a sunny day.\n");
  EXPECT_EQ(p["retrieval_question"], "What is the best thing to do in San Francisco?");
  EXPECT_EQ(p["answer"], "eat a sandwich and sit in Dolores Park on a sunny day");
  std::set<std::string> names;
  for (const auto& m : s.metrics()) names.insert(m.name);
  EXPECT_EQ(names, (std::set<std::string>{"niah.score", "niah.depth", "niah.depth_actual"}));
  EXPECT_EQ(s.reference_need(p).kind, ReferenceNeed::Kind::None);
  EXPECT_THROW(params({{"depths", 0}}), std::invalid_argument);
}

TEST(NiahGrid, DepthsAreNumpysRoundedLinspace) {
  EXPECT_EQ(niah::depth_grid(11), (std::vector<int>{0, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100}));
  // 12.5, 37.5, 62.5 and 87.5 round half to even, as np.round does.
  EXPECT_EQ(niah::depth_grid(9), (std::vector<int>{0, 12, 25, 38, 50, 62, 75, 88, 100}));
  EXPECT_EQ(niah::depth_grid(2), (std::vector<int>{0, 100}));
  EXPECT_EQ(niah::depth_grid(1), (std::vector<int>{0}));
  // The tester's default of 35 intervals: 100 / 34 * k.
  const auto g = niah::depth_grid(35);
  EXPECT_EQ(g[1], 3);    // 2.94
  EXPECT_EQ(g[17], 50);  // exactly
  EXPECT_EQ(g[33], 97);  // 97.06
  EXPECT_EQ(g[34], 100);
}

TEST_F(Niah, InsertNeedleWalksBackToTheSentenceEndAsTheTesterDoes) {
  const std::vector<int32_t> c = tok->encode("Ab. Cd. Ef.", false, false);  // 11 tokens
  const std::vector<int32_t> n = tok->encode("XY", false, false);
  const auto at = [&](int depth) {
    const niah::Placement p = niah::insert_needle(c, n, depth, *tok);
    return std::make_tuple(text(p.tokens), p.at, p.target);
  };
  // int(11 * 0.5) = 5 ('d'); back past 'C' and ' ' to after the first '.'.
  EXPECT_EQ(at(50), std::make_tuple(std::string("Ab.XY Cd. Ef."), size_t(3), size_t(5)));
  // int(11 * 0.9) = int(9.9) = 9 ('f'); back to after the second '.'.
  EXPECT_EQ(at(90), std::make_tuple(std::string("Ab. Cd.XY Ef."), size_t(7), size_t(9)));
  // int(11 * 0.3) = 3: the token before it is '.', so it stays.
  EXPECT_EQ(at(30), std::make_tuple(std::string("Ab.XY Cd. Ef."), size_t(3), size_t(3)));
  EXPECT_EQ(at(0), std::make_tuple(std::string("XYAb. Cd. Ef."), size_t(0), size_t(0)));
  EXPECT_EQ(at(10), std::make_tuple(std::string("XYAb. Cd. Ef."), size_t(0), size_t(1)));
  // 100 appends without looking for a sentence end.
  EXPECT_EQ(at(100), std::make_tuple(std::string("Ab. Cd. Ef.XY"), size_t(11), size_t(11)));
}

TEST(NiahGrid, SentenceEndsAreTokensWhoseTextEndsWithAPeriod) {
  const TableTokenizer t({".", " .", ".\n", "...", "x.", "a", ".a", "", "\n", "?"});
  std::vector<bool> got;
  for (int32_t i = 0; i < 10; ++i) got.push_back(niah::ends_sentence(t, i));
  EXPECT_EQ(got,
            (std::vector<bool>{true, true, true, true, true, false, false, false, false, false}));
}

TEST_F(Niah, PromptIsTheTemplateAroundTheHaystackAndFillsTheContextExactly) {
  const nlohmann::json p = params();
  for (int len : {700, 1024, 2048}) {
    const Sample sm = s.make_sample(len, 5, 0, ctx, p);  // depth 50
    EXPECT_EQ(sm.id, "depth50-0");
    EXPECT_EQ(sm.max_new_tokens, 50);
    EXPECT_EQ(sm.prompt.size() + 50, size_t(len)) << len;
    EXPECT_EQ(sm.prompt.front(), 256);
    const std::string t = text(sm.prompt);
    const std::string head =
        "You are a helpful AI bot that answers questions for a user. Keep your response short "
        "and direct\n\nHuman: <context>\n";
    const std::string tail =
        "\n</context>\n\nWhat is the best thing to do in San Francisco? Don't give information "
        "outside the document or repeat your findings\n\nAssistant: Here is the most relevant "
        "sentence in the context:";
    ASSERT_EQ(t.substr(0, head.size()), head);
    ASSERT_EQ(t.substr(t.size() - tail.size()), tail);
    // The haystack is the essays from their first byte, with the needle inside.
    const std::string hay = t.substr(head.size(), t.size() - head.size() - tail.size());
    const std::string needle = p["needle"];
    const size_t at = hay.find(needle);
    ASSERT_NE(at, std::string::npos);
    const std::string essay = fixture_essays();
    EXPECT_EQ(hay.substr(0, at) + hay.substr(at + needle.size()),
              essay.substr(0, hay.size() - needle.size()));
    EXPECT_EQ(sm.reference, nlohmann::json::array({"eat a sandwich and sit in Dolores Park on a "
                                                   "sunny day"}));
  }
}

// Checks a sample's needle against its requested depth: the needle's ids are in the prompt
// where meta says; it starts at a sentence end at or before int(len * depth / 100) and no sentence
// ends between it and that point (the tolerance is the sentence the depth falls in); depth 100 is
// the haystack's end.
void expect_at_depth(const Sample& sm, const std::vector<int32_t>& needle, int depth,
                     const Tokenizer& tok) {
  const size_t at = sm.meta["needle_token"], begin = sm.meta["haystack_token"];
  const size_t n = sm.meta["context_tokens"], target_tok = sm.meta["target_token"];
  ASSERT_EQ(std::vector<int32_t>(sm.prompt.begin() + ptrdiff_t(at),
                                 sm.prompt.begin() + ptrdiff_t(at + needle.size())),
            needle)
      << sm.id;
  const size_t pos = at - begin, target = target_tok - begin;
  EXPECT_EQ(target, depth == 100 ? n : size_t(double(n) * (depth / 100.0))) << sm.id;
  ASSERT_LE(pos, target) << sm.id;
  if (pos > 0 && depth < 100) {  // 100 appends the needle wherever the haystack was cut
    EXPECT_TRUE(niah::ends_sentence(tok, sm.prompt[at - 1])) << sm.id;
  }
  const size_t after = at + needle.size();  // the haystack resumes here
  for (size_t k = 0; k < target - pos; ++k)
    EXPECT_FALSE(niah::ends_sentence(tok, sm.prompt[after + k]))
        << sm.id << ": a sentence ends between the needle and its depth";
  EXPECT_NEAR(sm.meta["depth_actual"].get<double>(), 100.0 * double(pos) / double(n), 1e-9);
}

TEST_F(Niah, NeedlesSitAtTheirRequestedDepths) {
  const nlohmann::json p = params();
  const std::vector<int32_t> needle = tok->encode(p["needle"].get<std::string>(), false, false);
  const auto grid = niah::depth_grid(11);
  for (int len : {1024, 4096})
    for (int i = 0; i < 22; ++i) {  // two repetitions
      const Sample sm = s.make_sample(len, i, 3, ctx, p);
      const int depth = grid[size_t(i % 11)];
      EXPECT_EQ(sm.meta["depth_percent"], depth);
      expect_at_depth(sm, needle, depth, *tok);
      // Within one sentence of the fixture (at most ~110 bytes) of the requested depth.
      EXPECT_NEAR(sm.meta["depth_actual"].get<double>(), depth,
                  100.0 * 150 / sm.meta["context_tokens"].get<double>())
          << sm.id;
    }
}

TEST_F(Niah, NeedlesSitAtTheirRequestedDepthsInTheEssays) {
  const auto d = test::shared_data("niah");
  if (!d) GTEST_SKIP() << test::missing_shared_data("niah");
  const nlohmann::json p = params({{"data", d->string()}, {"depths", 6}});
  const std::vector<int32_t> needle = tok->encode(p["needle"].get<std::string>(), false, false);
  for (int i = 0; i < 6; ++i) {
    const Sample sm = s.make_sample(8192, i, 0, ctx, p);
    expect_at_depth(sm, needle, niah::depth_grid(6)[size_t(i)], *tok);
    EXPECT_EQ(sm.prompt.size(), 8192u - 50);
  }
  // Repetition 0 is the tester's haystack: the essays from their start.
  const std::string t = text(s.make_sample(8192, 3, 0, ctx, p).prompt);
  EXPECT_NE(t.find("<context>\nJuly 2010What hard liquor"), std::string::npos);
}

TEST_F(Niah, TheSameSeedGivesIdenticalSamples) {
  const nlohmann::json p = params();
  for (int i : {0, 7, 15}) {
    const Sample a = s.make_sample(2048, i, 42, ctx, p), b = s.make_sample(2048, i, 42, ctx, p);
    EXPECT_EQ(a.prompt, b.prompt);
    EXPECT_EQ(a.meta, b.meta);
    EXPECT_EQ(a.id, b.id);
  }
  // Repetition 0 reads the essays from the start whatever the seed; later repetitions start at a
  // sentence drawn from the seed.
  EXPECT_EQ(s.make_sample(2048, 4, 1, ctx, p).prompt, s.make_sample(2048, 4, 2, ctx, p).prompt);
  const Sample r1 = s.make_sample(2048, 15, 1, ctx, p), r2 = s.make_sample(2048, 15, 2, ctx, p);
  EXPECT_EQ(r1.id, "depth40-1");
  EXPECT_NE(r1.prompt, r2.prompt);
  EXPECT_NE(r1.meta["haystack_start_byte"], 0);
  EXPECT_NE(r1.prompt, s.make_sample(2048, 4, 1, ctx, p).prompt);
  const std::string t = text(r1.prompt);
  EXPECT_NE(t.find("<context>\nSentence "), std::string::npos) << "starts at a sentence";
}

TEST_F(Niah, ScoresExactContainmentOfTheValueUpToEos) {
  const nlohmann::json p = params();
  const Sample sm = s.make_sample(1024, 2, 0, ctx, p);  // depth 20
  const auto score = [&](const std::string& gen, const SuiteContext& c) {
    Generation g;
    g.tokens = tok->encode(gen, false, false);
    return s.score(sm, g, nullptr, c, p);
  };
  const Scores full = score(
      " The best thing to do in San Francisco is eat a sandwich and sit in Dolores Park on "
      "a sunny day.",
      ctx);
  EXPECT_EQ(full.at("niah.score"), 100.0);
  EXPECT_EQ(full.at("niah.depth"), 20.0);
  EXPECT_EQ(full.at("niah.depth_actual"), sm.meta["depth_actual"].get<double>());
  EXPECT_EQ(full.size(), 3u);
  // Case does not matter (CritiPrefill's expected answers start "Eat a sandwich").
  EXPECT_EQ(score("Eat a sandwich and sit in Dolores Park on a sunny day", ctx).at("niah.score"),
            100.0);
  EXPECT_EQ(score("EAT A SANDWICH AND SIT IN DOLORES PARK ON A SUNNY DAY!", ctx).at("niah.score"),
            100.0);
  // Part of the value, a paraphrase, or nothing: 0.
  EXPECT_EQ(score("eat a sandwich and sit in Dolores Park", ctx).at("niah.score"), 0.0);
  EXPECT_EQ(score("eat a sandwich and sit  in Dolores Park on a sunny day", ctx).at("niah.score"),
            0.0);
  EXPECT_EQ(score("", ctx).at("niah.score"), 0.0);
  // What follows the first EOS was never generated.
  Generation g;
  g.tokens = {'O', 'k', 257};
  const auto rest =
      tok->encode("eat a sandwich and sit in Dolores Park on a sunny day", false, false);
  g.tokens.insert(g.tokens.end(), rest.begin(), rest.end());
  EXPECT_EQ(s.score(sm, g, nullptr, ctx, p).at("niah.score"), 0.0);
  g.tokens.erase(g.tokens.begin() + 2);  // without the EOS
  EXPECT_EQ(s.score(sm, g, nullptr, ctx, p).at("niah.score"), 100.0);
  const SuiteContext no_tok{258, 256, 257, nullptr};
  EXPECT_THROW(s.score(sm, g, nullptr, no_tok, p), std::invalid_argument);
  // str.lower() semantics beyond ASCII.
  EXPECT_EQ(niah::contains_answer("à L'ÉCOLE", "l'école"), 100.0);
  EXPECT_EQ(niah::contains_answer("ecole", "école"), 0.0);
}

TEST_F(Niah, CustomNeedlesAndClearRefusals) {
  const nlohmann::json p = params({{"needle", " The passkey is 71432. "},
                                   {"retrieval_question", "What is the passkey?"},
                                   {"answer", "71432"},
                                   {"depths", 3}});
  const Sample sm = s.make_sample(1024, 1, 0, ctx, p);
  EXPECT_EQ(sm.id, "depth50-0");
  EXPECT_NE(text(sm.prompt).find("What is the passkey? Don't give"), std::string::npos);
  expect_at_depth(sm, tok->encode(" The passkey is 71432. ", false, false), 50, *tok);

  EXPECT_NE(error_of(1024, 0, params({{"answer", "pizza"}})).find("does not occur in the needle"),
            std::string::npos);
  EXPECT_NE(error_of(1024, 0, params({{"data", ""}})).find("needs the suite parameter 'data'"),
            std::string::npos);
  EXPECT_NE(error_of(300, 0, params()).find("context too short"), std::string::npos);
  const SuiteContext no_tok{258, 256, 257, nullptr};
  EXPECT_THROW(s.make_sample(1024, 0, 0, no_tok, params()), std::invalid_argument);
}

// A plan's prompt_template replaces gkamradt's wording around the same haystack and needle; a
// template missing or repeating a placeholder, or combined with the chat template, is refused.
TEST_F(Niah, PromptTemplateWrapsTheHaystackAndBadTemplatesAreRefusedNamingTheParameter) {
  const std::string tmpl = "Memorize this.\n{context}\n{retrieval_question} The answer is";
  const Sample sm = s.make_sample(1024, 5, 0, ctx, params({{"prompt_template", tmpl}}));
  EXPECT_EQ(sm.prompt.size() + 50, 1024u);
  const std::string t = text(std::span(sm.prompt).subspan(1));
  EXPECT_EQ(t.rfind("Memorize this.\n", 0), 0u) << t.substr(0, 80);
  const std::string tail = "\nWhat is the best thing to do in San Francisco? The answer is";
  ASSERT_GE(t.size(), tail.size());
  EXPECT_EQ(t.substr(t.size() - tail.size()), tail);
  EXPECT_NE(t.find("eat a sandwich and sit in Dolores Park"), std::string::npos);
  EXPECT_EQ(t.find("Don't give"), std::string::npos);

  EXPECT_NE(error_of(1024, 0, params({{"prompt_template", "no context {retrieval_question}"}}))
                .find("prompt_template must contain {context} exactly once (it has 0)"),
            std::string::npos);
  EXPECT_NE(
      error_of(1024, 0,
               params({{"prompt_template", "{context} {retrieval_question} {retrieval_question}"}}))
          .find("{retrieval_question} exactly once (it has 2)"),
      std::string::npos);
  EXPECT_NE(error_of(1024, 0, params({{"prompt_template", tmpl}, {"model_template", "gguf"}}))
                .find("exclude each other"),
            std::string::npos);
}

TEST_F(Niah, GgufTemplatePutsKamradtsPromptInTheModelsChatTurns) {
  const ChatTemplate chatml = ChatTemplate::recognise(
      "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + "
      "message['content'] + '<|im_end|>' + '\\n'}}{% endfor %}{% if add_generation_prompt %}{{ "
      "'<|im_start|>assistant\\n' }}{% endif %}",
      "test.gguf: tokenizer.chat_template", "", "");
  SuiteContext c = ctx;
  c.chat_template = &chatml;
  const nlohmann::json p = params({{"model_template", "gguf"}});
  const Sample sm = s.make_sample(1024, 5, 0, c, p);
  EXPECT_EQ(sm.prompt.size() + 50, 1024u);
  EXPECT_EQ(sm.prompt.front(), 256);  // BOS: the template does not spell one
  const std::string t = text(std::span(sm.prompt).subspan(1));
  const std::string head =
      "<|im_start|>system\nYou are a helpful AI bot that answers questions for a user. Keep your "
      "response short and direct<|im_end|>\n<|im_start|>user\n<context>\n";
  const std::string tail =
      "\n</context>\n\nWhat is the best thing to do in San Francisco? Don't give information "
      "outside the document or repeat your findings<|im_end|>\n<|im_start|>assistant\nHere is "
      "the most relevant sentence in the context:";
  EXPECT_EQ(t.rfind(head, 0), 0u) << t.substr(0, 200);
  ASSERT_GE(t.size(), tail.size());
  EXPECT_EQ(t.substr(t.size() - tail.size()), tail);
  EXPECT_NE(t.find("eat a sandwich and sit in Dolores Park"), std::string::npos);
  EXPECT_EQ(sm.meta.at("model_template"), "gguf:chatml");
  EXPECT_FALSE(s.make_sample(1024, 5, 0, ctx, params()).meta.contains("model_template"));
  // Its chat turns (what an endpoint with api "chat" sends): system, user (the haystack with the
  // needle and the question), and the assistant's opening to continue; rendered that way and
  // tokenized whole they give the prompt (byte-level pieces: tokenizing in parts changes nothing).
  ASSERT_EQ(sm.messages.size(), 3u);
  EXPECT_EQ(sm.messages[2].role, "assistant");
  EXPECT_EQ(sm.messages[2].content, "Here is the most relevant sentence in the context:");
  const std::string rendered =
      chatml.apply(std::span(sm.messages).first(2), true) + sm.messages[2].content;
  EXPECT_EQ(rendered, t);
  std::vector<int32_t> ids = {256};
  const std::vector<int32_t> body = tok->encode(rendered, false, true);
  ids.insert(ids.end(), body.begin(), body.end());
  EXPECT_EQ(ids, sm.prompt);
  EXPECT_TRUE(s.make_sample(1024, 5, 0, ctx, params()).messages.empty());

  c.chat_template = nullptr;
  c.chat_template_note = "m.gguf has no tokenizer.chat_template";
  try {
    s.make_sample(1024, 5, 0, c, p);
    FAIL() << "no error";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("m.gguf has no tokenizer.chat_template"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace accel
