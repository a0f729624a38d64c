// Plan validation (every error names the file and field) and expansion into cases.
#include <gtest/gtest.h>

#include <fstream>

#include "harness/plan.h"
#include "harness/runner.h"
#include "tests/support/test_support.h"

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

// A few hundred bytes of plan used to expand into more cases than memory holds inside parse_plan
// (tests/fuzz/fuzz_plan.cpp; tests/fuzz/regressions/plan/ has the inputs): now counted and refused.
TEST(Plan, RefusesAPlanThatExpandsPastTheCaseLimitBeforeExpandingIt) {
  nlohmann::json j = good();
  j["workload"]["samples"] = 100000;
  j["context_lengths"] = nlohmann::json::array();
  for (int i = 1; i <= 11; ++i) j["context_lengths"].push_back(i);
  EXPECT_NE(error_of(j).find("p.json: (top level): expands to more than 1000000 cases"),
            std::string::npos)
      << error_of(j);
  j["context_lengths"] = {64, 128};  // 200000 cases: allowed
  EXPECT_EQ(error_of(j), "");
  // Sweeps multiply too, and saturate rather than overflow.
  j = good();
  j["methods"] = {{{"name", "specprefill"}, {"params", nlohmann::json::object()}}};
  for (int k = 0; k < 60; ++k) j["methods"][0]["params"]["k" + std::to_string(k)] = {1, 2, 3};
  EXPECT_NE(error_of(j).find("expands to more than"), std::string::npos) << error_of(j);
}

TEST(Plan, ExpandsCartesianProduct) {
  const Plan p = parse_plan(good(), "p.json", "/tmp/m");
  const auto cases = expand_plan(p);
  EXPECT_EQ(cases.size(), 1u * 1u * 2u * 3u);
  EXPECT_EQ(cases[0].context_len, 64);
  EXPECT_EQ(cases[3].context_len, 128);
  EXPECT_EQ(cases[4].sample, 1);
  EXPECT_EQ(p.models[0].path("target"), "/tmp/m/tiny-f32-s0/target.gguf");
  EXPECT_EQ(p.models[0].path("draft"), "/tmp/m/tiny-f32-s0/draft.gguf");
}

TEST(Plan, FamilyRolesMapToMemberFiles) {
  nlohmann::json j = good();
  j["models"][0] = {{"name", "s"},
                    {"family", "small"},
                    {"roles", {{"aux", "draft-xs"}}},
                    {"draft_role", "draft-l"}};
  const Plan p = parse_plan(j, "p.json", "/tmp/m");
  EXPECT_EQ(p.models[0].path("draft"), "/tmp/m/small-f32-s0/draft-l.gguf");
  EXPECT_EQ(p.models[0].path("aux"), "/tmp/m/small-f32-s0/draft-xs.gguf");
  EXPECT_EQ(p.models[0].path("predictor"), "");
}

TEST(Plan, FamilyDtypeAcceptsEveryWeightSchemeModelsMakeWrites) {
  for (const char* t :
       {"f32", "f16", "bf16", "q8_0", "q4_0", "q4_k", "q5_k", "q6_k", "q4_k_m", "q5_k_m"}) {
    nlohmann::json j = good();
    j["models"][0]["dtype"] = t;
    const Plan p = parse_plan(j, "p.json", "/tmp/m");
    EXPECT_EQ(p.models[0].path("target"), std::string("/tmp/m/tiny-") + t + "-s0/target.gguf");
  }
}

TEST(Plan, ExplicitInputsByRole) {
  nlohmann::json j = good();
  j["models"][0] = {{"name", "x"},
                    {"target", "t.gguf"},
                    {"draft", "d.gguf"},
                    {"inputs", {{"aux", "a.gguf"}, {"predictor", "p.gguf"}}}};
  const Plan p = parse_plan(j, "p.json", "/tmp/m");
  EXPECT_EQ(p.models[0].inputs.size(), 4u);
  EXPECT_EQ(p.models[0].path("predictor"), "p.gguf");
}

TEST(Plan, OlderWorkloadMeansAgreementSuiteWithItsSteps) {
  nlohmann::json j = good();
  j["agreement_steps"] = 8;
  Plan p = parse_plan(j, "p.json", "/tmp/m");
  EXPECT_EQ(p.suite.name, "agreement");
  EXPECT_EQ(p.suite.params["steps"], 8);
  EXPECT_EQ(p.suite.samples, 3);
  j["agreement_steps"] = 0;
  p = parse_plan(j, "p.json", "/tmp/m");
  EXPECT_EQ(p.suite.name, "synthetic");
  EXPECT_EQ(p.reference.method, "baseline");
}

TEST(Plan, KvDtypesAreASweepDimension) {
  nlohmann::json j = good();
  j["kv_dtypes"] = {"f32", "f16"};
  const Plan p = parse_plan(j, "p.json", "/tmp/m");
  const auto cases = expand_plan(p);
  EXPECT_EQ(cases.size(), 2u * 2u * 3u);
  EXPECT_EQ(cases[0].kv_dtype, "f32");
  EXPECT_EQ(cases[6].kv_dtype, "f16");
  EXPECT_FALSE(cases[0].config(p).contains("kv_dtype"));  // default: keys of older plans kept
  EXPECT_EQ(cases[6].config(p)["kv_dtype"], "f16");
}

TEST(Plan, DefaultPlanIsValid) {
  const Plan p = parse_plan(default_plan_json(), "builtin", "models-cache");
  EXPECT_GT(expand_plan(p).size(), 0u);
}

// A number that overflows a double makes nlohmann throw out_of_range, not parse_error: found by
// the plan fuzzer (tests/fuzz/regressions/plan/), it must be a PlanError naming the file.
TEST(Plan, JsonNumberOverflowIsAPlanErrorNamingTheFile) {
  test::TempDir dir;
  const std::string path = dir.file("big.json");
  std::ofstream(path) << R"({"trials": 1e99999})";
  try {
    load_plan(path, dir.file("m"));
    FAIL() << "no error";
  } catch (const PlanError& e) {
    EXPECT_NE(std::string(e.what()).find(path + ": not valid JSON"), std::string::npos) << e.what();
  }
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
      {[](auto& j) {
         j["kv_dtypes"] = {"f32", "int3"};
       },
       "kv_dtypes[1]"},
      {[](auto& j) {
         j["suite"] = {{"name", "agreement"}};
       },
       "workload"},
      {[](auto& j) {
         j.erase("workload");
         j["suite"] = {{"name", "nope"}};
       },
       "suite"},
      {[](auto& j) {
         j.erase("workload");
         j["suite"] = {{"name", "agreement"}, {"params", {{"steps", 0}}}};
       },
       "suite"},
      {[](auto& j) {
         j["reference"] = {{"method", "specprefill"}};
       },
       "reference.method"},
      {[](auto& j) {
         j["models"][0]["roles"] = {{"aux", "draft-zz"}};
       },
       "models[0].roles.aux"},
      {[](auto& j) {
         j["models"][0]["inputs"] = {{"aux", "a.gguf"}};
       },
       "models[0]"},
  };
  for (const auto& c : cases) {
    nlohmann::json j = good();
    c.edit(j);
    const std::string e = error_of(j);
    EXPECT_NE(e.find("p.json: " + c.field + ":"), std::string::npos)
        << "field " << c.field << " -> '" << e << "'";
  }
}

// "timings": false marks a plan quality-only (its keys ignore commit and CPU); it must have scores
// to be about, and it does not change the case's configuration (its base key).
TEST(Plan, TimingsFalseMakesAScoredPlanQualityOnly) {
  nlohmann::json j = good();
  const Plan timed = parse_plan(j, "p.json", "/tmp/m");
  EXPECT_TRUE(timed.timings);
  EXPECT_FALSE(quality_only(timed));
  j["timings"] = false;
  const Plan quality = parse_plan(j, "p.json", "/tmp/m");
  EXPECT_TRUE(quality_only(quality));
  EXPECT_EQ(expand_plan(quality)[0].config(quality), expand_plan(timed)[0].config(timed));
  j["timings"] = "no";
  EXPECT_NE(error_of(j).find("p.json: timings: must be true or false"), std::string::npos)
      << error_of(j);
  j["timings"] = false;
  j["agreement_steps"] = 0;  // the plain synthetic suite: nothing but timings
  EXPECT_NE(error_of(j).find("p.json: timings: false needs a suite with scores"), std::string::npos)
      << error_of(j);
}

TEST(Plan, CaseKeysDependOnConfigAndEveryInputDigest) {
  const Plan p = parse_plan(good(), "p.json", "/tmp/m");
  const auto cases = expand_plan(p);
  const std::map<std::string, std::string> aa{{"target", "aa"}};
  const std::string a = case_key(p, cases[0], aa);
  EXPECT_EQ(a, case_key(p, cases[0], aa));
  EXPECT_NE(a, case_key(p, cases[1], aa));
  EXPECT_NE(a, case_key(p, cases[0], {{"target", "bb"}}));
  EXPECT_NE(a, case_key(p, cases[0], {{"target", "aa"}, {"predictor", "cc"}}));
  EXPECT_EQ(a.size(), 64u);
}

}  // namespace
}  // namespace accel
