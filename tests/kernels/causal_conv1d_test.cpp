// Tests of kernels/causal_conv1d: against the double reference within its derived bound
// (tests/support/recurrent_reference.cpp), the window it carries, and its batch-invariance
// contract (bit-identical outputs and window for any split into calls and any thread count).
#include <gtest/gtest.h>

#include <cstddef>
#include <utility>
#include <vector>

#include "kernels/causal_conv1d.h"
#include "tests/support/recurrent_reference.h"
#include "tests/support/test_support.h"

namespace {

using accel::CausalConvShape;
using accel::test::random_normal;
using accel::test::within_bound;

struct ConvCase {
  int channels, d_conv;
  size_t n;
  bool bias, silu;
};

struct ConvData {
  std::vector<float> x, w, b, window;
};

ConvData make(const ConvCase& c, size_t ldx, uint64_t seed) {
  return {random_normal(c.n * ldx, seed, 1.5f),
          random_normal(size_t(c.channels) * c.d_conv, seed + 1),
          random_normal(size_t(c.channels), seed + 2),
          random_normal(size_t(c.d_conv - 1) * c.channels, seed + 3)};
}

// Runs the kernel over tokens [0, n) in calls of the given sizes (cycled), returning the dense
// outputs; `window` is advanced.
std::vector<float> run(const ConvCase& c, const ConvData& d, size_t ldx, std::vector<float>& window,
                       const std::vector<size_t>& chunks) {
  const CausalConvShape s{c.channels, c.d_conv};
  std::vector<float> out(c.n * c.channels);
  accel::test::in_calls(c.n, chunks, [&](size_t t, size_t m) {
    accel::causal_conv1d(s, d.x.data() + t * ldx, ldx, m, d.w.data(), c.bias ? d.b.data() : nullptr,
                         c.silu, window.data(), out.data() + t * c.channels, size_t(c.channels));
  });
  return out;
}

// Channel counts around the vector width (1, 7, 9, 33) and the Mamba-2 xBC width of a
// small-nemotron-h layer (1536 + 2 * 8 * 128 = 3584); d_conv 1 (no window) to 4; fewer tokens
// than the window.
TEST(CausalConv1d, MatchesReferenceWithinDerivedBound) {
  const ConvCase cases[] = {{1, 4, 9, true, true},     {7, 4, 2, false, true},
                            {9, 1, 5, true, false},    {33, 2, 17, true, true},
                            {33, 4, 40, false, false}, {3584, 4, 33, true, true}};
  for (const ConvCase& c : cases) {
    SCOPED_TRACE(::testing::Message()
                 << "channels " << c.channels << ", d_conv " << c.d_conv << ", n " << c.n
                 << ", bias " << c.bias << ", silu " << c.silu);
    const size_t ldx = size_t(c.channels) + 3;
    const ConvData d = make(c, ldx, 7 + c.channels);
    const auto want = accel::test::causal_conv1d_reference(
        {c.channels, c.d_conv}, d.x.data(), ldx, c.n, d.w.data(), c.bias ? d.b.data() : nullptr,
        c.silu, d.window.data());
    std::vector<float> window = d.window;
    const auto got = run(c, d, ldx, window, {c.n});
    EXPECT_TRUE(within_bound(got, want.out));
    // The window is a copy of inputs: exact.
    ASSERT_EQ(window.size(), want.window.size());
    for (size_t i = 0; i < window.size(); ++i) ASSERT_EQ(double(window[i]), want.window[i]) << i;
  }
}

TEST(CausalConv1d, BitIdenticalAcrossSplitsAndThreads) {
  const ConvCase c{3584, 4, 70, true, true};
  const ConvData d = make(c, size_t(c.channels), 99);
  accel::test::expect_same_bits_for_any_split(c.n, {{1}, {2}, {3}, {64, 1}, {5, 1, 1, 17}},
                                              [&](const std::vector<size_t>& chunks) {
                                                std::vector<float> w = d.window;
                                                auto out = run(c, d, size_t(c.channels), w, chunks);
                                                return std::make_pair(out, w);
                                              });
}

}  // namespace
