// Every plan shipped in plans/ parses and expands to cases (a plan that no longer parses after a
// method's or suite's parameters change is caught here, not by the researcher who runs it).
#include <gtest/gtest.h>

#include <filesystem>

#include "harness/plan.h"

namespace accel {
namespace {

TEST(ShippedPlans, EveryPlanInPlansParsesAndExpandsToCases) {
  const std::filesystem::path dir = std::filesystem::path(ACCELBENCH_SOURCE_DIR) / "plans";
  int n = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    if (e.path().extension() != ".json") continue;
    ++n;
    SCOPED_TRACE(e.path().string());
    Plan p;
    ASSERT_NO_THROW(p = load_plan(e.path().string(), "models-cache"));
    EXPECT_FALSE(expand_plan(p).empty());
  }
  EXPECT_GE(n, 10);  // the plans of the SpecPrefill, PLD, KV and suite issues
}

}  // namespace
}  // namespace accel
