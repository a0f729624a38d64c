// Tests of kernels/gated_norm (the output norms of Mamba-2 and Gated DeltaNet layers) against the
// double reference within the relative bounds derived in tests/support/recurrent_reference.cpp,
// with strided rows, in place, and a pin that the two gate orders differ.
#include <gtest/gtest.h>

#include <vector>

#include "kernels/gated_norm.h"
#include "tests/support/recurrent_reference.h"
#include "tests/support/test_support.h"

namespace {

using accel::test::random_normal;
using accel::test::within_bound;

// Dense copies of strided rows.
std::vector<float> dense(const std::vector<float>& x, size_t rows, size_t width, size_t ld) {
  std::vector<float> d(rows * width);
  for (size_t r = 0; r < rows; ++r)
    for (size_t i = 0; i < width; ++i) d[r * width + i] = x[r * ld + i];
  return d;
}

TEST(GatedNorm, Mamba2GroupsMatchReference) {
  struct Case {
    int dim, groups;
  };
  for (const Case c : {Case{1, 1}, Case{12, 3}, Case{35, 5}, Case{1536, 8}}) {
    SCOPED_TRACE(::testing::Message() << "dim " << c.dim << ", groups " << c.groups);
    const size_t rows = 6, ld = size_t(c.dim) + 5;
    const auto y = random_normal(rows * ld, 1, 2.f), z = random_normal(rows * ld, 2, 3.f);
    const auto w = random_normal(size_t(c.dim), 3);
    std::vector<float> out(rows * ld);
    accel::gated_rmsnorm_mamba2(y.data(), ld, z.data(), ld, rows, c.dim, c.groups, w.data(), 1e-5f,
                                out.data(), ld);
    const auto want = accel::test::gated_rmsnorm_reference(
        true, dense(y, rows, c.dim, ld).data(), dense(z, rows, c.dim, ld).data(), rows, c.dim,
        c.dim / c.groups, w.data(), 1e-5f);
    EXPECT_TRUE(within_bound(dense(out, rows, c.dim, ld), want));
    std::vector<float> inplace = y;  // out aliasing y
    accel::gated_rmsnorm_mamba2(inplace.data(), ld, z.data(), ld, rows, c.dim, c.groups, w.data(),
                                1e-5f, inplace.data(), ld);
    EXPECT_TRUE(
        accel::test::bit_equal(dense(inplace, rows, c.dim, ld), dense(out, rows, c.dim, ld)));
  }
}

TEST(GatedNorm, DeltaNetHeadsMatchReference) {
  struct Case {
    int heads, head_dim;
  };
  for (const Case c : {Case{1, 1}, Case{3, 7}, Case{12, 128}}) {
    SCOPED_TRACE(::testing::Message() << "heads " << c.heads << ", head_dim " << c.head_dim);
    const size_t rows = 5, width = size_t(c.heads) * c.head_dim, ld = width + 2;
    const auto o = random_normal(rows * ld, 4, 0.5f), z = random_normal(rows * ld, 5, 3.f);
    const auto w = random_normal(size_t(c.head_dim), 6);
    std::vector<float> out(rows * ld);
    accel::gated_rmsnorm_delta(o.data(), ld, z.data(), ld, rows, c.heads, c.head_dim, w.data(),
                               1e-6f, out.data(), ld);
    const auto want = accel::test::gated_rmsnorm_reference(false, dense(o, rows, width, ld).data(),
                                                           dense(z, rows, width, ld).data(), rows,
                                                           int(width), c.head_dim, w.data(), 1e-6f);
    EXPECT_TRUE(within_bound(dense(out, rows, width, ld), want));
  }
}

// norm(y silu(z)) and norm(y) silu(z) differ unless silu(z) is constant within a group.
TEST(GatedNorm, GateOrdersDiffer) {
  const auto y = random_normal(16, 7), z = random_normal(16, 8);
  const std::vector<float> w(16, 1.f);
  std::vector<float> a(16), b(16);
  accel::gated_rmsnorm_mamba2(y.data(), 16, z.data(), 16, 1, 16, 1, w.data(), 1e-6f, a.data(), 16);
  accel::gated_rmsnorm_delta(y.data(), 16, z.data(), 16, 1, 1, 16, w.data(), 1e-6f, b.data(), 16);
  EXPECT_FALSE(accel::test::bit_equal(a, b));
}

}  // namespace
