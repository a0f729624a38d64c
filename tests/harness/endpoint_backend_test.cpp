// The endpoint backend end to end: plans whose configurations are requests to our own `serve`
// (a real server on a loopback port, in this process, over the tiny family) store the same
// predictions as the in-process engine, token for token; a server stopped mid-plan leaves failed
// cases that a rerun against the restarted server completes without duplicates; bad plan
// sections are refused naming the member.
#include "harness/endpoint_backend.h"

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include "harness/openai_client.h"
#include "harness/plan.h"
#include "harness/runner.h"
#include "harness/serve_server.h"
#include "models/tokenizer.h"
#include "results/result_store.h"
#include "tests/harness/local_server.h"
#include "tests/support/essay_fixture.h"
#include "tests/support/tiny_family.h"

namespace accel {
namespace {

using nlohmann::json;
using test::LocalServer;

std::string target_path() {
  return (test::tiny_family().dir->path() / "target.gguf").string();
}

// {name, method, params} of the configurations (endpoint) and methods (in-process) compared.
struct Arm {
  std::string name, method;
  json params;
};

json endpoint_plan(const std::string& url, const std::vector<Arm>& arms, const json& suite,
                   int retries = 1) {
  json configs = json::array();
  for (const Arm& a : arms)
    configs.push_back(
        {{"name", a.name},
         {"request", {{"accelbench", {{"method", a.method}, {"params", a.params}}}}}});
  return {{"name", "endpoint-test"},
          {"models", {{{"name", "tiny"}, {"target", target_path()}}}},
          {"backend", {{"base_url", url}, {"model", "tiny"}, {"retries", retries}}},
          {"configurations", configs},
          {"context_lengths", {160}},
          {"suite", suite},
          {"warmup", 0},
          {"trials", 1},
          {"decode_tokens", 12},
          {"timings", false}};
}

json local_plan(const std::vector<Arm>& arms, const json& suite) {
  json methods = json::array();
  for (const Arm& a : arms) methods.push_back({{"name", a.method}, {"params", a.params}});
  json p = endpoint_plan("http://unused", arms, suite);
  p.erase("backend");
  p.erase("configurations");
  p["methods"] = methods;
  p["models"] = {{{"name", "tiny"},
                  {"target", target_path()},
                  {"draft", (test::tiny_family().dir->path() / "draft.gguf").string()}}};
  return p;
}

RunSummary run(const json& plan, const std::string& db) {
  std::ostringstream log;
  RunOptions opt;
  opt.db_path = db;
  const RunSummary s = run_plan(parse_plan(plan, "plan.json", "models"), opt, log);
  if (s.failed > 0) std::printf("%s", log.str().c_str());  // the failures, with their reasons
  return s;
}

// (arm index, sample) -> the stored trial, for the methods or configurations of `arms`.
std::map<std::pair<size_t, std::string>, results::TrialRecord> by_arm(const std::string& db,
                                                                      const std::vector<Arm>& arms,
                                                                      bool endpoint) {
  std::map<std::pair<size_t, std::string>, results::TrialRecord> out;
  for (const auto& t : results::ResultStore::open_readonly(db).trials()) {
    for (size_t i = 0; i < arms.size(); ++i) {
      const bool mine = endpoint
                            ? t.method == arms[i].name
                            : t.method == arms[i].method &&
                                  t.params.value("keep", 1.0) == arms[i].params.value("keep", 1.0);
      if (mine && !t.failed()) out[{i, t.sample_id}] = t;
    }
  }
  return out;
}

void expect_same_predictions(const std::vector<Arm>& arms, const json& suite, int context = 160) {
  test::TempDir dir;
  LocalServer server;
  json remote_plan = endpoint_plan(server.url(), arms, suite), local = local_plan(arms, suite);
  remote_plan["context_lengths"] = local["context_lengths"] = {context};
  const RunSummary remote = run(remote_plan, dir.file("e.sqlite"));
  EXPECT_EQ(remote.failed, 0u);
  const RunSummary local_run = run(local, dir.file("l.sqlite"));
  EXPECT_EQ(local_run.failed, 0u);
  const auto e = by_arm(dir.file("e.sqlite"), arms, true);
  const auto l = by_arm(dir.file("l.sqlite"), arms, false);
  ASSERT_EQ(e.size(), l.size());
  ASSERT_EQ(e.size(), arms.size() * size_t(suite.value("samples", 1)));
  for (const auto& [k, et] : e) {
    const auto& lt = l.at(k);
    EXPECT_EQ(et.output_tokens, lt.output_tokens) << arms[k.first].name << " " << k.second;
    EXPECT_EQ(et.prediction, lt.prediction) << arms[k.first].name << " " << k.second;
    EXPECT_EQ(et.scores, lt.scores) << arms[k.first].name << " " << k.second;
    EXPECT_EQ(et.prompt_tokens, lt.prompt_tokens);
    EXPECT_EQ(et.stats["tokens_from"], "token_ids");
    EXPECT_EQ(et.stats["server"]["method"], arms[k.first].method);
    EXPECT_GT(et.ttft_s.value_or(0), 0);
  }
  // Provenance: the server's /v1/models answer and how prompts were sized, stored with the run.
  const auto runs = results::ResultStore::open_readonly(dir.file("e.sqlite")).runs();
  ASSERT_EQ(runs.size(), 1u);
  const json& b = runs[0].config["backend"];
  EXPECT_EQ(b["base_url"], server.url());
  EXPECT_EQ(b["models"]["data"][0]["id"], "tiny");
  EXPECT_EQ(b["prompt_sizing"], "server /tokenize (agrees with the local GGUF tokenizer)");
}

TEST(EndpointBackend, ParityPlanPldAndBaselineStoreTheEnginesTokens) {
  expect_same_predictions(
      {{"base", "baseline", json::object()}, {"pld", "pld", json::object()}},
      {{"name", "parity"}, {"params", {{"prompt_class", "passage"}}}, {"samples", 2}});
}

TEST(EndpointBackend, NiahPlanWithSpecPrefillStoresTheEnginesPredictions) {
  test::TempDir data;
  const std::string essays = data.file("essays.txt");
  std::ofstream(essays) << test::fixture_essays();
  expect_same_predictions(
      {{"base", "baseline", json::object()},
       {"sp", "specprefill", {{"keep", 0.2}, {"threshold", 0}}}},
      {{"name", "niah"}, {"params", {{"data", essays}, {"depths", 2}}}, {"samples", 2}}, 640);
}

// backend.api "chat": plans whose suites use the model's own chat template send each sample as
// chat turns to /v1/chat/completions of our server over the tiny target with a ChatML template:
// RULER (model_template gguf: the task as the user turn, its answer prefix as the assistant turn
// to continue) and NIAH (a system turn too). The server's templating gives exactly the suite's
// prompt ids (returned in the stream), and the stored predictions equal the in-process engine's
// on the same plan, token for token.
TEST(EndpointBackend, ChatApiSendsTurnsThatTheServerTemplatesToTheSuitesPrompt) {
  test::TempDir dir;
  const std::string chat_gguf = dir.file("chat.gguf");
  test::write_chatml_target(chat_gguf);
  const std::unique_ptr<Model> model = Model::load(chat_gguf);
  LocalServer server(0, model.get());
  const std::vector<Arm> arms = {{"base", "baseline", json::object()}};
  const std::string essays = dir.file("essays.txt");
  std::ofstream(essays) << test::fixture_essays();
  const json suites[] = {
      {{"name", "ruler"},
       {"params", {{"task", "niah_single_1"}, {"model_template", "gguf"}, {"data", essays}}},
       {"samples", 2}},
      {{"name", "niah"},
       {"params", {{"data", essays}, {"depths", 2}, {"model_template", "gguf"}}},
       {"samples", 1}}};
  json remote;
  for (const json& suite : suites) {
    remote = endpoint_plan(server.url(), arms, suite);
    json local = local_plan(arms, suite);
    remote["backend"]["api"] = "chat";
    for (json* p : {&remote, &local}) {
      (*p)["models"] = {{{"name", "tiny"}, {"target", chat_gguf}}};
      (*p)["context_lengths"] = {1024};
    }
    const std::string name = suite["name"];
    EXPECT_EQ(run(remote, dir.file(name + "-e.sqlite")).failed, 0u);
    EXPECT_EQ(run(local, dir.file(name + "-l.sqlite")).failed, 0u);
    const auto e = by_arm(dir.file(name + "-e.sqlite"), arms, true);
    const auto l = by_arm(dir.file(name + "-l.sqlite"), arms, false);
    ASSERT_EQ(e.size(), size_t(suite["samples"])) << name;
    ASSERT_EQ(l.size(), e.size()) << name;
    for (const auto& [k, et] : e) {
      const auto& lt = l.at(k);
      EXPECT_EQ(et.stats["api"], "chat");
      EXPECT_EQ(et.stats["prompt_matches_sample"], true) << name << " " << k.second;
      EXPECT_EQ(et.output_tokens, lt.output_tokens) << name << " " << k.second;
      EXPECT_EQ(et.prediction, lt.prediction) << name << " " << k.second;
      EXPECT_EQ(et.scores, lt.scores) << name << " " << k.second;
      EXPECT_EQ(et.prompt_tokens, lt.prompt_tokens);
    }
  }
  EXPECT_EQ(server.server().metrics().requests("chat", 200), 3u);
  // A suite whose prompt is not made from the chat template has no turns to send: each trial
  // fails naming backend.api.
  remote["suite"] = {{"name", "parity"}, {"samples", 1}};
  remote["reference"] = {{"method", "base"}};
  const std::string db = dir.file("p.sqlite");
  EXPECT_EQ(run(remote, db).failed, 1u);
  results::TrialFilter all;
  all.include_failed = true;
  for (const auto& t : results::ResultStore::open_readonly(db).trials(all))
    EXPECT_NE(t.error.value_or("").find("backend.api is \"chat\""), std::string::npos)
        << t.error.value_or("");
}

TEST(EndpointBackend, AServerStoppedMidPlanLeavesFailuresThatARerunCompletesOnce) {
  test::TempDir dir;
  const std::string db = dir.file("r.sqlite");
  auto server = std::make_unique<LocalServer>();
  const int port = server->port();
  const std::vector<Arm> arms = {{"base", "baseline", json::object()}};
  const json suite = {
      {"name", "parity"}, {"params", {{"prompt_class", "passage"}}}, {"samples", 8}};
  json plan = endpoint_plan(server->url(), arms, suite, /*retries=*/0);
  plan["decode_tokens"] = 64;
  // Stop the server once 3 requests have been answered, while the plan runs.
  std::thread killer = test::stop_after_answers(*server, 3);
  const RunSummary first = run(plan, db);
  killer.join();
  EXPECT_GE(first.completed, 3u);
  EXPECT_GT(first.failed, 0u);
  EXPECT_EQ(first.completed + first.failed, 8u);
  // The failures are stored with their reason.
  size_t failures = 0;
  results::TrialFilter all;
  all.include_failed = true;
  for (const auto& t : results::ResultStore::open_readonly(db).trials(all))
    if (t.failed()) {
      ++failures;
      EXPECT_NE(t.error->find("no answer"), std::string::npos) << *t.error;
    }
  EXPECT_EQ(failures, first.failed);

  LocalServer again(port);
  const RunSummary second = run(plan, db);
  EXPECT_EQ(second.failed, 0u);
  EXPECT_EQ(second.skipped, first.completed);
  EXPECT_EQ(second.completed, first.failed);
  std::set<std::string> keys;
  size_t ok = 0;
  for (const auto& t : results::ResultStore::open_readonly(db).trials())
    if (!t.failed()) {
      ++ok;
      EXPECT_TRUE(keys.insert(t.case_key).second) << "case stored twice: " << t.case_key;
    }
  EXPECT_EQ(ok, 8u);
}

TEST(EndpointBackend, PlanSectionsAreCheckedNamingTheMember) {
  const json suite = {{"name", "parity"}, {"samples", 1}};
  auto refused = [&](json plan, const std::string& names) {
    try {
      parse_plan(plan, "p.json", "models");
      ADD_FAILURE() << "accepted: " << plan.dump();
    } catch (const std::exception& e) {
      EXPECT_NE(std::string(e.what()).find(names), std::string::npos) << e.what();
    }
  };
  const json good =
      endpoint_plan("http://127.0.0.1:1/v1", {{"a", "baseline", json::object()}}, suite);
  EXPECT_NO_THROW(parse_plan(good, "p.json", "models"));
  json p = good;
  p["backend"]["base_url"] = "ftp://x";
  refused(p, "backend.base_url");
  p = good;
  p["backend"].erase("model");
  refused(p, "backend.model");
  p = good;
  p["backend"]["retries"] = 99;
  refused(p, "backend.retries");
  p = good;
  p["backend"]["api"] = "responses";
  refused(p, "backend.api: 'responses'");
  p = good;
  p["backend"]["api"] = 1;
  refused(p, "backend.api");
  p = good;
  p["configurations"][0]["request"]["messages"] = json::array();
  refused(p, "configurations[0].request.messages");
  p = good;
  p["configurations"][0]["request"]["max_tokens"] = 5;
  refused(p, "configurations[0].request.max_tokens");
  p = good;
  p["configurations"].push_back(p["configurations"][0]);
  refused(p, "duplicate configuration");
  p = good;
  p["methods"] = json::array({{{"name", "baseline"}}});
  refused(p, "methods");
  p = good;
  p["reference"] = {{"method", "nosuch"}};
  refused(p, "reference.method");
  // The configuration is part of the case key: same plan, other request extras, other keys.
  const Plan a = parse_plan(good, "p.json", "models");
  p = good;
  p["configurations"][0]["request"]["accelbench"]["params"] = {{"x", 1}};
  const Plan b = parse_plan(p, "p.json", "models");
  EXPECT_NE(expand_plan(a)[0].config(a), expand_plan(b)[0].config(b));
  // So is the API: a chat plan's cases are not its completions twin's; completions plans keep the
  // keys they had before `api` existed.
  p = good;
  p["backend"]["api"] = "chat";
  const Plan c = parse_plan(p, "p.json", "models");
  EXPECT_EQ(expand_plan(c)[0].config(c)["backend"]["api"], "chat");
  EXPECT_FALSE(expand_plan(a)[0].config(a)["backend"].contains("api"));
}

}  // namespace
}  // namespace accel
