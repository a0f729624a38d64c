// Load sweeps in endpoint plans: parsing and expansion (one case per configuration x context x
// rate x concurrency, distinct keys), and a loopback run of a 1/2/4/8 concurrency sweep against
// our own serve over the tiny family that stores every request and point, renders the serve table
// and SVG from the store, resumes without duplicates, and records a point whose server is down as
// a failure that a rerun completes.
#include "harness/load_runner.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include "harness/case_keys.h"
#include "harness/plan.h"
#include "harness/runner.h"
#include "reports/serve_table.h"
#include "tests/harness/local_server.h"

namespace accel {
namespace {

using nlohmann::json;

json load_plan(const std::string& url) {
  return {{"name", "load-test"},
          {"models",
           {{{"name", "tiny"},
             {"target", (test::tiny_family().dir->path() / "target.gguf").string()}}}},
          {"backend", {{"base_url", url}, {"model", "tiny"}}},
          {"configurations",
           {{{"name", "plain"}, {"request", {{"accelbench", {{"method", "baseline"}}}}}}}},
          {"context_lengths", {48}},
          {"decode_tokens", 8},
          {"max_concurrency", {1, 2, 4, 8}},
          {"load_requests", 8}};
}

TEST(LoadPlan, ExpandsOneCasePerPointWithDistinctKeys) {
  json j = load_plan("http://127.0.0.1:1/v1");
  j["request_rate"] = {0, 20};
  const Plan p = parse_plan(j, "plan.json", "models");
  EXPECT_EQ(p.trials, 8);
  EXPECT_EQ(p.warmup, 0);
  const auto cases = expand_plan(p);
  ASSERT_EQ(cases.size(), 8u);  // 2 rates x 4 concurrencies
  std::set<std::string> keys, labels;
  for (const Case& c : cases) {
    EXPECT_GT(c.concurrency, 0);
    keys.insert(case_key(p, c, {{"target", "aa"}}));
    labels.insert(c.label(p));
    EXPECT_EQ(c.config(p)["load"]["requests"], 8);
  }
  EXPECT_EQ(keys.size(), 8u);
  EXPECT_TRUE(
      labels.count("plain accelbench={\"method\":\"baseline\"} concurrency=4 rate=20 ctx=48 "
                   "s0 @tiny"))
      << *labels.begin();
}

TEST(LoadPlan, BadLoadMembersAreRefusedNamingThem) {
  const auto err = [](json j) {
    try {
      parse_plan(j, "plan.json", "models");
    } catch (const PlanError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const json ok = load_plan("http://127.0.0.1:1/v1");
  json j = ok;
  j["max_concurrency"] = {1, 0};
  EXPECT_NE(err(j).find("max_concurrency[1]"), std::string::npos) << err(j);
  j = ok;
  j["max_concurrency"] = {1.5};
  EXPECT_NE(err(j).find("max_concurrency: values must be integers"), std::string::npos);
  j = ok;
  j["request_rate"] = {-1};
  EXPECT_NE(err(j).find("request_rate[0]"), std::string::npos);
  j = ok;
  j["suite"] = {{"name", "agreement"}};
  EXPECT_NE(err(j).find("suite: a load sweep"), std::string::npos);
  j = ok;
  j["trials"] = 3;
  EXPECT_NE(err(j).find("trials: a load sweep"), std::string::npos);
  j = ok;
  j["backend"]["api"] = "chat";
  EXPECT_NE(err(j).find("backend.api"), std::string::npos) << err(j);
  j = ok;
  j.erase("max_concurrency");
  EXPECT_NE(err(j).find("load_requests: belongs to a load sweep"), std::string::npos);
  j = ok;
  j.erase("backend");
  j.erase("configurations");
  j["methods"] = {{{"name", "baseline"}}};
  EXPECT_NE(err(j).find("max_concurrency: a load sweep needs a `backend`"), std::string::npos);
}

results::TrialFilter with_failures() {
  results::TrialFilter f;
  f.include_failed = true;
  return f;
}

RunSummary run(const json& plan, const std::string& db) {
  std::ostringstream log;
  RunOptions opt;
  opt.db_path = db;
  return run_plan(parse_plan(plan, "plan.json", "models"), opt, log);
}

TEST(LoadRunner, ConcurrencySweepStoresEveryRequestAndRendersTheServeReport) {
  test::TempDir dir;
  const std::string db = dir.file("load.sqlite");
  test::LocalServer server;
  const RunSummary s = run(load_plan(server.url()), db);
  EXPECT_EQ(s.cases, 4u);
  EXPECT_EQ(s.completed, 4u);
  EXPECT_EQ(s.failed, 0u);
  {
    const auto store = results::ResultStore::open_readonly(db);
    const auto points = store.load_points();
    ASSERT_EQ(points.size(), 4u);
    std::set<int64_t> conc;
    for (const auto& p : points) {
      conc.insert(p.concurrency);
      EXPECT_EQ(p.requests, 8);
      EXPECT_EQ(p.output_tokens, 8 * 8);  // EOS ignored: every answer has decode_tokens tokens
      EXPECT_GT(p.wall_s, 0);
    }
    EXPECT_EQ(conc, (std::set<int64_t>{1, 2, 4, 8}));
    const auto trials = store.trials();
    ASSERT_EQ(trials.size(), 32u);
    for (const auto& t : trials) {
      EXPECT_EQ(t.workload, "load");
      EXPECT_EQ(t.prompt_tokens, 48);
      EXPECT_EQ(t.decode_tokens, 8);
      ASSERT_TRUE(t.ttft_s.has_value());
      EXPECT_GT(*t.ttft_s, 0);
      EXPECT_GE(t.stats["e2e_s"].get<double>(), *t.ttft_s);
      EXPECT_EQ(t.stats["itl_s"].size(), 7u);  // one gap between each of the 8 content chunks
      EXPECT_GT(t.stats["tpot_s"].get<double>(), 0);
    }
    const reports::Table table = reports::serve_table(store, {});
    ASSERT_EQ(table.rows.size(), 4u);
    const std::string md = reports::render(table, reports::Format::Markdown);
    std::printf("%s", md.c_str());  // the measured table, for the log
    for (const char* c : {"| plain | 48 | inf | 1 | 8 |", "| plain | 48 | inf | 8 | 8 |"})
      EXPECT_NE(md.find(c), std::string::npos) << md;
    const auto svgs = reports::write_serve_plots(store, {}, dir.file("svg"));
    ASSERT_EQ(svgs.size(), 1u);
    EXPECT_GT(std::filesystem::file_size(svgs[0]), 500u);
  }
  // A rerun skips every point: nothing is counted twice.
  const RunSummary again = run(load_plan(server.url()), db);
  EXPECT_EQ(again.skipped, 4u);
  EXPECT_EQ(again.completed, 0u);
  const auto store = results::ResultStore::open_readonly(db);
  EXPECT_EQ(store.load_points().size(), 4u);
  EXPECT_EQ(store.trials().size(), 32u);
}

TEST(LoadRunner, AServerStoppedMidSweepFailsItsPointsAndARerunCompletesThemOnce) {
  test::TempDir dir;
  const std::string db = dir.file("load.sqlite");
  auto server = std::make_unique<test::LocalServer>();
  const int port = server->port();
  json plan = load_plan(server->url());
  plan["max_concurrency"] = {1, 2};
  plan["load_requests"] = 3;
  // Stop the server once the first point's 3 requests have been answered.
  std::thread killer = test::stop_after_answers(*server, 3);
  const RunSummary first = run(plan, db);
  killer.join();
  EXPECT_EQ(first.completed + first.failed, 2u);
  EXPECT_GE(first.failed, 1u);  // the second point (at least) met a stopped server
  {
    const auto store = results::ResultStore::open_readonly(db);
    EXPECT_EQ(store.load_points().size(), first.completed);
    const auto failed = store.failed_cases();
    ASSERT_EQ(failed.size(), first.failed);
    for (const auto& t : store.trials(with_failures()))
      if (t.failed()) {
        EXPECT_NE(t.error->find("requests failed; first:"), std::string::npos);
      }
  }
  test::LocalServer restarted(port);
  const RunSummary again = run(plan, db);
  EXPECT_EQ(again.completed, first.failed);
  EXPECT_EQ(again.skipped, first.completed);
  EXPECT_EQ(again.failed, 0u);
  const auto store = results::ResultStore::open_readonly(db);
  EXPECT_EQ(store.load_points().size(), 2u);
  EXPECT_EQ(store.trials().size(), 6u);  // each request once; the failure records were replaced
  EXPECT_EQ(store.trials(with_failures()).size(), 6u);
}

// `accelbench run` on a load plan prints the serve table (its points are what it stored), not the
// ttft table, which has no rows for load requests' prompts of one length per point.
TEST(LoadRunner, RunPrintsTheServeTableAfterALoadPlan) {
  test::TempDir dir;
  test::LocalServer server;
  json plan = load_plan(server.url());
  plan["max_concurrency"] = {1};
  plan["load_requests"] = 2;
  const std::string path = dir.file("load.json");
  std::ofstream(path) << plan.dump();
  std::string out;
  ASSERT_EQ(test::run_cli("run " + path + " --db " + dir.file("l.sqlite"), &out), 0) << out;
  EXPECT_NE(out.find("Serving under load"), std::string::npos) << out;
  EXPECT_NE(out.find("| plain | 48 | inf | 1 | 2 |"), std::string::npos) << out;
  EXPECT_EQ(out.find("TTFT by method"), std::string::npos) << out;
}

}  // namespace
}  // namespace accel
