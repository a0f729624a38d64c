// RULER's official summary end to end: `accelbench run` stores each sample's task and the suite's
// summary declaration, and `report --table suite` prints per-task rows and the average over the
// tasks present, labelled with how many of RULER's 13 they are.
#include <gtest/gtest.h>

#include <fstream>

#include "results/result_store.h"
#include "tests/support/essay_fixture.h"
#include "tests/support/test_support.h"

namespace accel {
namespace {

TEST(SuiteSummaryRun, RulerRunStoresSampleTasksAndReportsTheAverageOverTasks) {
  test::TempDir dir;
  const std::string plan = dir.file("plan.json"), db = dir.file("r.sqlite");
  const std::string essays = dir.file("essays.txt");
  std::ofstream(essays) << test::fixture_essays();
  std::ofstream(plan) << nlohmann::json{
      {"name", "ruler-summary-test"},
      {"models", {{{"name", "tiny"}, {"family", "tiny"}}}},
      {"methods", {{{"name", "baseline"}}}},
      {"context_lengths", {1024}},
      {"suite",
       {{"name", "ruler"}, {"params", {{"task", "synthetic"}, {"data", essays}}}, {"samples", 3}}},
      {"warmup", 0},
      {"trials", 1},
      {"decode_tokens", 4},
      {"threads", 1}}.dump();
  std::string out;
  ASSERT_EQ(
      test::run_cli("run " + plan + " --db " + db + " --models-dir " + dir.file("models"), &out), 0)
      << out;
  const auto store = results::ResultStore::open_readonly(db);
  const auto trials = store.trials();
  ASSERT_EQ(trials.size(), 3u) << out;
  for (const auto& t : trials)
    EXPECT_EQ(t.sample_task + "-0", t.sample_id) << "task = the id's prefix for RULER";
  ASSERT_EQ(store.runs().size(), 1u);
  EXPECT_EQ(store.runs()[0].suite["task_summary"]["tasks"].size(), 13u);
  ASSERT_EQ(test::run_cli("report --db " + db + " --table suite", &out), 0) << out;
  EXPECT_NE(out.find("| niah_single_1 |"), std::string::npos) << out;
  EXPECT_NE(out.find("= RULER average over tasks (3/13 tasks)"), std::string::npos) << out;
}

}  // namespace
}  // namespace accel
