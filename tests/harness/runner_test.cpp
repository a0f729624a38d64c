// The runner end to end through the CLI: a plan runs into a store, a rerun skips finished cases,
// a SIGKILLed run resumes with no duplicate and no missing trial, Ctrl-C stops cleanly.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <thread>

#include "kernels/simd.h"
#include "results/result_store.h"
#include "tests/support/test_support.h"

namespace accel {
namespace {

// A baseline plan on the tiny family; `changes` replaces or adds top-level fields.
std::string write_plan(const test::TempDir& dir, int samples, int trials,
                       const nlohmann::json& changes = nlohmann::json::object()) {
  const std::string path = dir.file("plan.json");
  nlohmann::json plan{{"name", "runner-test"},
                      {"models", {{{"name", "tiny"}, {"family", "tiny"}}}},
                      {"methods", {{{"name", "baseline"}}}},
                      {"context_lengths", {64, 256}},
                      {"workload", {{"kind", "synthetic"}, {"samples", samples}}},
                      {"warmup", 0},
                      {"trials", trials},
                      {"decode_tokens", 4},
                      {"threads", 1}};
  plan.update(changes);
  std::ofstream(path) << plan.dump();
  return path;
}

int64_t trial_rows(const std::string& db) {
  return results::ResultStore::open_readonly(db).trial_count(true);
}

TEST(Runner, RunsThenSkipsFinishedCases) {
  test::TempDir dir;
  const std::string plan = write_plan(dir, 2, 2), db = dir.file("r.sqlite");
  const std::string common = plan + " --db " + db + " --models-dir " + dir.file("models");
  std::string out;
  ASSERT_EQ(test::run_cli("run " + common, &out), 0) << out;
  EXPECT_EQ(trial_rows(db), 2 * 2 * 2);                         // 2 lengths x 2 samples x 2 trials
  EXPECT_NE(out.find("| baseline"), std::string::npos) << out;  // the ttft table
  ASSERT_EQ(test::run_cli("run " + common, &out), 0) << out;
  EXPECT_NE(out.find("4 already done, 0 completed"), std::string::npos) << out;
  EXPECT_EQ(trial_rows(db), 8);
  ASSERT_EQ(test::run_cli("run --dry-run " + common, &out), 0) << out;
  EXPECT_NE(out.find("done  baseline"), std::string::npos) << out;
  // Another thread count is another case (the plan says 1 thread).
  ASSERT_EQ(test::run_cli("run --dry-run --threads 2 " + common, &out), 0) << out;
  EXPECT_EQ(out.find("done  baseline"), std::string::npos) << out;
  EXPECT_NE(out.find("todo  baseline"), std::string::npos) << out;
  const auto store = results::ResultStore::open_readonly(db);
  const auto trials = store.trials();
  ASSERT_FALSE(trials.empty());
  EXPECT_EQ(trials[0].target.arch, "llama");
  EXPECT_EQ(trials[0].target.sha256.size(), 64u);
  EXPECT_GT(trials[0].ttft_s.value_or(0), 0.0);
  EXPECT_TRUE(trials[0].phases.count("prefill"));
  EXPECT_EQ(trials[0].output_tokens.size(), 4u);
  EXPECT_EQ(trials[0].prompt_tokens, trials[0].context_len);
  const auto runs = store.runs();
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_FALSE(runs[0].git_commit.empty());
  EXPECT_FALSE(runs[0].cpu_model.empty());
  EXPECT_EQ(runs[0].plan["name"], "runner-test");
  // The kernel variant is stored with the run, so a figure can be traced to it.
  EXPECT_EQ(runs[0].config.at("environment").at("kernels").at("simd_width"), simd::W);
}

// trial_order "interleaved" measures trial t of every case before trial t + 1 of any; "case" (the
// default) runs each case's trials back to back. recorded_at (the end of each trial, to the
// millisecond) shows the order; a tiny-model trial at 256+ tokens takes well over a millisecond,
// so the order is strict. Both orders store the same generations.
TEST(Runner, InterleavedTrialOrderRunsTrialRoundsAcrossCases) {
  test::TempDir dir;
  std::map<std::string, std::vector<std::pair<int, int>>> order;  // trial_order -> (ctx, trial)
  std::map<std::string, std::map<int, std::vector<int32_t>>> tokens;
  for (const std::string trial_order : {"case", "interleaved"}) {
    const std::string plan = write_plan(dir, 1, 2,
                                        {{"context_lengths", {256, 512}},
                                         {"warmup", 1},
                                         {"trial_order", trial_order}}),
                      db = dir.file(trial_order + ".db");
    std::string out;
    ASSERT_EQ(test::run_cli("run " + plan + " --db " + db + " --models-dir " + dir.file("m"), &out),
              0)
        << out;
    auto trials = results::ResultStore::open_readonly(db).trials();
    ASSERT_EQ(trials.size(), 4u);
    std::sort(trials.begin(), trials.end(),
              [](const auto& a, const auto& b) { return a.recorded_at < b.recorded_at; });
    for (size_t i = 0; i + 1 < trials.size(); ++i)
      EXPECT_LT(trials[i].recorded_at, trials[i + 1].recorded_at) << trial_order;
    for (const auto& t : trials) {
      order[trial_order].push_back({int(t.context_len), int(t.trial_index)});
      tokens[trial_order][int(t.context_len)] = t.output_tokens;
    }
  }
  using P = std::vector<std::pair<int, int>>;
  EXPECT_EQ(order["case"], (P{{256, 0}, {256, 1}, {512, 0}, {512, 1}}));
  EXPECT_EQ(order["interleaved"], (P{{256, 0}, {512, 0}, {256, 1}, {512, 1}}));
  EXPECT_EQ(tokens["case"], tokens["interleaved"]);
}

TEST(Runner, TrialOrderIsCaseOrInterleaved) {
  test::TempDir dir;
  const std::string plan = dir.file("bad.json");
  std::ofstream(plan) << R"({"models": [{"name": "tiny", "family": "tiny"}],
    "methods": [{"name": "baseline"}], "context_lengths": [64], "trial_order": "random"})";
  std::string out;
  EXPECT_NE(test::run_cli("run " + plan + " --db " + dir.file("x.db"), &out), 0);
  EXPECT_NE(out.find("trial_order: must be \"case\" or \"interleaved\", not \"random\""),
            std::string::npos)
      << out;
  EXPECT_FALSE(std::filesystem::exists(dir.file("x.db")));
}

// Starts `accelbench run` as a child, waits until it has stored some trials, then signals it.
pid_t start_run(const std::string& args) {
  const pid_t pid = fork();
  if (pid == 0) {
    const std::string cmd = test::accelbench_binary() + " run " + args + " >/dev/null 2>&1";
    execl("/bin/sh", "sh", "-c", ("exec " + cmd).c_str(), (char*)nullptr);
    _exit(127);
  }
  return pid;
}

void wait_for_rows(const std::string& db, int64_t n) {
  for (int i = 0; i < 600; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    try {
      if (trial_rows(db) >= n) return;
    } catch (const std::exception&) {
    }
  }
  FAIL() << "no rows appeared in " << db;
}

TEST(Runner, ResumesAfterSigkillWithoutDuplicatesOrGaps) {
  test::TempDir dir;
  const std::string plan = write_plan(dir, 30, 2), db = dir.file("k.sqlite");
  const std::string common = plan + " --db " + db + " --models-dir " + dir.file("models");
  const pid_t pid = start_run(common);
  wait_for_rows(db, 6);
  kill(pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  const int64_t partial = trial_rows(db);
  EXPECT_EQ(partial % 2, 0) << "a case was half-recorded";
  EXPECT_LT(partial, 2 * 30 * 2) << "the run finished before it was killed; make it longer";
  std::string out;
  ASSERT_EQ(test::run_cli("run " + common, &out), 0) << out;
  const auto trials = results::ResultStore::open_readonly(db).trials();
  EXPECT_EQ(trials.size(), 2u * 30u * 2u);
  std::set<std::pair<std::string, int64_t>> keys;
  for (const auto& t : trials) keys.insert({t.case_key, t.trial_index});
  EXPECT_EQ(keys.size(), trials.size());
}

TEST(Runner, CtrlCStopsCleanlyAndRerunCompletes) {
  test::TempDir dir;
  const std::string plan = write_plan(dir, 30, 2), db = dir.file("i.sqlite");
  const std::string common = plan + " --db " + db + " --models-dir " + dir.file("models");
  const pid_t pid = start_run(common);
  wait_for_rows(db, 4);
  kill(pid, SIGINT);
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 130);
  EXPECT_EQ(trial_rows(db) % 2, 0);
  const auto runs = results::ResultStore::open_readonly(db).runs();
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_TRUE(runs[0].ended_at.has_value());  // ended cleanly
  std::string out;
  ASSERT_EQ(test::run_cli("run " + common, &out), 0) << out;
  EXPECT_EQ(trial_rows(db), 2 * 30 * 2);
}

// In either trial order: the failing case leaves the interleaved rotation, the others finish.
TEST(Runner, ContextLongerThanModelIsRecordedAsFailure) {
  for (const std::string order : {"case", "interleaved"}) {
    test::TempDir dir;
    const std::string path = dir.file("plan.json");
    std::ofstream(path) << R"({"models": [{"name": "tiny", "family": "tiny"}],
      "methods": [{"name": "baseline"}], "context_lengths": [64, 5000, 128],
      "warmup": 0, "trials": 2, "decode_tokens": 2, "trial_order": ")" +
                               order + "\"}";
    const std::string db = dir.file("f.sqlite");
    std::string out;
    EXPECT_EQ(test::run_cli("run " + path + " --db " + db + " --models-dir " + dir.file("m"), &out),
              4)
        << out;
    EXPECT_NE(out.find("exceeds the context length 4096"), std::string::npos) << out;
    const auto store = results::ResultStore::open_readonly(db);
    EXPECT_EQ(store.trial_count(false), 4) << order;  // 2 cases x 2 trials
    EXPECT_EQ(store.trial_count(true), 5) << order;   // and the failure's row
  }
}

}  // namespace
}  // namespace accel

namespace accel {
namespace {

// Agreement with the baseline: keep = 1.0 reproduces the baseline bit for bit, so its agreement is
// exact (first token 1, top-1 1, KL exactly 0); a sparse keep still records finite scores; the
// baseline itself records none; models carry their configs and synthetic family.
TEST(Runner, RecordsAgreementWithTheBaseline) {
  test::TempDir dir;
  const std::string plan = dir.file("plan.json"), db = dir.file("r.sqlite");
  std::ofstream(plan) << nlohmann::json{
      {"name", "agreement-test"},
      {"models", {{{"name", "tiny"}, {"family", "tiny"}}}},
      {"methods",
       {{{"name", "specprefill"}, {"params", {{"keep", {0.25, 1.0}}, {"threshold", 0}}}},
        {{"name", "baseline"}}}},
      {"context_lengths", {300}},
      {"workload", {{"kind", "synthetic"}, {"samples", 1}}},
      {"warmup", 1},
      {"trials", 1},
      {"decode_tokens", 4},
      {"agreement_steps", 6},
      {"threads", 1}}.dump();
  std::string out;
  ASSERT_EQ(
      test::run_cli("run " + plan + " --db " + db + " --models-dir " + dir.file("models"), &out), 0)
      << out;
  const auto trials = results::ResultStore::open_readonly(db).trials();
  ASSERT_EQ(trials.size(), 3u);
  std::map<std::string, const results::TrialRecord*> by;
  for (const auto& t : trials)
    by[t.method == "baseline" ? "baseline" : "keep=" + t.params["keep"].dump()] = &t;
  ASSERT_EQ(by.size(), 3u);
  EXPECT_TRUE(by["baseline"]->scores.empty());
  const auto& full = *by["keep=1.0"];
  EXPECT_EQ(full.scores.at("agreement.first_token"), 1.0);
  EXPECT_EQ(full.scores.at("agreement.top1"), 1.0);
  EXPECT_EQ(full.scores.at("agreement.kl_mean"), 0.0);
  EXPECT_EQ(full.reference_method, "baseline");
  EXPECT_FALSE(by["baseline"]->reference_method);
  const auto runs = results::ResultStore::open_readonly(db).runs();
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].suite["name"], "agreement");
  EXPECT_EQ(runs[0].suite["params"]["steps"], 6);
  ASSERT_TRUE(runs[0].fma_peak_gflops);
  EXPECT_GT(*runs[0].fma_peak_gflops, 0.0);
  EXPECT_EQ(full.sample_hash, by["baseline"]->sample_hash);  // same prompt, same data
  EXPECT_EQ(full.sample_hash.size(), 64u);
  EXPECT_TRUE(full.other_cpu_s && full.loadavg_1m);
  EXPECT_EQ(full.inputs["draft"]["sha256"], full.draft->sha256);
  EXPECT_EQ(full.output_tokens, by["baseline"]->output_tokens);
  const auto& sparse = *by["keep=0.25"];
  EXPECT_GE(sparse.scores.at("agreement.kl_mean"), 0.0);
  EXPECT_LE(sparse.scores.at("agreement.kl_mean"), sparse.scores.at("agreement.kl_max"));
  EXPECT_TRUE(std::isfinite(sparse.scores.at("agreement.kl_max")));
  EXPECT_EQ(full.target.config["synthetic_family"], "tiny");
  EXPECT_EQ(full.target.config["n_layer"], 4);
  ASSERT_TRUE(full.draft);
  EXPECT_EQ(full.draft->config["n_layer"], 2);
  ASSERT_EQ(test::run_cli("report --db " + db + " --table agreement", &out), 0) << out;
  EXPECT_NE(out.find("AGREEMENT ONLY, NOT QUALITY"), std::string::npos) << out;
  ASSERT_EQ(test::run_cli("report --db " + db + " --table costmodel", &out), 0) << out;
  EXPECT_NE(out.find("| tiny/target | tiny/draft | specprefill"), std::string::npos) << out;
}

}  // namespace
}  // namespace accel
