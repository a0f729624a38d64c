// The ruler suite as the harness sees it: registry and parameters, the mapping of sample indices
// to tasks, scoring of generated tokens through the context's tokenizer, and clear refusals.
#include "suites/ruler.h"

#include <gtest/gtest.h>

#include "models/tokenizer.h"
#include "suites/ruler_tasks.h"
#include "tests/support/test_support.h"

namespace accel {
namespace {

const std::string kFixtures = ACCELBENCH_SOURCE_DIR "/tests/suites/fixtures/";

struct RulerSuiteTest : ::testing::Test {
  const Suite& s = find_suite("ruler");
  std::unique_ptr<Tokenizer> tok = Tokenizer::create(byte_level_tokenizer_spec());
  SuiteContext ctx{258, 256, 257, tok.get()};
  nlohmann::json params(nlohmann::json given) const { return resolve_suite_params(s, given); }
  std::string error_of(int len, int index, uint64_t seed, const nlohmann::json& p,
                       const SuiteContext* c = nullptr) const {
    try {
      s.make_sample(len, index, seed, c ? *c : ctx, p);
    } catch (const std::invalid_argument& e) {
      return e.what();
    }
    return "(no error)";
  }
};

TEST_F(RulerSuiteTest, IsRegisteredWithItsParamsMetricsAndTheSubstitutionsInItsVersion) {
  EXPECT_EQ(s.name(), "ruler");
  EXPECT_NE(s.version().find("essay-words"), std::string::npos);
  EXPECT_NE(s.version().find("rule-sentences"), std::string::npos);
  EXPECT_NE(s.summary().find("not wonderwords"), std::string::npos);
  const nlohmann::json p = params(nlohmann::json::object());
  EXPECT_EQ(p["task"], "niah_single_1");
  EXPECT_EQ(p["model_template"], "base");
  EXPECT_EQ(p["data"], "");
  EXPECT_THROW(params({{"task", "niah_single_4"}}), std::invalid_argument);
  EXPECT_THROW(params({{"model_template", "llama9"}}), std::invalid_argument);
  std::set<std::string> names;
  for (const auto& m : s.metrics()) names.insert(m.name);
  EXPECT_EQ(names, (std::set<std::string>{"ruler.score", "ruler.string_match_all",
                                          "ruler.string_match_part", "ruler.null"}));
  EXPECT_EQ(s.reference_need(p).kind, ReferenceNeed::Kind::None);
  EXPECT_EQ(ruler::ruler_tasks().size(), 13u);
}

TEST_F(RulerSuiteTest, ScoresTheDecodedGenerationAgainstTheReferences) {
  const nlohmann::json p = params({{"task", "fwe"}});
  const Sample sample = s.make_sample(4096, 0, 1, ctx, p);
  const auto gold = sample.reference.get<std::vector<std::string>>();
  ASSERT_EQ(gold.size(), 3u);
  Generation out;
  out.tokens = tok->encode(" " + gold[0] + ", " + gold[2] + "\n", false, false);
  out.tokens.push_back(257);  // EOS decodes to nothing
  Scores sc = s.score(sample, out, nullptr, ctx, p);
  EXPECT_NEAR(sc.at("ruler.score"), 200.0 / 3, 1e-12);
  EXPECT_EQ(sc.at("ruler.string_match_part"), 100.0);
  EXPECT_EQ(sc.at("ruler.null"), 0.0);
  const std::vector<int32_t> answer = out.tokens;
  out.tokens = {257};
  sc = s.score(sample, out, nullptr, ctx, p);
  EXPECT_EQ(sc.at("ruler.score"), 0.0);
  EXPECT_EQ(sc.at("ruler.null"), 1.0);

  // The generation is decoded with the context's tokenizer, whatever made the sample: through a
  // vocabulary whose letters are rotated by one the same ids spell other words, and that
  // vocabulary's own encoding of the answer scores as the answer.
  TokenizerSpec spec = byte_level_tokenizer_spec();
  for (int c = 'a'; c <= 'z'; ++c)
    spec.tokens[size_t(c)] = std::string(1, char('a' + (c - 'a' + 1) % 26));
  const auto rotated = Tokenizer::create(spec);
  const SuiteContext rctx{258, 256, 257, rotated.get()};
  out.tokens = answer;
  EXPECT_EQ(s.score(sample, out, nullptr, rctx, p).at("ruler.score"), 0.0);
  out.tokens = rotated->encode(" " + gold[0] + ", " + gold[2] + "\n", false, false);
  ASSERT_NE(out.tokens, answer);
  EXPECT_NEAR(s.score(sample, out, nullptr, rctx, p).at("ruler.score"), 200.0 / 3, 1e-12);
  // A model without a tokenizer cannot be scored.
  const SuiteContext no_tok{258, 256, 257, nullptr};
  EXPECT_THROW(s.score(sample, out, nullptr, no_tok, p), std::invalid_argument);
}

TEST_F(RulerSuiteTest, AllAndSyntheticTakeTheTasksInTurn) {
  const nlohmann::json all = params({{"task", "all"},
                                     {"squad", kFixtures + "ruler_squad.json"},
                                     {"hotpotqa", kFixtures + "ruler_hotpotqa.json"}});
  EXPECT_EQ(s.make_sample(4096, 11, 0, ctx, all).id, "qa_1-0");
  EXPECT_EQ(s.make_sample(4096, 12 + 13, 0, ctx, all).id, "qa_2-1");
  EXPECT_EQ(s.make_sample(4096, 8 + 26, 0, ctx, all).id, "vt-2");
  const nlohmann::json syn = params({{"task", "synthetic"}});
  EXPECT_EQ(s.make_sample(4096, 10 + 11, 0, ctx, syn).id, "fwe-1");
}

TEST_F(RulerSuiteTest, RefusesMissingInputsNamingTheParameter) {
  EXPECT_NE(
      error_of(4096, 0, 0, params({{"task", "qa_1"}})).find("needs the suite parameter 'squad'"),
      std::string::npos);
  EXPECT_NE(
      error_of(4096, 0, 0, params({{"task", "qa_2"}})).find("needs the suite parameter 'hotpotqa'"),
      std::string::npos);
  EXPECT_NE(error_of(4096, 0, 0, params({{"task", "niah_single_2"}}))
                .find("niah_single_2: needs the suite parameter 'data'"),
            std::string::npos);
  EXPECT_NE(error_of(4096, 0, 0, params({{"task", "cwe"}, {"data", "/nonexistent"}}))
                .find("no essay text at data '/nonexistent'"),
            std::string::npos);
  EXPECT_NE(
      error_of(4096, 6, 0, params({{"task", "qa_1"}, {"squad", kFixtures + "ruler_squad.json"}}))
          .find("needs question 6 but"),
      std::string::npos);
  EXPECT_NE(error_of(4096, 0, uint64_t(1) << 32, params({{"task", "vt"}})).find("below 2^32"),
            std::string::npos);
  const SuiteContext no_tok{258, 256, 257, nullptr};
  EXPECT_NE(error_of(4096, 0, 0, params({{"task", "vt"}}), &no_tok).find("no tokenizer"),
            std::string::npos);
}

TEST_F(RulerSuiteTest, ChatTemplatesWrapTheTaskAndKeepTheAnswerPrefixLast) {
  const Sample sample =
      s.make_sample(4096, 0, 0, ctx, params({{"task", "vt"}, {"model_template", "meta-chat"}}));
  const std::string text = sample.meta["input"].get<std::string>();
  EXPECT_EQ(text.rfind("[INST] ", 0), 0u);
  EXPECT_NE(text.find(" [/INST]"), std::string::npos);
  EXPECT_EQ(sample.meta["answer_prefix"].get<std::string>().rfind(" Answer: According to", 0), 0u);
}

}  // namespace
}  // namespace accel

namespace accel {
namespace {

// model_template "gguf": the model's own chat template around the task, the answer prefix inside
// the assistant turn, the family recorded; the same sample as "base" inside the turn markers.
// A model without a usable template is refused with the context's note.
TEST_F(RulerSuiteTest, GgufTemplateWrapsTheTaskInTheModelsChatTurnWithTheAnswerPrefixInside) {
  const ChatTemplate chatml = ChatTemplate::recognise(
      "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + "
      "message['content'] + '<|im_end|>' + '\\n'}}{% endfor %}{% if add_generation_prompt %}{{ "
      "'<|im_start|>assistant\\n' }}{% endif %}",
      "test.gguf: tokenizer.chat_template", "", "");
  SuiteContext c = ctx;
  c.chat_template = &chatml;
  const nlohmann::json p = params({{"task", "vt"}, {"model_template", "gguf"}});
  const Sample chat = s.make_sample(2048, 0, 3, c, p);
  const std::string text = tok->decode(std::span(chat.prompt).subspan(1));  // after BOS
  const std::string prefix = chat.meta.at("answer_prefix").get<std::string>();
  EXPECT_EQ(text.rfind("<|im_start|>user\n", 0), 0u) << text.substr(0, 80);
  const std::string tail = "<|im_end|>\n<|im_start|>assistant\n" + prefix;
  ASSERT_GE(text.size(), tail.size());
  EXPECT_EQ(text.substr(text.size() - tail.size()), tail);
  EXPECT_EQ(chat.meta.at("model_template"), "gguf:chatml");
  EXPECT_LE(chat.prompt.size() + size_t(chat.max_new_tokens), 2048u);
  // Its chat turns (what an endpoint with api "chat" sends): the task as the user turn and the
  // answer prefix as the assistant turn to continue; rendered that way they give the same text.
  ASSERT_EQ(chat.messages.size(), 2u);
  EXPECT_EQ(chat.messages[0].role, "user");
  EXPECT_EQ(chat.messages[1].role, "assistant");
  EXPECT_EQ(chat.messages[1].content, prefix);
  EXPECT_EQ(chatml.apply(std::span(chat.messages).first(1), true) + prefix, text);
  EXPECT_TRUE(s.make_sample(2048, 0, 3, ctx, params({{"task", "vt"}})).messages.empty());

  c.chat_template = nullptr;
  c.chat_template_note = "m.gguf has no tokenizer.chat_template";
  const std::string err = error_of(2048, 0, 3, p, &c);
  EXPECT_NE(err.find("model_template 'gguf'"), std::string::npos) << err;
  EXPECT_NE(err.find("m.gguf has no tokenizer.chat_template"), std::string::npos) << err;
}

}  // namespace
}  // namespace accel
