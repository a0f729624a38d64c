// The LongBench suite end to end on the fixtures (official JSONL format) with the synthetic
// families' byte-level tokenizer (one token per byte, BOS 256, EOS 257): prompts are the task
// templates filled with the record, middle truncation keeps the first and last halves in tokens,
// generations are cut and decoded as pred.py does, and scores follow eval.py.
#include "suites/longbench.h"

#include <gtest/gtest.h>

#include <set>

#include "models/tokenizer.h"
#include "suites/python_text.h"
#include "tests/support/jieba_data.h"

namespace accel {
namespace {

const std::string kFixtures =
    std::string(ACCELBENCH_SOURCE_DIR) + "/tests/suites/fixtures/longbench";

struct LongBench : ::testing::Test {
  LongBenchSuite suite;
  std::unique_ptr<Tokenizer> tok = Tokenizer::create(byte_level_tokenizer_spec());
  SuiteContext ctx{258, 256, 257, tok.get()};
  nlohmann::json params(nlohmann::json given) const {
    if (!given.contains("data_dir")) given["data_dir"] = kFixtures;
    return resolve_suite_params(suite, given);
  }
  std::string text(const Sample& s) const {  // the prompt without its BOS
    EXPECT_EQ(s.prompt.at(0), 256);
    return tok->decode(std::span<const int32_t>(s.prompt).subspan(1));
  }
  std::vector<int32_t> bytes(std::string_view s) const { return tok->encode(s, false, false); }
  std::string error_of(const nlohmann::json& p, int index, int len = 4096) const {
    try {
      suite.make_sample(len, index, 0, ctx, params(p));
    } catch (const std::exception& e) {
      return e.what();
    }
    return "no error";
  }
};

TEST_F(LongBench, PromptIsTheTaskTemplateFilledWithTheRecord) {
  const Sample s = suite.make_sample(4096, 0, 0, ctx, params({{"tasks", "qasper"}}));
  EXPECT_EQ(s.id, "qasper/0");
  EXPECT_EQ(s.max_new_tokens, 128);  // dataset2maxlen
  std::string filled(longbench::find_task("qasper")->prompt);
  filled.replace(filled.find("{context}"), 9,
                 "We train all models on the Wiki-103 corpus. Results follow in Table 2.");
  filled.replace(filled.find("{input}"), 7, "Which corpus do the authors train on?");
  EXPECT_EQ(text(s), filled);
  EXPECT_EQ(s.prompt.size(), filled.size() + 1);
  EXPECT_EQ(s.reference["answers"], nlohmann::json({"Wiki-103", "the Wiki-103 corpus"}));
  EXPECT_EQ(s.meta["task"], "qasper");
  EXPECT_EQ(s.meta["_id"], "fx0001");
  EXPECT_EQ(s.meta["truncated"], false);
  EXPECT_EQ(s.meta["category"], "Single-Doc QA");
  // Same arguments, same sample (the seed plays no part: LongBench is a fixed set).
  EXPECT_EQ(suite.make_sample(4096, 0, 9, ctx, params({{"tasks", "qasper"}})).prompt, s.prompt);
}

TEST_F(LongBench, MiddleTruncationKeepsTheFirstAndLastHalvesInTokens) {
  const Sample full = suite.make_sample(4096, 1, 0, ctx, params({{"tasks", "qasper"}}));
  const std::string whole = text(full);  // 1 + whole.size() tokens with BOS
  for (int max_len : {64, 65, 101}) {
    const Sample s = suite.make_sample(max_len, 1, 0, ctx, params({{"tasks", "qasper"}}));
    const size_t half = size_t(max_len / 2);
    // The first half holds BOS, which decodes to nothing: half - 1 bytes of text.
    EXPECT_EQ(text(s), whole.substr(0, half - 1) + whole.substr(whole.size() - half)) << max_len;
    EXPECT_EQ(s.prompt.size(), 2 * half) << max_len;  // BOS + (half - 1) + half
    EXPECT_EQ(s.meta["truncated"], true);
    EXPECT_EQ(s.meta["prompt_tokens_before_truncation"], whole.size() + 1);
  }
  // Exactly at the budget nothing is cut.
  const Sample at =
      suite.make_sample(int(whole.size() + 1), 1, 0, ctx, params({{"tasks", "qasper"}}));
  EXPECT_EQ(at.prompt, full.prompt);
  EXPECT_EQ(at.meta["truncated"], false);
}

TEST_F(LongBench, TruncationInsideAUtf8CharacterGivesReplacementCharacters) {
  // Chinese text is 3 bytes per character here; each half is decoded on its own and ill-formed
  // bytes at the cut become U+FFFD, as a Hugging Face decode does. (Scoring is not under test:
  // segmenter=char needs no jieba data.)
  const Sample s = suite.make_sample(40, 0, 0, ctx,
                                     params({{"tasks", "multifieldqa_zh"}, {"segmenter", "char"}}));
  const std::string t = text(s);
  EXPECT_EQ(pytext::utf8_invalid_at(t), std::string::npos);
  EXPECT_EQ(t.substr(0, 18), "阅读以下文字");  // 19 bytes of text: 6 characters and 1 byte
  EXPECT_NE(t.find("\xEF\xBF\xBD"), std::string::npos);
  EXPECT_EQ(t.substr(t.size() - 9), "回答：");
}

TEST_F(LongBench, TasksAreConcatenatedInTheGivenOrder) {
  const auto p = params({{"tasks", "trec, qasper"}});
  EXPECT_EQ(suite.make_sample(4096, 0, 0, ctx, p).id, "trec/0");
  EXPECT_EQ(suite.make_sample(4096, 1, 0, ctx, p).id, "trec/1");
  EXPECT_EQ(suite.make_sample(4096, 2, 0, ctx, p).id, "qasper/0");
  EXPECT_EQ(suite.make_sample(4096, 3, 0, ctx, p).id, "qasper/1");
  EXPECT_NE(error_of({{"tasks", "trec,qasper"}}, 4).find("the selected tasks have 4 records"),
            std::string::npos);
  EXPECT_NE(error_of({{"tasks", "qasper,nq"}}, 0).find("unknown task 'nq'"), std::string::npos);
  EXPECT_NE(error_of({{"tasks", "qasper,qasper"}}, 0).find("named twice"), std::string::npos);
  // "all" needs every task's file: the fixtures do not have narrativeqa.
  EXPECT_NE(error_of({{"tasks", "all"}}, 0).find("narrativeqa.jsonl: no such file"),
            std::string::npos);
}

TEST_F(LongBench, RefusesClearlyWithoutData) {
  EXPECT_NE(error_of({{"data_dir", ""}}, 0).find("parameter 'data_dir' is required"),
            std::string::npos);
  EXPECT_NE(error_of({{"data_dir", "/nonexistent"}, {"tasks", "qasper"}}, 0)
                .find("/nonexistent/qasper.jsonl: no such file"),
            std::string::npos);
  SuiteContext no_tok = ctx;
  no_tok.tokenizer = nullptr;
  EXPECT_THROW(suite.make_sample(4096, 0, 0, no_tok, params({{"tasks", "qasper"}})),
               std::invalid_argument);
  EXPECT_THROW(resolve_suite_params(suite, {{"chat_format", "vicuna"}}), std::invalid_argument);
}

TEST_F(LongBench, Llama2ChatWrapsExceptTheCompletionStyleTasks) {
  const auto p = params({{"tasks", "qasper,trec"}, {"chat_format", "llama2"}});
  const std::string q = text(suite.make_sample(4096, 0, 0, ctx, p));
  EXPECT_EQ(q.substr(0, 6), "[INST]");
  EXPECT_EQ(q.substr(q.size() - 7), "[/INST]");
  const std::string t = text(suite.make_sample(4096, 2, 0, ctx, p));
  EXPECT_EQ(t.substr(0, 27), "Please determine the type o");
}

// chat_format gguf: the model's own template around the prompt as one user turn (ChatML here),
// recorded with its family; the completion-style tasks stay raw; no template is refused by name.
TEST_F(LongBench, GgufChatWrapsInTheModelsTemplateExceptTheCompletionStyleTasks) {
  const ChatTemplate chatml = ChatTemplate::recognise(
      "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + "
      "message['content'] + '<|im_end|>' + '\\n'}}{% endfor %}{% if add_generation_prompt %}{{ "
      "'<|im_start|>assistant\\n' }}{% endif %}",
      "test.gguf: tokenizer.chat_template", "", "");
  SuiteContext c = ctx;
  c.chat_template = &chatml;
  const auto p = params({{"tasks", "qasper,trec"}, {"chat_format", "gguf"}});
  const Sample qs = suite.make_sample(4096, 0, 0, c, p);
  const std::string q = text(qs);
  EXPECT_EQ(q.rfind("<|im_start|>user\n", 0), 0u) << q.substr(0, 40);
  const std::string end = "<|im_end|>\n<|im_start|>assistant\n";
  EXPECT_EQ(q.substr(q.size() - end.size()), end);
  EXPECT_EQ(qs.meta.at("chat_format"), "gguf:chatml");
  // Its chat form (what an endpoint with api "chat" sends) is the one user turn it renders from.
  ASSERT_EQ(qs.messages.size(), 1u);
  EXPECT_EQ(qs.messages[0].role, "user");
  EXPECT_EQ(chatml.apply(qs.messages, true), q);
  const Sample ts = suite.make_sample(4096, 2, 0, c, p);
  const std::string t = text(ts);
  EXPECT_EQ(t.substr(0, 27), "Please determine the type o");
  EXPECT_TRUE(ts.messages.empty());  // a completion-style task is not a chat turn
  c.chat_template = nullptr;
  c.chat_template_note = "m.gguf has no tokenizer.chat_template";
  try {
    suite.make_sample(4096, 0, 0, c, p);
    ADD_FAILURE() << "no error";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("m.gguf has no tokenizer.chat_template"),
              std::string::npos);
  }
}

TEST_F(LongBench, ScoresTheDecodedGenerationUpToEos) {
  const auto p = params({{"tasks", "qasper"}});
  const Sample s = suite.make_sample(4096, 0, 0, ctx, p);
  Generation g;
  g.tokens = bytes(" Wiki-103");
  g.tokens.push_back(257);  // EOS: what follows is not part of the prediction
  const auto junk = bytes(" and more words");
  g.tokens.insert(g.tokens.end(), junk.begin(), junk.end());
  EXPECT_EQ(LongBenchSuite::prediction_text(s, g.tokens, *tok), " Wiki-103");
  const Scores sc = suite.score(s, g, nullptr, ctx, p);
  ASSERT_EQ(sc.size(), 1u);
  EXPECT_EQ(sc.at("longbench.qasper"), 100.0);
  g.tokens = bytes("Wiki-103 corpus");  // F1 with the best answer "the Wiki-103 corpus": 1
  EXPECT_EQ(suite.score(s, g, nullptr, ctx, p).at("longbench.qasper"), 100.0);
  g.tokens = bytes("Wikipedia");
  EXPECT_EQ(suite.score(s, g, nullptr, ctx, p).at("longbench.qasper"), 0.0);
  // Ill-formed bytes decode to U+FFFD instead of failing.
  g.tokens = {0xC3, 'x'};
  EXPECT_EQ(LongBenchSuite::prediction_text(s, g.tokens, *tok), "\xEF\xBF\xBDx");

  // Scoring needs no state from make_sample: another suite object scores the sample through the
  // context it is given, and a vocabulary whose letters are rotated by one decodes the same ids
  // to other words (F1 0).
  g.tokens = bytes(" Wiki-103");
  EXPECT_EQ(LongBenchSuite().score(s, g, nullptr, ctx, p).at("longbench.qasper"), 100.0);
  TokenizerSpec spec = byte_level_tokenizer_spec();
  for (int c = 'a'; c <= 'z'; ++c)
    spec.tokens[size_t(c)] = std::string(1, char('a' + (c - 'a' + 1) % 26));
  const auto rotated = Tokenizer::create(spec);
  SuiteContext rctx = ctx;
  rctx.tokenizer = rotated.get();
  EXPECT_EQ(LongBenchSuite::prediction_text(s, g.tokens, *rotated), " Wjlj-103");
  EXPECT_EQ(suite.score(s, g, nullptr, rctx, p).at("longbench.qasper"), 0.0);
  SuiteContext no_tok = ctx;
  no_tok.tokenizer = nullptr;
  EXPECT_THROW(suite.score(s, g, nullptr, no_tok, p), std::invalid_argument);
}

TEST_F(LongBench, SamsumStopsAtANewlineExceptAsTheFirstToken) {
  const auto p = params({{"tasks", "samsum"}});
  const Sample s = suite.make_sample(4096, 0, 0, ctx, p);
  EXPECT_EQ(s.meta["newline_token"], int('\n'));
  Generation g;
  g.tokens = bytes("\nAnn and Bob will have lunch at noon.\nDialogue: more");
  EXPECT_EQ(LongBenchSuite::prediction_text(s, g.tokens, *tok),
            "\nAnn and Bob will have lunch at noon.");
  // ROUGE-L of the (first-line) prediction against the identical summary.
  EXPECT_EQ(suite.score(s, g, nullptr, ctx, p).at("longbench.samsum"), 100 * 0.999999995);
}

TEST_F(LongBench, FuzzParameterChoosesCodeSimsBackendAndIsStored) {
  // fuzzywuzzy 0.18.0 printed 0.45 without python-Levenshtein and 0.57 with it.
  const std::string_view pred = "r math.pi      return (";
  const auto difflib = params({{"tasks", "lcc"}});
  EXPECT_EQ(difflib.at("fuzz"), "difflib");  // the default, stored with the resolved params
  const Sample s = suite.make_sample(4096, 0, 0, ctx, difflib);
  EXPECT_EQ(suite.score_prediction(s, pred, difflib).at("longbench.lcc"), 100 * 0.45);
  const auto lev = params({{"tasks", "lcc"}, {"fuzz", "levenshtein"}});
  EXPECT_EQ(suite.score_prediction(s, pred, lev).at("longbench.lcc"), 100 * 0.57);
  EXPECT_THROW(params({{"tasks", "lcc"}, {"fuzz", "rapidfuzz"}}), std::invalid_argument);
}

TEST_F(LongBench, ClassificationUsesTheFileLastAllClassesAndFirstLine) {
  const auto p = params({{"tasks", "trec"}});
  const Sample s = suite.make_sample(4096, 1, 0, ctx, p);
  EXPECT_EQ(s.reference["all_classes"].size(), 10u);
  EXPECT_EQ(suite.score_prediction(s, " Manner of an action\nReason", p).at("longbench.trec"),
            100.0);
  EXPECT_EQ(suite.score_prediction(s, "Reason", p).at("longbench.trec"), 0.0);
}

TEST_F(LongBench, EveryTaskKindScoresThroughTheSuite) {
  const auto one = [&](const std::string& task, std::string_view pred) {
    const auto p = params({{"tasks", task}, {"segmenter", "char"}});
    const Sample s = suite.make_sample(4096, 0, 0, ctx, p);
    return suite.score_prediction(s, pred, p).at("longbench." + task);
  };
  EXPECT_EQ(one("passage_retrieval_en", "Paragraph 2"), 100.0);
  EXPECT_EQ(one("passage_retrieval_zh", "段落2"), 100.0);
  EXPECT_EQ(one("passage_count", "2 or 3"), 50.0);
  EXPECT_EQ(one("lcc", "```\n    return math.pi * r * r\n```"), 100.0);
  EXPECT_EQ(one("multifieldqa_zh", "北京"), 100 * 0.5);  // char: 北京 vs 北京清华大学, P 1, R 2/6
  EXPECT_EQ(one("gov_report", "Spending rose. The report recommends audits."), 100 * 0.999999995);
}

TEST_F(LongBench, LongBenchEAddsTheLengthBucketMetric) {
  const auto p = params({{"tasks", "qasper"}, {"longbench_e", true}});
  const char* buckets[] = {"0-4k", "4-8k", "8k+"};
  for (int i = 0; i < 3; ++i) {
    const Sample s = suite.make_sample(4096, i, 0, ctx, p);
    EXPECT_EQ(s.id, "qasper_e/" + std::to_string(i));
    const Scores sc = suite.score_prediction(s, "nothing", p);
    ASSERT_EQ(sc.size(), 2u);
    EXPECT_TRUE(sc.count(std::string("longbench.qasper.") + buckets[i])) << i;
  }
  EXPECT_NE(error_of({{"tasks", "lsht"}, {"longbench_e", true}}, 0).find("not part of LongBench-E"),
            std::string::npos);
  // "all" with longbench_e is LongBench-E's 13 tasks.
  EXPECT_EQ(longbench::parse_task_list("all", true).size(), 13u);
  EXPECT_EQ(longbench::parse_task_list("all", false).size(), 21u);
}

TEST_F(LongBench, ChineseTasksAreScoredWithJiebaByDefault) {
  ACCEL_REQUIRE(test::missing_jieba_data());
  const auto p = params({{"tasks", "multifieldqa_zh"}});
  EXPECT_EQ(p["segmenter"], "jieba");  // resolved params are part of every case's identity
  const Sample s = suite.make_sample(4096, 0, 0, ctx, p);
  // jieba: 北京 / 清华大学, P 1, R 1/2 (metrics.py gives 0.6666666666666666).
  EXPECT_EQ(suite.score_prediction(s, "北京", p).at("longbench.multifieldqa_zh"),
            100 * 0.6666666666666666);
}

TEST_F(LongBench, WithoutJiebaDataChineseTasksAreRefusedNotApproximated) {
  const nlohmann::json missing = {{"tasks", "multifieldqa_zh"}, {"jieba_dir", "/nonexistent/j"}};
  const std::string e = error_of(missing, 0);
  EXPECT_NE(e.find("task 'multifieldqa_zh' is scored with jieba"), std::string::npos) << e;
  EXPECT_NE(e.find("/nonexistent/j/dict.txt"), std::string::npos) << e;
  EXPECT_NE(e.find("ACCELBENCH_JIEBA_DIR"), std::string::npos) << e;
  EXPECT_NE(e.find("segmenter=char"), std::string::npos) << e;
  // Asked for by name, the character cut scores without jieba; tasks that never call jieba
  // (retrieval, English) do not need it.
  nlohmann::json with_char = missing;
  with_char["segmenter"] = "char";
  const auto p = params(with_char);
  EXPECT_EQ(p["segmenter"], "char");
  const Sample s = suite.make_sample(4096, 0, 0, ctx, p);
  EXPECT_EQ(suite.score_prediction(s, "北京", p).at("longbench.multifieldqa_zh"), 100 * 0.5);
  EXPECT_EQ(error_of({{"tasks", "passage_retrieval_zh"}, {"jieba_dir", "/nonexistent/j"}}, 0),
            "no error");
  EXPECT_NE(error_of({{"segmenter", "words"}}, 0).find("segmenter"), std::string::npos);
}

TEST_F(LongBench, DeclaresEveryMetricItReturnsAndItsSegmenter) {
  std::set<std::string> declared;
  for (const MetricSpec& m : suite.metrics()) {
    EXPECT_TRUE(declared.insert(m.name).second) << m.name;
    EXPECT_TRUE(m.higher_is_better);
  }
  EXPECT_EQ(declared.size(), 21u + 13u * 3u);
  EXPECT_TRUE(declared.count("longbench.repobench-p"));
  EXPECT_TRUE(declared.count("longbench.lcc.8k+"));
  EXPECT_EQ(suite.version(), "3");  // 1-zhchar cut Chinese per character; 2-zhchar added fuzz
  EXPECT_NE(suite.summary().find("jieba 0.42.1"), std::string::npos);
}

}  // namespace
}  // namespace accel
