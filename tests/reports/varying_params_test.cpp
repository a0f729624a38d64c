// The one "parameters that vary" rule (varying_params.h) on structured rows: a key varies within
// a method when its values differ or some rows lack it; model labels count like parameters; other
// methods never affect a method's keys; labels honour exclude and include.
#include "reports/varying_params.h"

#include <gtest/gtest.h>

namespace accel::reports {
namespace {

using Keys = std::vector<std::string>;

TEST(VaryingParams, DifferingOrMissingKeysVary) {
  const std::vector<ConfigRow> rows = {
      {"pld", {{"ngram", 3}, {"draft_len", 8}, {"min", 1}}},
      {"pld", {{"ngram", 4}, {"draft_len", 8}, {"min", 1}}},
      {"pld", {{"ngram", 4}, {"draft_len", 8}}},  // lacks "min"
      {"specprefill", {{"keep", 0.3}, {"draft", "tiny/draft"}}},
      {"specprefill", {{"keep", 0.3}, {"draft", "tiny/draft2"}}},
      {"baseline", nlohmann::json::object()},
  };
  const VaryingParams v = varying_params(rows);
  EXPECT_EQ(v.at("pld"), (Keys{"min", "ngram"}));
  EXPECT_EQ(v.at("specprefill"), (Keys{"draft"})) << "a model label varies like a parameter";
  EXPECT_EQ(v.at("baseline"), Keys{}) << "every method present has an entry";
}

TEST(VaryingParams, RepeatedRowsDoNotMakeAKeyMissing) {
  const std::vector<ConfigRow> rows = {{"m", {{"a", 1}}}, {"m", {{"a", 1}}}, {"m", {{"a", 1}}}};
  EXPECT_EQ(varying_params(rows).at("m"), Keys{});
}

TEST(VaryingParams, LabelsFromTrials) {
  results::TrialRecord a, b;
  a.method = b.method = "specprefill";
  a.params = {{"keep", 0.3}, {"lookahead", 8}, {"pool", "max"}};
  b.params = {{"keep", 0.5}, {"lookahead", 8}, {"pool", "max"}};
  a.draft = results::ModelRef{"/m/d1.gguf", "s1", "llama", 1};
  b.draft = results::ModelRef{"/m/d2.gguf", "s2", "llama", 1};
  const VaryingParams v = varying_params_by_method({a, b});
  EXPECT_EQ(v.at("specprefill"), (Keys{"draft", "keep"}));
  EXPECT_EQ(configuration_label(a, v), "draft=d1, keep=0.3");
  EXPECT_EQ(configuration_label(a, v, {"draft"}), "keep=0.3");
  EXPECT_EQ(configuration_label(a, v, {"draft", "keep"}, {"pool"}), "pool=max");
  EXPECT_EQ(configuration_params(b, v), (nlohmann::json{{"draft", "d2"}, {"keep", 0.5}}));
}

}  // namespace
}  // namespace accel::reports
