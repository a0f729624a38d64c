// Several processes writing one store, and a writer SIGKILLed mid-series: no lost rows, no
// duplicates, only whole cases. Children are fork()ed and use the API directly (no CLI).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <map>
#include <thread>

#include "results/result_store.h"
#include "tests/results/store_fixtures.h"
#include "tests/support/test_support.h"

namespace accel::results {
namespace {

// Runs f in a child process; the child's exit code is 0 when f returned normally.
pid_t spawn(const std::function<void()>& f) {
  const pid_t pid = fork();
  if (pid == 0) {
    int code = 0;
    try {
      f();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "child %d: %s\n", int(getpid()), e.what());
      code = 1;
    }
    _exit(code);
  }
  return pid;
}

int wait_exit(pid_t pid) {
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

std::vector<TrialRecord> make_case(const std::string& run, const std::string& key, int n_trials,
                                   size_t n_tokens = 5) {
  std::vector<TrialRecord> v;
  for (int i = 0; i < n_trials; ++i) {
    auto t = test::full_trial(run, key, i);
    t.output_tokens.assign(n_tokens, 7);
    v.push_back(t);
  }
  return v;
}

TEST(ResultStoreConcurrency, SeveralWriterProcessesLoseNothing) {
  test::TempDir dir;
  const std::string path = dir.file("shared.sqlite");
  constexpr int kWriters = 4, kOwn = 150, kShared = 15, kTrials = 3;
  std::vector<pid_t> kids;
  for (int w = 0; w < kWriters; ++w)
    kids.push_back(spawn([&, w] {
      // Every child opens (and so may create/migrate) the store itself, at the same time.
      auto s = ResultStore::open(path);
      const std::string run = s.begin_run(test::full_run("writer-" + std::to_string(w)));
      for (int c = 0; c < kOwn; ++c) {
        s.record_case(make_case(run, "w" + std::to_string(w) + "-c" + std::to_string(c), kTrials));
        // Cases every writer also does, as when two runners race through one plan.
        if (c % (kOwn / kShared) == 0)
          s.record_case(make_case(run, "shared-" + std::to_string(c / (kOwn / kShared)), kTrials));
      }
      s.end_run(run);
    }));
  for (pid_t k : kids) EXPECT_EQ(wait_exit(k), 0);

  auto s = ResultStore::open_readonly(path);
  EXPECT_EQ(s.trial_count(), int64_t(kWriters * kOwn + kShared) * kTrials);
  EXPECT_EQ(s.done_cases(kTrials).size(), size_t(kWriters * kOwn + kShared));
  EXPECT_EQ(s.runs().size(), size_t(kWriters));
  for (const auto& r : s.runs()) EXPECT_TRUE(r.ended_at);
  // Each shared case was written whole by exactly one writer.
  std::map<std::string, std::set<std::string>> runs_of;
  for (const auto& t : s.trials()) runs_of[t.case_key].insert(t.run_id);
  for (const auto& [k, runs] : runs_of) EXPECT_EQ(runs.size(), 1u) << k;
  auto st = s.db().prepare(
      "SELECT count(*) FROM (SELECT case_key, trial_index FROM trials GROUP BY 1, 2 HAVING "
      "count(*) > 1)");
  st.step();
  EXPECT_EQ(st.get_int(0), 0);
}

TEST(ResultStoreConcurrency, KilledWriterLeavesOnlyWholeCases) {
  test::TempDir dir;
  constexpr int kTrials = 4;
  for (int round = 0; round < 3; ++round) {
    const std::string path = dir.file("crash" + std::to_string(round) + ".sqlite");
    { ResultStore::open(path); }  // create first so the parent can poll read-only
    const pid_t kid = spawn([&] {
      auto s = ResultStore::open(path);
      const std::string run = s.begin_run(test::full_run());
      // Large rows make each transaction long enough to be killed inside one.
      for (int c = 0;; ++c)
        s.record_case(make_case(run, "case-" + std::to_string(c), kTrials, 5000));
    });
    // Kill after a varying number of committed cases.
    const int64_t target = int64_t(5 + 7 * round) * kTrials;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (std::chrono::steady_clock::now() < deadline) {
      if (ResultStore::open_readonly(path).trial_count() >= target) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    kill(kid, SIGKILL);
    EXPECT_EQ(wait_exit(kid), 128 + SIGKILL);

    auto s = ResultStore::open(path);  // opens cleanly (recovers the WAL)
    auto ic = s.db().prepare("PRAGMA integrity_check");
    ASSERT_TRUE(ic.step());
    EXPECT_EQ(ic.get_text(0), "ok");
    std::map<std::string, int> per_case;
    for (const auto& t : s.trials()) per_case[t.case_key]++;
    EXPECT_GE(int64_t(per_case.size()) * kTrials, target);
    for (const auto& [k, n] : per_case) EXPECT_EQ(n, kTrials) << k;
    EXPECT_EQ(s.trial_count(), int64_t(per_case.size()) * kTrials);
    // The store goes on working after the crash.
    const std::string run = s.begin_run(test::full_run());
    EXPECT_EQ(s.record_case(make_case(run, "after", kTrials)), kTrials);
  }
}

}  // namespace
}  // namespace accel::results
