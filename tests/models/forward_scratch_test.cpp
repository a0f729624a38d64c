// ForwardScratch: buffers come back across calls (no allocation after the first forward), nested
// scratches never share a buffer, take_filled fills, and a take from an outer scratch while an
// inner one is open aborts.
#include "models/forward_scratch.h"

#include <gtest/gtest.h>

#include <thread>

namespace accel {
namespace {

float* take_first(size_t n) {
  ForwardScratch s;
  return s.take(n).data();
}

TEST(ForwardScratch, TheSameTakesGetTheSameBuffersOnTheNextCall) {
  float* a = take_first(1000);
  EXPECT_EQ(take_first(1000), a);
  EXPECT_EQ(take_first(10), a);  // a shorter take reuses the grown buffer
}

TEST(ForwardScratch, NestedScratchesTakeDistinctBuffers) {
  ForwardScratch outer;
  const std::span<float> x = outer.take(64);
  std::fill(x.begin(), x.end(), 1.f);
  {
    ForwardScratch inner;
    const std::span<float> y = inner.take(64);
    EXPECT_NE(y.data(), x.data());
    std::fill(y.begin(), y.end(), 2.f);
  }
  for (float v : x) ASSERT_EQ(v, 1.f);  // the inner scratch did not write the outer's buffer
  const std::span<float> z = outer.take(64);
  EXPECT_NE(z.data(), x.data());
}

TEST(ForwardScratch, TakeFilledSetsEveryElement) {
  {
    ForwardScratch s;
    const std::span<float> a = s.take(300);
    std::fill(a.begin(), a.end(), 7.f);  // stale contents for the next call
  }
  ForwardScratch s;
  const std::span<float> b = s.take_filled(300, 0.f);
  ASSERT_EQ(b.size(), 300u);
  for (float v : b) ASSERT_EQ(v, 0.f);
}

TEST(ForwardScratch, ThreadsHaveTheirOwnBuffers) {
  ForwardScratch s;
  float* mine = s.take(32).data();
  float* theirs = nullptr;
  std::thread([&] { theirs = take_first(32); }).join();
  EXPECT_NE(theirs, mine);
}

TEST(ForwardScratchDeathTest, AnOuterTakeWhileAnInnerScratchIsOpenAborts) {
  EXPECT_DEATH(
      {
        ForwardScratch outer;
        ForwardScratch inner;
        (void)inner.take(4);
        (void)outer.take(4);
      },
      "take\\(\\) at depth 1 while depth 2 is open");
}

}  // namespace
}  // namespace accel
