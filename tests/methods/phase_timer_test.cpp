// PhaseTimer::untimed: work run through it is left out of the open phase and of elapsed().
#include "methods/phase_timer.h"

#include <gtest/gtest.h>

#include <thread>

namespace accel {
namespace {

// A 300 ms sleep inside untimed(): the phase and the total stay well under it. The bound is the
// sleep itself, so only a stall of 300 ms outside the sleep (between two statements) could fail
// it, and then the timer would be measuring that stall correctly.
TEST(PhaseTimer, UntimedWorkIsExcludedFromPhaseAndElapsed) {
  PhaseTimer t;
  bool ran = false;
  t.untimed([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    ran = true;
  });
  t.lap("after");
  EXPECT_TRUE(ran);
  ASSERT_EQ(t.phases().size(), 1u);
  EXPECT_LT(t.phases()[0].second, 0.3);
  EXPECT_LT(t.elapsed(), 0.3);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_GE(t.elapsed(), 0.02) << "time outside untimed() still counts";
}

}  // namespace
}  // namespace accel
