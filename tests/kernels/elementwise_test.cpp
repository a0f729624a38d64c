// Tests of the row kernels in kernels/elementwise.h (rmsnorm, rope, softmax, log_sum_exp, swiglu)
// against their double references and hand-worked values. Each tolerance is derived next to its
// test from the float roundings the kernel performs (u = 2^-24, the unit roundoff). Tests only.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <vector>

#include "kernels/elementwise.h"
#include "kernels/fp16.h"
#include "tests/support/test_support.h"

namespace {

using accel::test::bit_equal;
using accel::test::near_all;
using accel::test::random_normal;

constexpr double kU = 0x1p-24;
constexpr float kInf = std::numeric_limits<float>::infinity();

std::vector<double> to_double(const std::vector<float>& x) {
  return {x.begin(), x.end()};
}

// ---- rmsnorm
// -------------------------------------------------------------------------------------

// Sum of squares in double (exact enough), then three float roundings: 1/sqrt(.) to float, x*inv,
// *weight. Relative error per element <= 3u + O(u^2); checked against 4u.
TEST(RmsNorm, MatchesReference) {
  for (size_t dim : {size_t(1), size_t(7), size_t(33), size_t(768), size_t(32768)}) {
    const size_t rows = 5, ld = dim + 3;
    std::vector<float> x = random_normal(rows * ld, 11 + dim, 3.f);
    const std::vector<float> w = random_normal(dim, 12 + dim);
    std::vector<float> out(rows * ld, 0.f);
    std::vector<double> want(rows * ld, 0.0);
    accel::rmsnorm(x.data(), rows, dim, ld, w.data(), 1e-5f, out.data(), ld);
    accel::rmsnorm_reference(x.data(), rows, dim, ld, w.data(), 1e-5f, want.data(), ld);
    EXPECT_TRUE(near_all(out, want, 0.0, 4 * kU)) << "dim " << dim;
    // In place (out aliases x) gives the same bits.
    accel::rmsnorm(x.data(), rows, dim, ld, w.data(), 1e-5f, x.data(), ld);
    for (size_t r = 0; r < rows; ++r)
      EXPECT_TRUE(
          bit_equal(std::span(x).subspan(r * ld, dim), std::span(out).subspan(r * ld, dim)));
  }
}

TEST(RmsNorm, HandWorked) {
  // x = (3, 4): mean square 12.5, rms 3.5355339; weight (1, 2); eps 0.
  const float x[2] = {3, 4}, w[2] = {1, 2};
  float out[2];
  accel::rmsnorm(x, 1, 2, 2, w, 0.f, out, 2);
  EXPECT_NEAR(out[0], 3 / std::sqrt(12.5), 4 * kU);
  EXPECT_NEAR(out[1], 2 * 4 / std::sqrt(12.5), 8 * kU);
  // eps dominates a zero row: output zeros, not NaN.
  const float z[3] = {0, 0, 0}, ones[3] = {1, 1, 1};
  float oz[3];
  accel::rmsnorm(z, 1, 3, 3, ones, 1e-6f, oz, 3);
  for (float v : oz) EXPECT_EQ(v, 0.f);
}

// ---- rope
// ----------------------------------------------------------------------------------------

// Plain RoPE (no YaRN, attention factor or frequency factors; see rope_scaling_test.cpp).
accel::RopeParams rope_params(int head_dim, int n_rot, float base, float scale,
                              accel::RopeLayout layout) {
  accel::RopeParams p;
  p.head_dim = head_dim;
  p.n_rot = n_rot;
  p.freq_base = base;
  p.freq_scale = scale;
  p.layout = layout;
  return p;
}

struct RopeCase {
  accel::RopeLayout layout;
  int head_dim, n_rot;
  float freq_scale, freq_base;
};

// cos/sin are computed in double and rounded to float (abs error <= u/2 each); each output is
// x0*c - x1*s: two products and a difference, each rounded. Per element the error is
// <= (3u)(|x0| + |x1|) + O(u^2); checked against 4u * 2 * max|x| over the row.
TEST(Rope, MatchesReferenceBothLayouts) {
  const RopeCase cases[] = {
      {accel::RopeLayout::Adjacent, 64, 64, 1.f, 10000.f},
      {accel::RopeLayout::HalfSplit, 64, 64, 1.f, 1000000.f},
      {accel::RopeLayout::Adjacent, 80, 32, 0.25f, 10000.f},  // partial rotation, linear scaling
      {accel::RopeLayout::HalfSplit, 128, 64, 0.5f, 500000.f},
      {accel::RopeLayout::HalfSplit, 8, 2, 1.f, 10000.f},
  };
  const std::vector<int32_t> pos = {0, 1, 2, 17, 1000, 4095, 8191, 16384, 32767, 32768};
  for (const RopeCase& c : cases) {
    const int n_heads = 3;
    const size_t ld = size_t(n_heads) * c.head_dim + 5, rows = pos.size();
    const std::vector<float> x0 = random_normal(rows * ld, 21 + c.head_dim, 2.f);
    std::vector<float> x = x0;
    std::vector<double> want = to_double(x0);
    const accel::RopeParams p =
        rope_params(c.head_dim, c.n_rot, c.freq_base, c.freq_scale, c.layout);
    accel::rope(x.data(), rows, ld, n_heads, pos.data(), p);
    accel::rope_reference(want.data(), rows, ld, n_heads, pos.data(), p);
    double max_x = 0;
    for (float v : x0) max_x = std::max(max_x, double(std::fabs(v)));
    SCOPED_TRACE(::testing::Message() << "head_dim " << c.head_dim << " n_rot " << c.n_rot
                                      << " layout " << int(c.layout));
    EXPECT_TRUE(near_all(x, want, 8 * kU * max_x, 0.0));
    // Dimensions past n_rot in each head, and the row padding, are untouched (bit for bit).
    for (size_t r = 0; r < rows; ++r)
      for (int h = 0; h < n_heads; ++h)
        for (int d = c.n_rot; d < c.head_dim; ++d) {
          const size_t i = r * ld + size_t(h) * c.head_dim + d;
          ASSERT_EQ(x[i], x0[i]) << "row " << r << " head " << h << " dim " << d;
        }
    // Position 0 is the identity.
    for (size_t i = 0; i < size_t(n_heads) * c.head_dim; ++i) ASSERT_EQ(x[i], x0[i]);
  }
}

TEST(Rope, HandWorked) {
  // Adjacent, head_dim 4, n_rot 4, base 10000, position 1: pair 0 at theta 1, pair 1 at
  // theta 10000^(-1/2) = 0.01. x = (1, 0, 0, 1) -> (cos 1, sin 1, -sin 0.01, cos 0.01).
  float x[4] = {1, 0, 0, 1};
  const int32_t pos[1] = {1};
  accel::RopeParams p = rope_params(4, 4, 10000.f, 1.f, accel::RopeLayout::Adjacent);
  accel::rope(x, 1, 4, 1, pos, p);
  EXPECT_NEAR(x[0], std::cos(1.0), 2 * kU);
  EXPECT_NEAR(x[1], std::sin(1.0), 2 * kU);
  EXPECT_NEAR(x[2], -std::sin(0.01), 2 * kU);
  EXPECT_NEAR(x[3], std::cos(0.01), 2 * kU);
  // HalfSplit pairs (0, 2) and (1, 3); freq_scale 0.5 at position 2 equals position 1 unscaled.
  float y[4] = {1, 0, 0, 1};
  const int32_t pos2[1] = {2};
  accel::RopeParams q = rope_params(4, 4, 10000.f, 0.5f, accel::RopeLayout::HalfSplit);
  accel::rope(y, 1, 4, 1, pos2, q);
  EXPECT_NEAR(y[0], std::cos(1.0), 2 * kU);    // x0 * cos(1) - x2 * sin(1)
  EXPECT_NEAR(y[2], std::sin(1.0), 2 * kU);    // x0 * sin(1) + x2 * cos(1)
  EXPECT_NEAR(y[1], -std::sin(0.01), 2 * kU);  // x1 * cos(.01) - x3 * sin(.01)
  EXPECT_NEAR(y[3], std::cos(0.01), 2 * kU);
}

// One head of plain RoPE (no scaling) by the operations rope_rotate.h defines: angles in double,
// cos and sin rounded to float, adjacent pairs by fused multiply-adds on a rounded product,
// half-split pairs by rounded products.
std::vector<float> rope_by_formula(std::vector<float> x, int head_dim, float base, int32_t pos,
                                   accel::RopeLayout layout) {
  const int half = head_dim / 2;
  for (int i = 0; i < half; ++i) {
    const double th = double(pos) * std::pow(double(base), -2.0 * i / head_dim);
    const float c = float(std::cos(th)), s = float(std::sin(th));
    const bool adjacent = layout == accel::RopeLayout::Adjacent;
    float& a = x[size_t(adjacent ? 2 * i : i)];
    float& b = x[size_t(adjacent ? 2 * i + 1 : i + half)];
    const float x0 = a, x1 = b;
    if (adjacent) {
      a = std::fma(x0, c, -(x1 * s));
      b = std::fma(x0, s, x1 * c);
    } else {
      const volatile float p0 = x0 * c, p1 = x1 * s, p2 = x0 * s, p3 = x1 * c;
      a = p0 - p1;
      b = p2 + p3;
    }
  }
  return x;
}

// rope's bits do not depend on where a row lies in memory. GCC 12 made versions of the plain
// adjacent-pair loop that rounded differently (rope_rotate.h), chosen at run time by whether the
// row lay within 56 bytes after rope's heap-allocated cos/sin table: fused multiply-adds in the
// wide ones, separately rounded products in the 128-bit one. So one input gave two results,
// depending on what malloc had handed out before (5 of 100 runs of the stories260K PLD sweep
// failed before 2026-11-29). Here each row lies right after two freed blocks of the size of rope's
// two tables, which glibc's allocator hands back last-freed first, so that the cos/sin table lands
// just before the row; the result must equal the formula's bits, as the same row elsewhere does.
// Against the old loop this fails at head_dim 8 (stories260K's) for every position.
TEST(Rope, SameBitsWhereverTheRowLies) {
  for (const accel::RopeLayout layout : {accel::RopeLayout::Adjacent, accel::RopeLayout::HalfSplit})
    for (const int head_dim : {4, 8, 16, 64, 128}) {
      SCOPED_TRACE(::testing::Message() << "head_dim " << head_dim << " layout " << int(layout));
      const accel::RopeParams p = rope_params(head_dim, head_dim, 10000.f, 1.f, layout);
      const std::vector<float> x0 = random_normal(size_t(head_dim), 90 + head_dim, 2.f);
      const size_t table = size_t(head_dim / 2) * sizeof(double);  // each of rope's two tables
      for (const int32_t pos : {1, 7, 100, 4095}) {
        const std::vector<float> want = rope_by_formula(x0, head_dim, 10000.f, pos, layout);
        std::vector<float> elsewhere = x0;
        accel::rope(elsewhere.data(), 1, size_t(head_dim), 1, &pos, p);
        EXPECT_TRUE(bit_equal(elsewhere, want)) << "position " << pos;
        // Blocks of both sizes already free would be handed out first: take them all, so that
        // the next three come from fresh memory, one after the other.
        std::vector<void*> taken;
        for (int i = 0; i < 64; ++i) {
          taken.push_back(std::malloc(table));
          taken.push_back(std::malloc(x0.size() * sizeof(float)));
        }
        void* first = std::malloc(table);
        void* second = std::malloc(table);
        auto* row = static_cast<float*>(std::malloc(x0.size() * sizeof(float)));
        ASSERT_TRUE(first && second && row);
        std::memcpy(row, x0.data(), x0.size() * sizeof(float));
        std::free(second);  // the cos/sin table's, just before the row
        std::free(first);   // the angle rates', taken first
        accel::rope(row, 1, size_t(head_dim), 1, &pos, p);
        const std::vector<float> placed(row, row + head_dim);
        std::free(row);
        for (void* t : taken) std::free(t);
        EXPECT_TRUE(bit_equal(placed, want)) << "position " << pos << ", row after freed blocks";
      }
    }
}

// Rotations compose: q.k after RoPE depends only on the position difference (the property the
// model relies on), here at large positions where angle errors would show.
TEST(Rope, DotProductDependsOnlyOnOffset) {
  const int D = 64;
  const std::vector<float> q0 = random_normal(D, 5), k0 = random_normal(D, 6);
  accel::RopeParams p = rope_params(D, D, 10000.f, 1.f, accel::RopeLayout::HalfSplit);
  auto dot_at = [&](int32_t pq, int32_t pk) {
    std::vector<float> q = q0, k = k0;
    accel::rope(q.data(), 1, D, 1, &pq, p);
    accel::rope(k.data(), 1, D, 1, &pk, p);
    double s = 0;
    for (int d = 0; d < D; ++d) s += double(q[d]) * k[d];
    return s;
  };
  double norm = 0;
  for (int d = 0; d < D; ++d) norm += std::fabs(double(q0[d]) * k0[d]);
  // Each rotated vector is off by <= 4u relative per element: the dot by <= 8u * sum|q k|-ish.
  EXPECT_NEAR(dot_at(10, 3), dot_at(32760, 32753), 16 * kU * norm);
}

// ---- softmax / log_sum_exp ---------------------------------------------------------------------

// x_i - m is rounded (abs u|x_i - m|, which exp turns into that relative error), expf is within
// 1 ulp, the sum is in double, and 1/sum and the final product are rounded: relative error per
// element <= u(|x_i - m| + 4). Checked with rtol u(max|x_i - m| + 4).
TEST(Softmax, MatchesReference) {
  for (size_t n : {size_t(1), size_t(2), size_t(31), size_t(1000), size_t(32000)}) {
    std::vector<float> x = random_normal(n, 40 + n, 10.f);
    std::vector<double> want(n);
    double m = -INFINITY, spread = 0;
    for (float v : x) m = std::max(m, double(v));
    double sum = 0;
    for (size_t i = 0; i < n; ++i) sum += std::exp(double(x[i]) - m);
    for (size_t i = 0; i < n; ++i) {
      want[i] = std::exp(double(x[i]) - m) / sum;
      spread = std::max(spread, m - x[i]);
    }
    accel::softmax(x.data(), n);
    EXPECT_TRUE(near_all(x, want, 0.0, kU * (spread + 4))) << "n " << n;
    double total = 0;
    for (float v : x) total += v;
    EXPECT_NEAR(total, 1.0, (n + 4) * kU) << "n " << n;
  }
}

TEST(Softmax, HandWorkedAndExtremes) {
  // (0, ln 3): 1/4 and 3/4.
  float a[2] = {0.f, float(std::log(3.0))};
  accel::softmax(a, 2);
  EXPECT_NEAR(a[0], 0.25, 4 * kU);
  EXPECT_NEAR(a[1], 0.75, 4 * kU);
  // Large values do not overflow; -inf entries get exactly 0.
  float b[4] = {1000.f, 1000.f, -kInf, 990.f};
  accel::softmax(b, 4);
  const double e = std::exp(-10.0), s = 2 + e;
  EXPECT_NEAR(b[0], 1 / s, 1e-6);
  EXPECT_NEAR(b[1], 1 / s, 1e-6);
  EXPECT_EQ(b[2], 0.f);
  EXPECT_NEAR(b[3], e / s, 1e-9);
  float c[1] = {-5.f};
  accel::softmax(c, 1);
  EXPECT_EQ(c[0], 1.f);
  accel::softmax(c, 0);  // no-op
}

// Computed in double throughout: agreement with a long double evaluation to ~1e-13 relative.
TEST(LogSumExp, MatchesReferenceAndHandWorked) {
  for (size_t n : {size_t(1), size_t(5), size_t(32000)}) {
    const std::vector<float> x = random_normal(n, 60 + n, 20.f);
    long double m = -INFINITY, s = 0;
    for (float v : x) m = std::max(m, (long double)v);
    for (float v : x) s += std::exp((long double)v - m);
    const double want = double(m + std::log(s));
    EXPECT_NEAR(accel::log_sum_exp(x.data(), n), want, 1e-13 * (std::fabs(want) + 1)) << n;
  }
  const float z[2] = {0, 0};
  EXPECT_NEAR(accel::log_sum_exp(z, 2), std::log(2.0), 1e-15);
  const float big[2] = {1000.f, 1000.f};  // exp(1000) would overflow
  EXPECT_NEAR(accel::log_sum_exp(big, 2), 1000 + std::log(2.0), 1e-12);
  const float mixed[3] = {-kInf, 0.f, -kInf};
  EXPECT_EQ(accel::log_sum_exp(mixed, 3), 0.0);
  EXPECT_EQ(accel::log_sum_exp(z, 0), -INFINITY);
  // All -inf: log(0) = -inf, not NaN (exp(-inf - -inf) would be NaN).
  const float ninf[2] = {-kInf, -kInf};
  EXPECT_EQ(accel::log_sum_exp(ninf, 2), -INFINITY);
}

// ---- swiglu
// --------------------------------------------------------------------------------------

// g / (1 + e^-g) * up, computed with e = e^-|g| (simd::exp_nonpos, within 1.5 ulp = 3u): for
// g < 0, g * e / (1 + e) * up: g * e carries 3u + 1u, 1 + e carries e's 3u damped by
// e / (1 + e) <= 1/2 plus 1u, then the divide and the multiply 1u each: <= 8.5u; g >= 0 skips the
// first product. Measured worst over 16.7M random gates: 4.3u (g < 0), 2.9u (g >= 0). The
// tolerance is the derived 9u; atol covers results that underflow (g << 0, true value ~1e-40).
// n = 1003 leaves a masked tail of 11 (AVX-512) or 3 (AVX2) elements.
TEST(SwiGlu, MatchesReferenceAndAliases) {
  const size_t n = 1003;
  std::vector<float> g = random_normal(n, 81, 6.f), up = random_normal(n, 82);
  const float special[] = {0.f, -0.f, 1.f, -1.f, 20.f, -20.f, 88.f, -88.f, 100.f, -100.f, -200.f};
  for (size_t i = 0; i < std::size(special); ++i) g[i] = special[i];
  std::vector<double> want(n);
  for (size_t i = 0; i < n; ++i) want[i] = double(g[i]) / (1 + std::exp(-double(g[i]))) * up[i];
  std::vector<float> out(n);
  accel::swiglu(g.data(), up.data(), out.data(), n);
  EXPECT_TRUE(near_all(out, want, 1e-30, 9 * kU));
  for (float v : out) ASSERT_FALSE(std::isnan(v));
  std::vector<float> g2 = g, up2 = up;
  accel::swiglu(g2.data(), up.data(), g2.data(), n);   // out aliases gate
  accel::swiglu(g.data(), up2.data(), up2.data(), n);  // out aliases up
  EXPECT_TRUE(bit_equal(g2, out));
  EXPECT_TRUE(bit_equal(up2, out));
  // Hand-worked: silu(1) * 2 = 2 / (1 + e^-1) = 1.4621171572600098.
  float a = 1.f, b = 2.f, o;
  accel::swiglu(&a, &b, &o, 1);
  EXPECT_NEAR(o, 1.4621171572600098, 4 * kU);
}

// ggml_swiglu_oai: the gate is clamped above only, the up value on both sides, and the result is
// g sigmoid(alpha g) (u + 1). Against the double formula on the clamped inputs, per element within
// (8 + |alpha g|) u relative: six float roundings and expf's < 1 ulp, plus the rounding of the
// product alpha * -g, which exp turns into a relative error of |alpha g| u.
TEST(Elementwise, SwigluOaiClampsAndMatchesTheFormula) {
  const float alpha = 1.702f, limit = 7.f;
  std::vector<float> g = accel::test::random_normal(500, 31, 6.f),
                     up = accel::test::random_normal(500, 32, 6.f);
  g[0] = 100.f;
  g[1] = -100.f;
  up[2] = 50.f;
  up[3] = -50.f;
  std::vector<double> want(g.size()), tol(g.size());
  for (size_t i = 0; i < g.size(); ++i) {
    const double gc = std::min(double(g[i]), 7.0), uc = std::clamp(double(up[i]), -7.0, 7.0);
    want[i] = gc / (1 + std::exp(-double(alpha) * gc)) * (uc + 1);
    tol[i] = (8 + std::fabs(double(alpha) * gc)) * kU * std::fabs(want[i]) + 1e-30;
  }
  std::vector<float> out(g.size());
  accel::swiglu_oai(g.data(), up.data(), out.data(), g.size(), alpha, limit);
  for (size_t i = 0; i < g.size(); ++i)
    ASSERT_LE(std::fabs(double(out[i]) - want[i]), tol[i]) << "gate " << g[i] << " up " << up[i];
  float o1, o2, o3;
  const float a = 7.f, b = 1e9f, c = 3.f, d = 7.f, e = -1e9f, f = -7.f;
  accel::swiglu_oai(&a, &c, &o1, 1, alpha, limit);  // gate at the limit
  accel::swiglu_oai(&b, &c, &o2, 1, alpha, limit);  // gate far past it: the same
  EXPECT_EQ(o1, o2);
  accel::swiglu_oai(&c, &e, &o1, 1, alpha, limit);  // up far below: as -7, so (u + 1) = -6
  accel::swiglu_oai(&c, &f, &o2, 1, alpha, limit);
  EXPECT_EQ(o1, o2);
  accel::swiglu_oai(&c, &d, &o3, 1, alpha, limit);
  EXPECT_NEAR(o3 / o1, 8.0 / -6.0, 1e-6);  // the glu factor is shared; (u + 1) = 8 vs -6
}

// ggml's GELU table (geglu_tanh): outside (-10, 10) exact cut-offs; inside, the double formula at
// the gate rounded to fp16 and the result rounded to fp16, so against the double GELU of the
// unrounded gate the error is at most |gelu'| |x| 2^-11 (gelu' <= 1.13) for the input rounding plus
// |g| 2^-11 for the output's, plus float's few ulps (2^-21 |g|, and 1e-30 for zeros). And one
// entry read from libggml-cpu 3f545bec's table, the one a plain (unfused) 1 + A h h got wrong.
TEST(Elementwise, GegluTanhIsGgmlsFp16Table) {
  auto gelu = [](double x) {
    return 0.5 * x * (1 + std::tanh(0.7978845608028654 * x * (1 + 0.044715 * x * x)));
  };
  std::vector<float> g = accel::test::random_normal(2000, 41, 4.f), up(g.size(), 1.f);
  g[0] = -10.f;
  g[1] = 10.f;
  g[2] = -12.f;
  g[3] = 11.5f;
  std::vector<float> out(g.size());
  accel::geglu_tanh(g.data(), up.data(), out.data(), g.size());
  EXPECT_EQ(out[0], 0.f);
  EXPECT_EQ(out[1], 10.f);
  EXPECT_EQ(out[2], 0.f);
  EXPECT_EQ(out[3], 11.5f);
  for (size_t i = 4; i < g.size(); ++i) {
    const double want = gelu(g[i]);
    const double tol = 1.13 * std::fabs(g[i]) * std::ldexp(1.0, -11) +
                       std::fabs(want) * (std::ldexp(1.0, -11) + std::ldexp(1.0, -21)) + 1e-30;
    ASSERT_LE(std::fabs(out[i] - want), tol) << "gate " << g[i];
  }
  const float x = -0x1.ffcp+0f, two = 2.f;
  float o;
  accel::geglu_tanh(&x, &two, &o, 1);
  EXPECT_EQ(o, 2 * -0x1.74cp-5f);
}

// geglu_tanh reads a precomputed table: for every fp16 value inside (-10, 10), and for random
// floats between them, the output is bit for bit the entry computed directly.
TEST(Elementwise, GegluTanhTableEqualsTheDirectEntryForEveryHalf) {
  std::vector<float> xs;
  for (uint32_t h = 0; h < 65536; ++h) {
    const float x = accel::fp16_to_f32(uint16_t(h));
    if (std::isfinite(x) && x > -10.f && x < 10.f) xs.push_back(x);
  }
  const std::vector<float> r = accel::test::random_normal(10000, 43, 3.f);
  xs.insert(xs.end(), r.begin(), r.end());
  std::vector<float> ones(xs.size(), 1.f), out(xs.size());
  accel::geglu_tanh(xs.data(), ones.data(), out.data(), xs.size());
  for (size_t i = 0; i < xs.size(); ++i) {
    const float want = xs[i] <= -10.f  ? 0.f
                       : xs[i] >= 10.f ? xs[i]
                                       : accel::gelu_tanh_table_entry(xs[i]);
    ASSERT_EQ(std::memcmp(&out[i], &want, 4), 0) << "gate " << xs[i];
  }
}

}  // namespace
