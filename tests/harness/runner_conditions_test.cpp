// The runner's record of the conditions a timing was measured in: a rerun of a plan into the same
// store re-measures its timing cases when the build's commit (or dirty diff) or the CPU changed,
// unless told to reuse them; quality-only plans are reused; rows keyed before v7 are re-measured;
// every trial records the pool's back-offs inside its timed region (none: back-off is off there).
// The provenance is injected through RunOptions::environment, since a test cannot rebuild the
// binary at another commit.
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>

#include "harness/runner.h"
#include "kernels/threading.h"
#include "reports/table.h"
#include "reports/tables.h"
#include "results/result_store.h"
#include "tests/support/test_support.h"

namespace accel {
namespace {

const std::string kCommitA(40, 'a'), kCommitB(40, 'b');

// `samples` cases of 1 trial; the agreement suite scores them, so "timings": false is allowed.
Plan tiny_plan(const test::TempDir& dir, bool timings, int samples = 2) {
  const std::string path = dir.file(timings ? "timing.json" : "quality.json");
  std::ofstream(path) << nlohmann::json{
      {"name", "conditions-test"},
      {"models", {{{"name", "tiny"}, {"family", "tiny"}}}},
      {"methods", {{{"name", "baseline"}}}},
      {"context_lengths", {64}},
      {"suite", {{"name", "agreement"}, {"params", {{"steps", 2}}}, {"samples", samples}}},
      {"warmup", 0},
      {"trials", 1},
      {"decode_tokens", 2},
      {"threads", 1},
      {"timings", timings}}.dump();
  return load_plan(path, dir.file("models"));
}

Environment built_at(const std::string& commit, const std::string& cpu = "Test CPU",
                     const std::string& diff = "") {
  Environment e = capture_environment();
  e.git_commit = commit;
  e.git_dirty = !diff.empty();
  e.git_diff_sha256 = diff;
  e.cpu_model = cpu;
  return e;
}

struct Rerun {
  RunSummary sum;
  std::string log;
};
Rerun run_into(const Plan& plan, const std::string& db, const Environment& env,
               bool reuse_timings = false, bool dry_run = false) {
  RunOptions opt;
  opt.db_path = db;
  opt.environment = env;
  opt.reuse_timings = reuse_timings;
  opt.dry_run = dry_run;
  std::ostringstream log;
  Rerun r{run_plan(plan, opt, log), ""};
  r.log = log.str();
  return r;
}

// The rule: a kernel change followed by a rerun of the same plan into the same store
// re-measures the timing cases, and says why.
TEST(RunnerConditions, ANewCommitReMeasuresTimingCases) {
  test::TempDir dir;
  const Plan plan = tiny_plan(dir, true);
  const std::string db = dir.file("t.sqlite");
  ASSERT_EQ(run_into(plan, db, built_at(kCommitA)).sum.completed, 2u);
  const Rerun same = run_into(plan, db, built_at(kCommitA));
  EXPECT_EQ(same.sum.skipped, 2u);
  EXPECT_EQ(same.sum.completed, 0u);

  const Rerun dry = run_into(plan, db, built_at(kCommitB), false, true);
  EXPECT_NE(dry.log.find("todo  baseline"), std::string::npos) << dry.log;
  EXPECT_NE(dry.log.find("(re-measure: commit aaaaaaaaaaaa -> bbbbbbbbbbbb)"), std::string::npos)
      << dry.log;
  const Rerun changed = run_into(plan, db, built_at(kCommitB));
  EXPECT_EQ(changed.sum.skipped, 0u);
  EXPECT_EQ(changed.sum.completed, 2u);
  const std::string why = "commit aaaaaaaaaaaa -> bbbbbbbbbbbb";
  EXPECT_EQ(changed.sum.remeasured, (std::map<std::string, size_t>{{why, 2}}));
  EXPECT_NE(changed.log.find("2 timing cases re-measured: " + why), std::string::npos)
      << changed.log;

  const auto store = results::ResultStore::open_readonly(db);
  EXPECT_EQ(store.trial_count(), 4);
  std::map<std::string, int> trials_by_commit;
  std::map<std::string, std::set<std::string>> keys_by_case;  // config_key -> case_keys
  for (const auto& t : store.trials()) {
    ++trials_by_commit[store.run(t.run_id)->git_commit];
    keys_by_case[t.config_key].insert(t.case_key);
  }
  EXPECT_EQ(trials_by_commit, (std::map<std::string, int>{{kCommitA, 2}, {kCommitB, 2}}));
  // The same 2 cases on both commits (config_key), each under one key per commit.
  ASSERT_EQ(keys_by_case.size(), 2u);
  for (const auto& [config, keys] : keys_by_case) EXPECT_EQ(keys.size(), 2u) << config;
}

// ... and the ttft table then shows the two commits as separate rows, never one pooled cell.
TEST(RunnerConditions, TheTtftTableShowsTwoCommitsSeparately) {
  test::TempDir dir;
  const Plan plan = tiny_plan(dir, true);
  const std::string db = dir.file("t.sqlite");
  ASSERT_EQ(run_into(plan, db, built_at(kCommitA)).sum.completed, 2u);
  ASSERT_EQ(run_into(plan, db, built_at(kCommitB)).sum.completed, 2u);
  const auto store = results::ResultStore::open_readonly(db);
  const std::string md = reports::to_markdown(reports::ttft_table(store, {}));
  EXPECT_NE(md.find("| Build |"), std::string::npos) << md;
  EXPECT_NE(md.find("| aaaaaaa, Test |"), std::string::npos) << md;
  EXPECT_NE(md.find("| bbbbbbb, Test |"), std::string::npos) << md;
  EXPECT_NE(md.find("holds 2 builds"), std::string::npos) << md;
}

TEST(RunnerConditions, AnotherCpuOrDirtyDiffReMeasuresAndReuseTimingsSkips) {
  test::TempDir dir;
  const Plan plan = tiny_plan(dir, true);
  const std::string db = dir.file("t.sqlite");
  ASSERT_EQ(run_into(plan, db, built_at(kCommitA)).sum.completed, 2u);
  const Rerun cpu = run_into(plan, db, built_at(kCommitA, "Other CPU"));
  EXPECT_EQ(cpu.sum.completed, 2u);
  EXPECT_EQ(cpu.sum.remeasured.count("CPU 'Test CPU' -> 'Other CPU'"), 1u) << cpu.log;
  // Dirty builds of one commit: each diff is its own state, the same diff again is done.
  const std::string diff1(64, '1'), diff2(64, '2');
  EXPECT_EQ(run_into(plan, db, built_at(kCommitA, "Test CPU", diff1)).sum.completed, 2u);
  EXPECT_EQ(run_into(plan, db, built_at(kCommitA, "Test CPU", diff2)).sum.completed, 2u);
  EXPECT_EQ(run_into(plan, db, built_at(kCommitA, "Test CPU", diff2)).sum.skipped, 2u);
  // --reuse-timings: a new commit finds them done.
  const Rerun reuse = run_into(plan, db, built_at(kCommitB), true);
  EXPECT_EQ(reuse.sum.skipped, 2u);
  EXPECT_EQ(reuse.sum.completed, 0u);
  EXPECT_TRUE(reuse.sum.remeasured.empty());
  const auto runs = results::ResultStore::open_readonly(db).runs();
  EXPECT_EQ(runs.back().config["reuse_timings"], true);
  EXPECT_EQ(runs[2].git_diff_sha256, diff1);
  EXPECT_EQ(results::code_state(runs[2]), kCommitA + "-dirty-111111111111");
}

TEST(RunnerConditions, QualityOnlyCasesAreReusedOnANewCommitOrCpu) {
  test::TempDir dir;
  const Plan plan = tiny_plan(dir, false);
  const std::string db = dir.file("q.sqlite");
  ASSERT_EQ(run_into(plan, db, built_at(kCommitA)).sum.completed, 2u);
  const Rerun again = run_into(plan, db, built_at(kCommitB, "Other CPU"));
  EXPECT_EQ(again.sum.skipped, 2u);
  EXPECT_EQ(again.sum.completed, 0u);
  EXPECT_TRUE(again.sum.remeasured.empty());
}

// Stores written before v7 keyed every case by its base key, which is the quality-only key: a
// timing plan re-measures such rows (their commit and CPU are not in the key) unless told to
// reuse them.
TEST(RunnerConditions, RowsKeyedWithoutConditionsAreReMeasuredAsTimings) {
  test::TempDir dir;
  const std::string db = dir.file("old.sqlite");
  ASSERT_EQ(run_into(tiny_plan(dir, false), db, built_at(kCommitA)).sum.completed, 2u);
  const Plan timing = tiny_plan(dir, true);
  EXPECT_EQ(run_into(timing, db, built_at(kCommitA), true).sum.skipped, 2u);
  const Rerun redo = run_into(timing, db, built_at(kCommitA));
  EXPECT_EQ(redo.sum.completed, 2u);
  EXPECT_NE(redo.log.find("2 timing cases re-measured: timings recorded before keys named the "
                          "commit and CPU"),
            std::string::npos)
      << redo.log;
}

// A case's shard follows its base key, so machines of one array job split a plan the same way
// whatever their CPUs (16 cases: all in one shard of two has odds 2^-15).
TEST(RunnerConditions, ShardsDoNotDependOnTheCpu) {
  test::TempDir dir;
  const Plan plan = tiny_plan(dir, true, 16);
  auto shard_labels = [&](const std::string& cpu, const std::string& shard) {
    RunOptions opt;
    opt.db_path = dir.file("none.sqlite");
    opt.dry_run = true;
    opt.shard = parse_shard(shard);
    opt.environment = built_at(kCommitA, cpu);
    std::ostringstream log;
    run_plan(plan, opt, log);
    std::set<std::string> labels;  // without the key, which names the CPU
    std::istringstream in(log.str());
    for (std::string line; std::getline(in, line);) labels.insert(line.substr(0, line.rfind("  ")));
    return labels;
  };
  const auto one = shard_labels("CPU 1", "1/2"), two = shard_labels("CPU 1", "2/2");
  EXPECT_EQ(one.size() + two.size(), 16u);
  EXPECT_FALSE(one.empty());
  EXPECT_FALSE(two.empty());
  EXPECT_EQ(shard_labels("CPU 2", "1/2"), one);
  EXPECT_EQ(shard_labels("CPU 2", "2/2"), two);
}

// Timed regions run with back-off off, so every new row records 0 back-offs (not NULL), and the
// pool's setting is back on afterwards for everything else.
TEST(RunnerConditions, EveryTrialRecordsItsBackoffs) {
  test::TempDir dir;
  const std::string db = dir.file("b.sqlite");
  ASSERT_TRUE(parallel_backoff_enabled());
  ASSERT_EQ(run_into(tiny_plan(dir, true), db, built_at(kCommitA)).sum.completed, 2u);
  EXPECT_TRUE(parallel_backoff_enabled());
  for (const auto& t : results::ResultStore::open_readonly(db).trials()) {
    ASSERT_TRUE(t.backoffs_in_region.has_value());
    EXPECT_EQ(*t.backoffs_in_region, 0);
  }
}

}  // namespace
}  // namespace accel
