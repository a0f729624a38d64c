// The Suite layer: the registry, parameter resolution, metric declarations, the synthetic suite's
// samples (deterministic, exact length, the same ids the runner drew before suites existed) and
// the agreement suite's scoring against a reference.
#include "suites/suite.h"

#include <gtest/gtest.h>

#include "suites/agreement.h"
#include "suites/synthetic.h"
#include "suites/synthetic_prompt.h"

namespace accel {
namespace {

TEST(Suites, RegistryFindsEverySuiteByNameAndRefusesUnknown) {
  for (const Suite* s : all_suites()) {
    EXPECT_EQ(&find_suite(s->name()), s);
    EXPECT_FALSE(s->version().empty()) << s->name();
    for (const MetricSpec& m : s->metrics()) EXPECT_FALSE(m.name.empty()) << s->name();
  }
  try {
    find_suite("rulerr");
    FAIL() << "no exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("known: synthetic, agreement"), std::string::npos);
  }
}

TEST(Suites, ParamsResolveWithDefaultsAndNameTheBadOne) {
  const Suite& a = find_suite("agreement");
  EXPECT_EQ(resolve_suite_params(a, nlohmann::json::object())["steps"], 16);
  EXPECT_EQ(resolve_suite_params(a, {{"steps", 4}})["steps"], 4);
  try {
    resolve_suite_params(a, {{"stepz", 4}});
    FAIL() << "no exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("suite 'agreement': unknown parameter 'stepz'"),
              std::string::npos);
  }
}

TEST(Suites, SyntheticSamplesAreExactDeterministicAndTheRunnersOldPrompts) {
  const SyntheticSuite s;
  const SuiteContext ctx{258, 256, 257, nullptr};
  const Sample a = s.make_sample(1000, 2, 5, ctx, {}), b = s.make_sample(1000, 2, 5, ctx, {});
  EXPECT_EQ(a.prompt, b.prompt);
  EXPECT_EQ(a.prompt.size(), 1000u);
  EXPECT_EQ(a.prompt[0], 256);
  EXPECT_EQ(a.id, "2");
  EXPECT_NE(a.prompt, s.make_sample(1000, 3, 5, ctx, {}).prompt);
  // The seed mix of the runner before suites: stores measured then saw these exact prompts.
  EXPECT_EQ(a.prompt, synthetic_prompt(258, 256, {257}, 1000, 5 * 1000003ull + 2 * 7919ull + 1000));
  for (int32_t t : a.prompt) EXPECT_NE(t, 257) << "EOS never appears inside a prompt";
}

TEST(Suites, AgreementNeedsForcedLogitsAndScoresAgainstTheReference) {
  const AgreementSuite s;
  const nlohmann::json p = resolve_suite_params(s, {{"steps", 2}});
  const ReferenceNeed need = s.reference_need(p);
  EXPECT_EQ(need.kind, ReferenceNeed::Kind::ForcedLogits);
  EXPECT_EQ(need.steps, 2);
  const Generation ref{{0, 1}, {{2.f, 0.f, 0.f}, {0.f, 3.f, 0.f}}};
  const Generation same = ref, other{{0, 2}, {{2.f, 0.f, 0.f}, {0.f, 0.f, 3.f}}};
  const Sample sample;
  Scores sc = s.score(sample, same, &ref, {}, p);
  EXPECT_EQ(sc.at("agreement.top1"), 1.0);
  EXPECT_EQ(sc.at("agreement.kl_mean"), 0.0);
  sc = s.score(sample, other, &ref, {}, p);
  EXPECT_EQ(sc.at("agreement.first_token"), 1.0);
  EXPECT_EQ(sc.at("agreement.top1"), 0.5);
  EXPECT_GT(sc.at("agreement.kl_max"), 1.0);
  EXPECT_TRUE(s.score(sample, same, nullptr, {}, p).empty()) << "the reference scores nothing";
  std::set<std::string> declared;
  for (const auto& m : s.metrics()) declared.insert(m.name);
  for (const auto& [name, v] : sc) EXPECT_TRUE(declared.count(name)) << name;
}

}  // namespace
}  // namespace accel
