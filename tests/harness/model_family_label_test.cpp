// Which family a stored model belongs to, and whether it is random-weight: `accelbench run` marks
// generated families' files "synthetic_family" (reports then say their scores carry no meaning)
// and the files trained here (models/capable, which carry accelbench.training.* keys)
// "trained_family", so their retrieval scores are not labelled meaningless.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "results/result_store.h"
#include "tests/support/test_support.h"

namespace accel {
namespace {

nlohmann::json stored_target_config(const std::string& family) {
  test::TempDir dir;
  const std::string plan = dir.file("plan.json"), db = dir.file("r.sqlite");
  std::ofstream(plan) << nlohmann::json{
      {"models", {{{"name", family}, {"family", family}}}},
      {"methods", {{{"name", "baseline"}}}},
      {"context_lengths", {64}},
      {"warmup", 0},
      {"trials", 1},
      {"decode_tokens", 2},
      {"threads", 1}}.dump();
  std::string out;
  EXPECT_EQ(test::run_cli("run " + plan + " --db " + db + " --models-dir " + dir.file("m"), &out),
            0)
      << out;
  const auto t = results::ResultStore::open_readonly(db).trials();
  return t.empty() ? nlohmann::json() : t[0].target.config;
}

TEST(ModelFamilyLabel, GeneratedFamiliesAreSyntheticAndTheTrainedCapableFamilyIsNot) {
  const nlohmann::json tiny = stored_target_config("tiny");
  EXPECT_EQ(tiny.value("synthetic_family", ""), "tiny") << tiny.dump();
  EXPECT_FALSE(tiny.contains("trained_family"));
  if (!std::filesystem::exists(ACCELBENCH_SOURCE_DIR "/models/capable/manifest.json"))
    GTEST_SKIP() << "models/capable is not shipped in this checkout";
  const nlohmann::json capable = stored_target_config("capable");
  EXPECT_EQ(capable.value("trained_family", ""), "capable") << capable.dump();
  EXPECT_FALSE(capable.contains("synthetic_family"));
}

}  // namespace
}  // namespace accel
