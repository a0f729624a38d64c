// Plan validation (every error names the file and field) and expansion into cases.
#include <gtest/gtest.h>

#include "harness/plan.h"
#include "harness/runner.h"

namespace accel {
namespace {

nlohmann::json good() {
  return nlohmann::json::parse(R"({
    "name": "t",
    "models": [{"name": "tiny", "family": "tiny"}],
    "methods": [{"name": "baseline"}],
    "context_lengths": [64, 128],
    "workload": {"kind": "synthetic", "samples": 3},
    "trials": 2, "warmup": 0, "decode_tokens": 4
  })");
}

std::string error_of(const nlohmann::json& j) {
  try {
    parse_plan(j, "p.json", "/tmp/m");
  } catch (const PlanError& e) {
    return e.what();
  }
  return "";
}

TEST(Plan, ExpandsCartesianProduct) {
  const Plan p = parse_plan(good(), "p.json", "/tmp/m");
  const auto cases = expand_plan(p);
  EXPECT_EQ(cases.size(), 1u * 1u * 2u * 3u);
  EXPECT_EQ(cases[0].context_len, 64);
  EXPECT_EQ(cases[3].context_len, 128);
  EXPECT_EQ(cases[4].sample, 1);
  EXPECT_EQ(p.models[0].target, "/tmp/m/tiny-f32-s0/target.gguf");
  EXPECT_EQ(p.models[0].draft, "/tmp/m/tiny-f32-s0/draft.gguf");
}

TEST(Plan, DefaultPlanIsValid) {
  const Plan p = parse_plan(default_plan_json(), "builtin", "models-cache");
  EXPECT_GT(expand_plan(p).size(), 0u);
}

TEST(Plan, ErrorsNameTheField) {
  struct Bad {
    std::function<void(nlohmann::json&)> edit;
    std::string field;
  };
  const std::vector<Bad> cases = {
      {[](auto& j) { j.erase("models"); }, "models"},
      {[](auto& j) { j["models"][0]["family"] = "huge"; }, "models[0].family"},
      {[](auto& j) { j["models"][0]["dtype"] = "q5"; }, "models[0].dtype"},
      {[](auto& j) { j["models"].push_back(j["models"][0]); }, "models[1].name"},
      {[](auto& j) { j["methods"][0]["name"] = "magic"; }, "methods[0].name"},
      {[](auto& j) {
         j["methods"][0]["params"] = {{"keep", 0.5}};
       },
       "methods[0].params"},
      {[](auto& j) {
         j["context_lengths"] = {64, -1};
       },
       "context_lengths[1]"},
      {[](auto& j) { j["context_lengths"] = nlohmann::json::array(); }, "context_lengths"},
      {[](auto& j) { j["trials"] = 0; }, "trials"},
      {[](auto& j) { j["warmup"] = "one"; }, "warmup"},
      {[](auto& j) { j["workload"]["kind"] = "ruler"; }, "workload.kind"},
      {[](auto& j) { j["workload"]["samples"] = 0; }, "workload.samples"},
      {[](auto& j) { j["typo"] = 1; }, "typo"},
  };
  for (const auto& c : cases) {
    nlohmann::json j = good();
    c.edit(j);
    const std::string e = error_of(j);
    EXPECT_NE(e.find("p.json: " + c.field + ":"), std::string::npos)
        << "field " << c.field << " -> '" << e << "'";
  }
}

TEST(Plan, CaseKeysDependOnConfigAndModels) {
  const Plan p = parse_plan(good(), "p.json", "/tmp/m");
  const auto cases = expand_plan(p);
  const std::string a = case_key(p, cases[0], "aa", "");
  EXPECT_EQ(a, case_key(p, cases[0], "aa", ""));
  EXPECT_NE(a, case_key(p, cases[1], "aa", ""));
  EXPECT_NE(a, case_key(p, cases[0], "bb", ""));
  EXPECT_EQ(a.size(), 64u);
}

}  // namespace
}  // namespace accel
