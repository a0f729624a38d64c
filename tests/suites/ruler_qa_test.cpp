// The qa_1/qa_2 readers on fixtures in the SQuAD v2.0 and HotpotQA formats (fixtures/ruler_*.json),
// and hostile files: each fault is refused naming the file and the field.
#include "suites/ruler_qa.h"

#include <gtest/gtest.h>

#include <fstream>

#include "tests/support/test_support.h"

namespace accel::ruler {
namespace {

const std::string kFixtures = ACCELBENCH_SOURCE_DIR "/tests/suites/fixtures/";

TEST(RulerQa, SquadReaderKeepsAnswerableQuestionsWithEveryAnswerAndTheArticlesParagraphs) {
  const auto d = load_qa("squad", kFixtures + "ruler_squad.json", "t");
  ASSERT_EQ(d->qas.size(), 6u);  // 7 questions, one unanswerable
  ASSERT_EQ(d->docs.size(), 5u);
  EXPECT_TRUE(std::is_sorted(d->docs.begin(), d->docs.end()));
  const QaItem& q0 = d->qas[0];
  EXPECT_EQ(q0.query, "When was the lighthouse on Calder Point built?");
  EXPECT_EQ(q0.outputs, (std::vector<std::string>{"1871", "in 1871"}));
  ASSERT_EQ(q0.context.size(), 1u);
  EXPECT_EQ(d->docs[q0.context[0]].rfind("The lighthouse on Calder Point", 0), 0u);
  ASSERT_EQ(q0.more_context.size(), 1u);  // the article's other paragraph
  EXPECT_EQ(d->docs[q0.more_context[0]].rfind("Keepers lived", 0), 0u);
  EXPECT_EQ(d->qas[2].query, "How many ships does the 1888 log record in one night?");
  EXPECT_EQ(d->qas[5].more_context.size(), 2u);
  EXPECT_EQ(d->qas[5].outputs, (std::vector<std::string>{"Rhône Glacier"}));
}

TEST(RulerQa, HotpotReaderJoinsTitleAndSentencesIntoDocuments) {
  const auto d = load_qa("hotpotqa", kFixtures + "ruler_hotpotqa.json", "t");
  ASSERT_EQ(d->qas.size(), 3u);
  EXPECT_EQ(d->docs.size(), 9u);  // 12 paragraphs, 3 of them repeated
  EXPECT_EQ(d->qas[1].outputs, (std::vector<std::string>{"yes"}));
  ASSERT_EQ(d->qas[0].context.size(), 4u);
  EXPECT_EQ(d->docs[d->qas[0].context[0]],
            "Vasso bridge\nThe Vasso bridge is a stone arch bridge over the river Tella. It was "
            "built in 1932 by Stonewright Ltd.");
  EXPECT_TRUE(d->qas[0].more_context.empty());
}

struct RulerQaBadFile : ::testing::Test {
  test::TempDir dir;
  std::string write(const std::string& name, const std::string& body) {
    const std::string p = dir.file(name);
    std::ofstream(p, std::ios::binary) << body;
    return p;
  }
  void expect_refused(const std::string& dataset, const std::string& body,
                      std::vector<std::string> parts) {
    static int n = 0;
    const std::string path = write("bad" + std::to_string(n++) + ".json", body);
    parts.push_back(path);
    try {
      load_qa(dataset, path, "suite 'ruler': qa_1");
      FAIL() << "accepted: " << body;
    } catch (const std::invalid_argument& e) {
      for (const auto& p : parts)
        EXPECT_NE(std::string(e.what()).find(p), std::string::npos) << e.what() << " / " << p;
    }
  }
};

TEST_F(RulerQaBadFile, MissingFieldsWrongTypesTruncationAndInvalidUtf8NameFileAndField) {
  const std::string q = R"({"question": "q?", "id": "1", "answers": [{"text": "a"}])";
  expect_refused("squad", R"({"version": "v2.0"})", {"data: missing"});
  expect_refused("squad", R"({"data": {}})", {"data: expected an array"});
  expect_refused("squad", R"({"data": [{"paragraphs": [{"qas": []}]}]})",
                 {"data[0].paragraphs[0].context: missing"});
  expect_refused("squad", R"({"data": [{"paragraphs": [{"context": 7, "qas": []}]}]})",
                 {"data[0].paragraphs[0].context: expected a string"});
  expect_refused("squad", R"({"data": [{"paragraphs": [{"context": "c", "qas": [)" + q + "}]}]}]}",
                 {"data[0].paragraphs[0].qas[0].is_impossible: missing"});
  expect_refused("squad",
                 R"({"data": [{"paragraphs": [{"context": "c", "qas": [)" + q +
                     R"(, "is_impossible": "no"}]}]}]})",
                 {"qas[0].is_impossible: expected a boolean"});
  expect_refused(
      "squad",
      R"({"data": [{"paragraphs": [{"context": "c", "qas": [{"question": "q", "answers": [{"text": 3}], "is_impossible": false}]}]}]})",
      {"qas[0].answers[0].text: expected a string"});
  expect_refused(
      "squad",
      R"({"data": [{"paragraphs": [{"context": "c", "qas": [{"question": "q", "answers": [], "is_impossible": false}]}]}]})",
      {"qas[0].answers: an answerable question needs at least one answer"});
  expect_refused("squad", R"({"data": [{"paragraphs": [{"context": "c", "qas": [)",
                 {"invalid JSON at byte"});
  expect_refused("squad", "{\"data\": [\"caf\xc3\"]}", {"invalid UTF-8 at byte 14"});
  expect_refused("squad", R"({"data": [1e99999]})", {"invalid JSON", "number overflow"});
  expect_refused("squad", std::string(100, '[') + std::string(100, ']'), {"nested deeper than 64"});
  expect_refused("hotpotqa", R"({"question": "q"})", {"expected an array of questions"});
  expect_refused("hotpotqa", R"([{"question": "q", "answer": "a", "context": [["t"]]}])",
                 {"[0].context[0]: expected a [title, sentences] pair"});
  expect_refused("hotpotqa", R"([{"question": "q", "answer": "a", "context": [["t", ["s", 1]]]}])",
                 {"[0].context[0][1][1]: expected a string"});
  expect_refused("hotpotqa", R"([{"question": "q", "context": []}])", {"[0].answer: missing"});
  expect_refused("hotpotqa", "[]", {"no question"});
}

TEST(RulerQa, MissingFilesAreRefusedNamingThem) {
  try {
    load_qa("squad", "/nonexistent/dev-v2.0.json", "suite 'ruler': qa_1");
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("squad file '/nonexistent/dev-v2.0.json'"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace accel::ruler
