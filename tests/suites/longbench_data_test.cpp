// LongBench JSONL loading: the fixtures in the official format load, and hostile files (missing
// fields, wrong types, truncated lines, invalid UTF-8, what the reference would crash on) fail
// naming the file, the line and the field.
#include "suites/longbench_data.h"

#include <gtest/gtest.h>

#include <fstream>

#include "tests/support/test_support.h"

namespace accel::longbench {
namespace {

const std::filesystem::path kFixtures =
    std::filesystem::path(ACCELBENCH_SOURCE_DIR) / "tests/suites/fixtures/longbench";

const TaskInfo& task(std::string_view n) {
  return *find_task(n);
}

std::string error_of(const std::string& content, std::string_view task_name = "qasper") {
  test::TempDir dir;
  const std::string path = dir.file("t.jsonl");
  std::ofstream(path, std::ios::binary) << content;
  try {
    index_file(path, task(task_name));
  } catch (const DatasetError& e) {
    return e.what();
  }
  return "no error";
}

const char* kGood =
    R"({"input": "q", "context": "c", "answers": ["a"], "length": 3, "all_classes": null, "_id": "x1"})";

TEST(LongBenchData, TaskTableHasTheTwentyOneTasks) {
  EXPECT_EQ(all_tasks().size(), 21u);
  int e = 0;
  for (const TaskInfo& t : all_tasks()) e += t.in_e;
  EXPECT_EQ(e, 13);
  EXPECT_EQ(task("gov_report").max_gen, 512);
  EXPECT_EQ(task("hotpotqa").max_gen, 32);
  EXPECT_EQ(task("lcc").metric, Metric::CodeSim);
  EXPECT_NE(task("narrativeqa").prompt.find("asconcisely"), std::string_view::npos);  // typo kept
  EXPECT_TRUE(task("samsum").first_line);
  EXPECT_FALSE(task("lcc").first_line);
  EXPECT_TRUE(task("lcc").no_chat);
  EXPECT_EQ(find_task("nq"), nullptr);
  EXPECT_EQ(format_prompt(task("repobench-p"), "CTX{input}", "IN"),
            "Please complete the code given below. \nCTX{input}INNext line of code:\n");
}

TEST(LongBenchData, FixturesLoadWithEveryField) {
  const auto f = index_file(task_file(kFixtures, task("trec"), false), task("trec"));
  ASSERT_EQ(f->records.size(), 2u);
  EXPECT_EQ(f->records[1].line_no, 2u);
  const Record r = read_record(*f, 0, task("trec"));
  EXPECT_EQ(r.id, "fx0004");
  EXPECT_EQ(r.answers, std::vector<std::string>{"Abbreviation"});
  ASSERT_TRUE(r.all_classes.has_value());
  EXPECT_EQ(r.all_classes->size(), 10u);
  EXPECT_EQ(r.length, 25);
  EXPECT_EQ(r.dataset, "trec");
  EXPECT_EQ(f->last_all_classes.size(), 10u);
  const auto e = index_file(task_file(kFixtures, task("qasper"), true), task("qasper"));
  EXPECT_EQ(e->records.size(), 3u);
  EXPECT_EQ(read_record(*e, 2, task("qasper")).length, 8000);
  EXPECT_EQ(
      cached_index(task_file(kFixtures, task("qasper"), true), task("qasper"))->records.size(), 3u);
}

TEST(LongBenchData, BlankLinesCrlfAndAMissingFinalNewlineAreAccepted) {
  test::TempDir dir;
  const std::string path = dir.file("ok.jsonl");
  std::ofstream(path, std::ios::binary) << kGood << "\r\n\n  \n" << kGood;
  const auto f = index_file(path, task("qasper"));
  ASSERT_EQ(f->records.size(), 2u);
  EXPECT_EQ(f->records[1].line_no, 4u);
  EXPECT_EQ(read_record(*f, 1, task("qasper")).id, "x1");
  EXPECT_EQ(read_record(*f, 0, task("qasper")).context, "c");
}

TEST(LongBenchData, HostileFilesNameFileLineAndField) {
  const std::string g = std::string(kGood) + "\n";
  const auto has = [](const std::string& msg, const std::string& part) {
    return msg.find(part) != std::string::npos;
  };
  std::string m =
      error_of(g + R"({"input": "q", "context": "c", "length": 3, "all_classes": null, "_id": "x"})"
                   "\n");
  EXPECT_TRUE(has(m, "t.jsonl:2: field 'answers': missing")) << m;
  m = error_of(
      g + g +
      R"({"input": 5, "context": "c", "answers": [], "length": 1, "all_classes": null, "_id": "x"})");
  EXPECT_TRUE(has(m, ":3: field 'input': expected a string, got number")) << m;
  m = error_of(
      R"({"input": "q", "context": "c", "answers": ["a", 7], "length": 1, "all_classes": null, "_id": "x"})");
  EXPECT_TRUE(has(m, ":1: field 'answers[1]': expected a string")) << m;
  m = error_of(
      R"({"input": "q", "context": "c", "answers": "a", "length": 1, "all_classes": null, "_id": "x"})");
  EXPECT_TRUE(has(m, "field 'answers': expected an array of strings, got string")) << m;
  m = error_of(
      R"({"input": "q", "context": "c", "answers": [], "length": -1, "all_classes": null, "_id": "x"})");
  EXPECT_TRUE(has(m, "field 'length': expected a non-negative integer")) << m;
  m = error_of(
      R"({"input": "q", "context": "c", "answers": [], "length": 2.5, "all_classes": null, "_id": "x"})");
  EXPECT_TRUE(has(m, "field 'length'")) << m;
  m = error_of(R"({"input": "q", "context": "c", "answers": [], "length": 2, "_id": "x"})");
  EXPECT_TRUE(has(m, "field 'all_classes': missing")) << m;
  m = error_of(
      R"({"input": "q", "context": "c", "answers": [], "length": 2, "all_classes": null, "_id": 3})");
  EXPECT_TRUE(has(m, "field '_id': expected a string")) << m;
  // A truncated last line.
  m = error_of(g + R"({"input": "q", "context": "the text was cu)");
  EXPECT_TRUE(has(m, ":2: invalid JSON (truncated line?)")) << m;
  // A number too large for a double (nlohmann reports it as out_of_range, not parse_error;
  // found by the plan fuzzer in the same parse).
  m = error_of(g + R"({"input": "q", "length": 1e99999})" + "\n");
  EXPECT_TRUE(has(m, ":2: invalid JSON (truncated line?)")) << m;
  // Invalid UTF-8 inside a string, with its byte position.
  m = error_of(g + "{\"input\": \"q\xC3(\", \"context\": \"c\"}\n");
  EXPECT_TRUE(has(m, ":2: invalid UTF-8 at byte 13 of the line")) << m;
  m = error_of("[1, 2]\n");
  EXPECT_TRUE(has(m, ":1: expected a JSON object, got array")) << m;
  EXPECT_TRUE(has(error_of(""), "t.jsonl: no records"));
  EXPECT_TRUE(has(error_of("\n \n"), "no records"));
  // What the reference would crash on.
  m = error_of(g, "trec");
  EXPECT_TRUE(has(m, "field 'all_classes': null, but task 'trec' is scored by classification"))
      << m;
  m = error_of(
      R"({"input": "q", "context": "c", "answers": ["Paragraph two"], "length": 1, "all_classes": null, "_id": "x"})",
      "passage_retrieval_en");
  EXPECT_TRUE(has(m, "field 'answers[0]': no 'Paragraph N' paragraph id")) << m;
  m = error_of(
      R"({"input": "q", "context": "c", "answers": ["a"], "length": 1, "all_classes": [1], "_id": "x"})",
      "lsht");
  EXPECT_TRUE(has(m, "field 'all_classes[0]': expected a string")) << m;
  // Missing files.
  try {
    index_file("/nonexistent/dir/qasper.jsonl", task("qasper"));
    FAIL();
  } catch (const DatasetError& e) {
    EXPECT_TRUE(has(e.what(), "/nonexistent/dir/qasper.jsonl: no such file")) << e.what();
  }
}

TEST(LongBenchData, AChangedFileIsNotReadThroughAStaleIndex) {
  test::TempDir dir;
  const std::string path = dir.file("q.jsonl");
  std::ofstream(path, std::ios::binary) << kGood << "\n";
  const auto f = index_file(path, task("qasper"));
  std::ofstream(path, std::ios::binary | std::ios::app) << kGood << "\n";
  EXPECT_THROW(read_record(*f, 0, task("qasper")), DatasetError);
  EXPECT_EQ(cached_index(path, task("qasper"))->records.size(), 2u);
}

}  // namespace
}  // namespace accel::longbench
