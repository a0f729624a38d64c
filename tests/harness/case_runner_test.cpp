// Case-level rules of the runner: a method may fall back only for the reasons it declares; any
// other fallback, and any exception, fails the trial (recorded as a failure, never as a timing).
#include "harness/case_runner.h"

#include <gtest/gtest.h>

#include <fstream>

#include "results/result_store.h"
#include "tests/support/test_support.h"

namespace accel {
namespace {

class DeclaresOneFallback : public Method {
 public:
  std::string name() const override { return "declares_one"; }
  std::string summary() const override { return "test method"; }
  std::vector<std::string> fallback_reasons() const override { return {"below_threshold"}; }
  Outcome run(const Engine&, const Request&, const nlohmann::json&) const override { return {}; }
};

TEST(CaseRunner, OnlyDeclaredFallbackReasonsPass) {
  const DeclaresOneFallback m;
  Outcome o;
  EXPECT_NO_THROW(check_declared_fallback(m, o));
  o.stats["fallback"] = "below_threshold";
  EXPECT_NO_THROW(check_declared_fallback(m, o));
  o.stats["fallback"] = "error";
  try {
    check_declared_fallback(m, o);
    FAIL() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("undeclared reason: \"error\""), std::string::npos);
  }
}

// A SpecPrefill case below its threshold falls back for its declared reason: recorded as a
// successful trial carrying the reason, which the tables then count and keep out of speedups.
TEST(CaseRunner, DeclaredFallbackIsRecordedAsATrialWithItsReason) {
  test::TempDir dir;
  const std::string plan = dir.file("plan.json"), db = dir.file("f.sqlite");
  std::ofstream(plan) << R"({"models": [{"name": "tiny", "family": "tiny"}],
    "methods": [{"name": "specprefill", "params": {"threshold": 100000}}],
    "context_lengths": [64], "warmup": 0, "trials": 1, "decode_tokens": 2,
    "suite": {"name": "synthetic"}})";
  std::string out;
  ASSERT_EQ(test::run_cli("run " + plan + " --db " + db + " --models-dir " + dir.file("m"), &out),
            0)
      << out;
  const auto t = results::ResultStore::open_readonly(db).trials();
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(t[0].stats["fallback"], "below_threshold");
  EXPECT_EQ(t[0].workload, "synthetic");
}

}  // namespace
}  // namespace accel
