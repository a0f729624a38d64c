// The `suite` table's official summaries on hand-built stores: per-task rows with the rounded
// task score, RULER's average over tasks and its Avg / wAvg (inc) / wAvg (dec) over lengths,
// LongBench's category and language means, partial task sets labelled k/N; and the summary
// arithmetic itself against published and hand-worked figures.
#include <gtest/gtest.h>

#include <cmath>

#include "reports/tables.h"
#include "reports/task_summary.h"
#include "suites/suite.h"
#include "tests/results/store_fixtures.h"
#include "tests/support/test_support.h"

namespace accel::reports {
namespace {

const Cell& cell(const Table& t, size_t row, const std::string& key) {
  for (size_t i = 0; i < t.columns.size(); ++i)
    if (t.columns[i].key == key) return t.rows[row][i];
  throw std::logic_error("no column " + key);
}

// The row whose Task cell starts with `task` and whose Context cell is `context`.
size_t row_of(const Table& t, const std::string& task, const std::string& context) {
  for (size_t i = 0; i < t.rows.size(); ++i)
    if (cell(t, i, "task").text.rfind(task, 0) == 0 && cell(t, i, "context_len").text == context)
      return i;
  throw std::logic_error("no row " + task + " @ " + context);
}

double score(const Table& t, const std::string& task, const std::string& context) {
  return cell(t, row_of(t, task, context), "task_score").data.get<double>();
}

// One scored sample of `task` in suite `suite` (metric `metric`) at `ctx`.
void add_sample(results::ResultStore& s, const std::string& run, const std::string& suite,
                const std::string& task, const std::string& metric, int64_t ctx, int index,
                double value) {
  auto t = test::simple_trial(run, "baseline", nlohmann::json::object(), ctx,
                              task + "-" + std::to_string(index), 0, 1.0);
  t.workload = suite;
  t.workload_version = "1";
  t.sample_task = task;
  t.scores = {{metric, value}};
  s.record_case({t});
}

results::RunInfo run_declaring(const std::string& suite, const TaskSummary& summary) {
  auto info = test::full_run();
  info.suite = {
      {"name", suite}, {"metrics", nlohmann::json::array()}, {"task_summary", to_json(summary)}};
  return info;
}

TEST(TaskSummary, RoundLikePythonRoundsTheExactBinaryValueWithTiesToEven) {
  EXPECT_EQ(round_like_python(2.675, 2), 2.67);  // 2.675 is 2.67499999... in binary
  EXPECT_EQ(round_like_python(0.125, 2), 0.12);  // an exact tie: to even
  EXPECT_EQ(round_like_python(0.375, 2), 0.38);
  EXPECT_EQ(round_like_python(66.66666666666667, 2), 66.67);
  // 0.015 is 0.01499999... but 0.015 * 100 == 1.5 exactly: scaling first would round up.
  EXPECT_EQ(round_like_python(0.015, 2), 0.01);
  EXPECT_EQ(round_like_python(66.666, -1), 66.666);
}

// RULER's README row for Jamba-1.5-large: 96.7 96.6 96.4 96.0 95.4 95.1 at 4K..128K gives Avg
// 96.0, wAvg (inc) 95.7 and wAvg (dec) 96.3 as printed (one decimal); the unrounded values are
// worked by hand: inc = 2010.7 / 21, dec = 2022.7 / 21.
TEST(TaskSummary, LengthAveragesReproduceRulersPublishedJambaRow) {
  const std::map<int64_t, double> row = {{4096, 96.7},  {8192, 96.6},  {16384, 96.4},
                                         {32768, 96.0}, {65536, 95.4}, {131072, 95.1}};
  const LengthAverages a = length_averages(row);
  EXPECT_NEAR(a.avg, 576.2 / 6, 1e-12);  // sums of one-decimal values: a few ulps of error
  EXPECT_NEAR(a.wavg_inc, 2010.7 / 21, 1e-12);
  EXPECT_NEAR(a.wavg_dec, 2022.7 / 21, 1e-12);
  EXPECT_EQ(round_like_python(a.avg, 1), 96.0);
  EXPECT_EQ(round_like_python(a.wavg_inc, 1), 95.7);
  EXPECT_EQ(round_like_python(a.wavg_dec, 1), 96.3);
}

TEST(TaskSummary, MalformedStoredDeclarationIsRefusedNamingTheField) {
  try {
    parse_task_summary({{"task_metric", "x"}, {"tasks", {1, 2}}}, "run r1 suite record");
    FAIL() << "no throw";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("run r1 suite record: task_summary.tasks"),
              std::string::npos)
        << e.what();
  }
}

// Two of three tasks at 1K, all three at 2K and 4K. Task A 1K: samples 100, 0, 100 → 66.666… →
// 66.67 (rounded before averaging, as RULER's summary.csv). Averages over tasks:
// 1K (66.67 + 50) / 2 = 58.335; 2K (100 + 50 + 0) / 3 = 50; 4K (50 + 25 + 75) / 3 = 50.
// Over lengths: Avg 52.778333…; inc (58.335 + 100 + 150) / 6 = 51.389166…;
// dec (175.005 + 100 + 50) / 6 = 54.1675.
TEST(SuiteTable, RulerStyleSummaryRoundsTaskScoresAndAveragesTasksAndLengths) {
  test::TempDir dir;
  auto s = results::ResultStore::open(dir.file("r.sqlite"));
  TaskSummary sum;
  sum.task_metric = "ruler.score";
  sum.tasks = {"a", "b", "c"};
  sum.overall = "average over tasks";
  sum.length_weighted = true;
  const std::string run = s.begin_run(run_declaring("ruler", sum));
  const std::map<std::string, std::map<int64_t, std::vector<double>>> data = {
      {"a", {{1024, {100, 0, 100}}, {2048, {100, 100}}, {4096, {0, 100}}}},
      {"b", {{1024, {0, 100}}, {2048, {0, 100}}, {4096, {50, 0}}}},
      {"c", {{2048, {0, 0}}, {4096, {100, 50}}}}};
  for (const auto& [task, by_len] : data)
    for (const auto& [ctx, values] : by_len)
      for (size_t i = 0; i < values.size(); ++i)
        add_sample(s, run, "ruler", task, "ruler.score", ctx, int(i), values[i]);
  const Table t = make_report(s, "suite", {});
  EXPECT_EQ(score(t, "a", "1024"), 66.67);
  EXPECT_DOUBLE_EQ(cell(t, row_of(t, "a", "1024"), "ruler.score").data.get<double>(), 200.0 / 3);
  EXPECT_DOUBLE_EQ(score(t, "= average over tasks (2/3", "1024"), (66.67 + 50) / 2);
  EXPECT_DOUBLE_EQ(score(t, "= average over tasks (3/3", "2048"), 50.0);
  EXPECT_DOUBLE_EQ(score(t, "= average over tasks (3/3", "4096"), 50.0);
  const double l1 = (66.67 + 50) / 2;
  EXPECT_DOUBLE_EQ(score(t, "= average over tasks", "Avg"), (l1 + 50 + 50) / 3);
  EXPECT_DOUBLE_EQ(score(t, "= average over tasks", "wAvg (inc)"), (l1 + 2 * 50 + 3 * 50) / 6);
  EXPECT_DOUBLE_EQ(score(t, "= average over tasks", "wAvg (dec)"), (3 * l1 + 2 * 50 + 50) / 6);
  EXPECT_EQ(cell(t, row_of(t, "= average over tasks", "Avg"), "task").text,
            "= average over tasks (tasks per length: 2, 3, 3)");
  EXPECT_EQ(cell(t, row_of(t, "= average over tasks (3/3", "2048"), "samples").text, "6");
}

// LongBench-style: the task metric is named after the task; category and language groups average
// only their members. Scores: qa1 40, qa2 60 (Single-Doc QA, en), sum1 10 (Summarization, zh).
TEST(SuiteTable, LongBenchStyleGroupsAverageTheirMemberTasksOnly) {
  test::TempDir dir;
  auto s = results::ResultStore::open(dir.file("r.sqlite"));
  TaskSummary sum;
  sum.task_metric = "longbench.{task}";
  sum.tasks = {"qa1", "qa2", "sum1", "sum2"};
  sum.overall = "overall";
  sum.groups = {{"Single-Doc QA", {"qa1", "qa2"}},
                {"Summarization", {"sum1", "sum2"}},
                {"language en", {"qa1", "qa2"}},
                {"language zh", {"sum1", "sum2"}}};
  const std::string run = s.begin_run(run_declaring("longbench", sum));
  add_sample(s, run, "longbench", "qa1", "longbench.qa1", 4096, 0, 30);
  add_sample(s, run, "longbench", "qa1", "longbench.qa1", 4096, 1, 50);
  add_sample(s, run, "longbench", "qa2", "longbench.qa2", 4096, 0, 60);
  add_sample(s, run, "longbench", "sum1", "longbench.sum1", 4096, 0, 10);
  const Table t = make_report(s, "suite", {});
  EXPECT_EQ(score(t, "qa1", "4096"), 40.0);
  EXPECT_DOUBLE_EQ(score(t, "= overall (3/4 tasks)", "4096"), 110.0 / 3);
  EXPECT_DOUBLE_EQ(score(t, "= Single-Doc QA (2/2 tasks)", "4096"), 50.0);
  EXPECT_DOUBLE_EQ(score(t, "= Summarization (1/2 tasks)", "4096"), 10.0);
  EXPECT_DOUBLE_EQ(score(t, "= language zh (1/2 tasks)", "4096"), 10.0);
  for (size_t i = 0; i < t.rows.size(); ++i)
    EXPECT_NE(cell(t, i, "context_len").text, "Avg") << "length rows only where declared";
}

// LongBench's scoring choices label the rows that used them and are named in a footnote: the
// character cut (asked for, or implied by a *-zhchar version) and the python-Levenshtein backend.
TEST(SuiteTable, LongBenchScoringChoicesLabelTheirRows) {
  test::TempDir dir;
  auto s = results::ResultStore::open(dir.file("r.sqlite"));
  const auto add = [&](const std::string& version, const nlohmann::json& params, int64_t ctx) {
    auto info = test::full_run();
    info.suite = {{"name", "longbench"}, {"version", version}, {"params", params}};
    const std::string run = s.begin_run(info);
    auto t = test::simple_trial(run, "baseline", nlohmann::json::object(), ctx, "0", 0, 1.0);
    t.workload = "longbench";
    t.workload_version = version;
    t.scores = {{"longbench.lcc", 50.0}};
    s.record_case({t});
  };
  add("3", nlohmann::json::object(), 1024);
  add("3", {{"segmenter", "char"}, {"fuzz", "levenshtein"}}, 2048);
  add("2-zhchar", nlohmann::json::object(), 4096);
  const Table t = make_report(s, "suite", {});
  std::map<std::string, std::string> label_by_ctx;
  for (size_t i = 0; i < t.rows.size(); ++i)
    label_by_ctx[cell(t, i, "context_len").text] = cell(t, i, "suite").text;
  EXPECT_EQ(label_by_ctx["1024"], "longbench v3");
  EXPECT_EQ(label_by_ctx["2048"], "longbench v3 segmenter=char fuzz=levenshtein");
  EXPECT_EQ(label_by_ctx["4096"], "longbench v2-zhchar segmenter=char");
  std::string notes;
  for (const auto& n : t.footnotes) notes += n + "\n";
  for (const char* want : {"jieba 0.42.1", "segmenter=char", "fuzz=difflib", "fuzz=levenshtein"})
    EXPECT_NE(notes.find(want), std::string::npos) << want << " in " << notes;
}

// A single-task suite keeps the table it always had: no Task or Task score column.
TEST(SuiteTable, SuitesWithoutTasksShowNoTaskColumns) {
  test::TempDir dir;
  auto s = results::ResultStore::open(dir.file("r.sqlite"));
  const std::string run = s.begin_run(test::full_run());
  auto t = test::simple_trial(run, "baseline", nlohmann::json::object(), 1024, "0", 0, 1.0);
  t.workload = "niah";
  t.scores = {{"niah.score", 1.0}};
  s.record_case({t});
  const Table tab = make_report(s, "suite", {});
  ASSERT_EQ(tab.rows.size(), 1u);
  for (const auto& c : tab.columns) {
    EXPECT_NE(c.key, "task");
    EXPECT_NE(c.key, "task_score");
  }
}

}  // namespace
}  // namespace accel::reports
