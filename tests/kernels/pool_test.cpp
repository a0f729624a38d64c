// Tests of accel::avg_pool1d: hand-worked arrays for both edge modes, kernels wider than the row,
// argument checks, and agreement with the double reference over a table of sizes with a derived
// per-element error bound. Tests only.
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>
#include <stdexcept>
#include <vector>

#include "kernels/pool.h"
#include "tests/support/test_support.h"

namespace {

using accel::avg_pool1d;
using accel::avg_pool1d_reference;
using accel::PoolEdge;

std::vector<float> pool(const std::vector<float>& x, int k, PoolEdge e) {
  std::vector<float> out(x.size(), -1.f);
  avg_pool1d(x.data(), x.size(), k, e, out.data());
  return out;
}

TEST(Pool, HandWorkedK3) {
  const std::vector<float> x = {1, 2, 3, 4, 5};
  // Zero padding, /3: (0+1+2)/3, 6/3, 9/3, 12/3, (4+5+0)/3.
  EXPECT_EQ(pool(x, 3, PoolEdge::ZeroPad), (std::vector<float>{1, 2, 3, 4, 3}));
  // Renormalised: 3/2 at the left edge, 9/2 at the right.
  EXPECT_EQ(pool(x, 3, PoolEdge::Renormalize), (std::vector<float>{1.5f, 2, 3, 4, 4.5f}));
}

TEST(Pool, KernelWiderThanRow) {
  // k = 13 over 5 elements: every window covers the whole row.
  const std::vector<float> x = {1, 2, 3, 4, 5};
  for (float v : pool(x, 13, PoolEdge::ZeroPad)) EXPECT_EQ(v, 15.f / 13.f);
  for (float v : pool(x, 13, PoolEdge::Renormalize)) EXPECT_EQ(v, 3.f);
  // n = 1: ZeroPad attenuates a lone value by k, Renormalize returns it.
  EXPECT_EQ(pool({7}, 13, PoolEdge::ZeroPad), (std::vector<float>{7.f / 13.f}));
  EXPECT_EQ(pool({7}, 13, PoolEdge::Renormalize), (std::vector<float>{7.f}));
  // n = 12 < 13 with k = 13: window of i covers [max(0,i-6), min(11,i+6)].
  std::vector<float> ones(12, 1.f);
  const auto z = pool(ones, 13, PoolEdge::ZeroPad);
  EXPECT_EQ(z[0], 7.f / 13.f);
  EXPECT_EQ(z[5], 12.f / 13.f);
  EXPECT_EQ(z[11], 7.f / 13.f);
  for (float v : pool(ones, 13, PoolEdge::Renormalize)) EXPECT_EQ(v, 1.f);
}

TEST(Pool, KernelOneCopiesAndEmptyIsNoop) {
  const std::vector<float> x = {1.5f, -2.f, 3.25f};
  EXPECT_EQ(pool(x, 1, PoolEdge::ZeroPad), x);
  EXPECT_EQ(pool(x, 1, PoolEdge::Renormalize), x);
  avg_pool1d(nullptr, 0, 13, PoolEdge::ZeroPad, nullptr);
}

TEST(Pool, RejectsEvenOrNonPositiveKernel) {
  float x[4] = {}, y[4];
  for (int k : {0, -1, 2, 12}) {
    EXPECT_THROW(avg_pool1d(x, 4, k, PoolEdge::ZeroPad, y), std::invalid_argument) << "k=" << k;
    double xd[4] = {}, yd[4];
    EXPECT_THROW(avg_pool1d_reference(xd, 4, k, PoolEdge::ZeroPad, yd), std::invalid_argument);
  }
}

// An interior output is one fixed sequence of adds whatever its index, so SIMD lanes and the
// scalar tail agree bit for bit: pooling a row shifted by s gives identical interior values.
TEST(Pool, InteriorIndependentOfAlignment) {
  const std::vector<float> x = accel::test::random_normal(203, 77);
  for (int k : {3, 13}) {
    const int r = k / 2;
    const std::vector<float> full = pool(x, k, PoolEdge::ZeroPad);
    for (size_t s : {1, 3, 7, 16, 17}) {
      const std::vector<float> sub(x.begin() + long(s), x.end());
      const std::vector<float> shifted = pool(sub, k, PoolEdge::ZeroPad);
      for (size_t i = s + size_t(r); i + size_t(r) < x.size(); ++i)
        ASSERT_EQ(full[i], shifted[i - s]) << "k=" << k << " shift=" << s << " i=" << i;
    }
  }
}

// Float vs double reference. Each output is a float sum of at most k terms then one division:
// |err| <= (k-1) u sum|x_window| / div + u |out| (u = 2^-24); we allow twice that.
TEST(Pool, MatchesReference) {
  constexpr double u = 0x1p-24;
  uint64_t seed = 1;
  for (size_t n : {1, 2, 3, 4, 12, 13, 14, 15, 31, 33, 100, 1000}) {
    for (int k : {1, 3, 5, 13, 31}) {
      for (PoolEdge e : {PoolEdge::ZeroPad, PoolEdge::Renormalize}) {
        const std::vector<float> x = accel::test::random_normal(n, seed++);
        std::vector<double> xd(x.begin(), x.end()), want(n);
        avg_pool1d_reference(xd.data(), n, k, e, want.data());
        const std::vector<float> got = pool(x, k, e);
        int bad = 0;
        for (size_t i = 0; i < n; ++i) {
          double abs_sum = 0, count = 0;
          for (long t = long(i) - k / 2; t <= long(i) + k / 2; ++t)
            if (t >= 0 && t < long(n)) abs_sum += std::fabs(xd[size_t(t)]), ++count;
          const double div = e == PoolEdge::ZeroPad ? k : count;
          const double bound = 2 * ((k - 1) * u * abs_sum / div + u * std::fabs(want[i]));
          if (std::fabs(got[i] - want[i]) > bound) {
            if (bad++ == 0)
              ADD_FAILURE() << "n=" << n << " k=" << k << " edge=" << int(e) << " i=" << i
                            << " got " << got[i] << " want " << want[i] << " bound " << bound;
          }
        }
        EXPECT_EQ(bad, 0) << "n=" << n << " k=" << k << " edge=" << int(e);
      }
    }
  }
}

}  // namespace
