// Tests of kernels/simd.h, the one SIMD layer, at whatever width this build compiled (16 lanes with
// AVX-512, 8 in the portable AVX2 build; CI runs both): exp and exp2 against libm with measured
// error bounds, the vector exp against the scalar one bit for bit, exact transposes, masked loads
// and stores that touch only their lanes, exact conversions and the 16-lane double sums. Tests
// only.
#include "kernels/simd.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <vector>

#include "kernels/fp16.h"
#include "tests/support/test_support.h"

namespace {

namespace simd = accel::simd;
constexpr int W = simd::W;
constexpr double kU = 0x1p-24;  // unit roundoff of float

std::vector<float> lanes(simd::vf v) {
  std::vector<float> out(W);
  simd::store(out.data(), v);
  return out;
}

// |got - want| in units of the float ulp at want (want > 0 and normal).
double ulp_error(float got, double want) {
  int e = 0;
  std::frexp(want, &e);
  return std::fabs(double(got) - want) / std::ldexp(1.0, e - 24);
}

// A grid over [lo, 0] with step (lo / n), plus the values where behaviour changes.
std::vector<float> nonpositive_grid(float lo, int n) {
  std::vector<float> x;
  for (int i = 0; i <= n; ++i) x.push_back(lo * float(i) / float(n));
  for (float v : {-0.f, -1e-45f, -1e-38f, -1e-7f, -0.5f, -0.34657359f, -86.999f, -87.f, lo})
    x.push_back(v);
  return x;
}

TEST(SimdExp, VectorMatchesScalarBitForBit) {
  // Every lane must give the scalar's bits so that vector loops may finish with scalar tails.
  std::vector<float> x = nonpositive_grid(-100.f, 200000);
  for (float v : {-std::numeric_limits<float>::infinity(), -87.0001f, -1e30f}) x.push_back(v);
  while (x.size() % W) x.push_back(0.f);
  int mismatches = 0;
  for (size_t i = 0; i < x.size(); i += W) {
    const std::vector<float> got = lanes(simd::exp_nonpos(simd::load(x.data() + i)));
    for (int l = 0; l < W; ++l) {
      const float want = simd::exp_nonpos(x[i + l]);
      if (std::bit_cast<uint32_t>(got[l]) != std::bit_cast<uint32_t>(want) && mismatches++ < 5)
        ADD_FAILURE() << "x=" << x[i + l] << " vector " << got[l] << " scalar " << want;
    }
  }
  EXPECT_EQ(mismatches, 0);
}

TEST(SimdExp, WithinOneAndAHalfUlpOfLibm) {
  // Measured worst case on a 1e-6 grid over [-87, 0]: 1.016 ulp (at x = -59.92); the header
  // promises ~1-2 ulp. 1.5 ulp catches a wrong coefficient or reduction step.
  double worst = 0, at = 0;
  for (float x : nonpositive_grid(-87.f, 400000)) {
    const double e = ulp_error(simd::exp_nonpos(x), std::exp(double(x)));
    if (e > worst) worst = e, at = x;
  }
  EXPECT_LE(worst, 1.5) << "worst at x = " << at;
}

TEST(SimdExp, FlushesBelowMinus87AndIsOneAtZero) {
  for (float x : {-87.0001f, -88.f, -1000.f, -std::numeric_limits<float>::infinity()})
    EXPECT_EQ(simd::exp_nonpos(x), 0.f) << x;
  EXPECT_GT(simd::exp_nonpos(-87.f), 0.f);
  EXPECT_EQ(simd::exp_nonpos(0.f), 1.f);
  EXPECT_EQ(simd::exp_nonpos(-0.f), 1.f);
  EXPECT_EQ(lanes(simd::exp_nonpos(simd::set1(-90.f)))[W - 1], 0.f);
}

TEST(SimdExp2, WithinTwoUnitRoundoffsOfLibm) {
  // Measured worst relative error on a 1e-6 grid over [-126, 0]: 1.34 u (at x = -2.4998); the
  // header promises ~2e-7 = 3.4 u. 2 u catches a wrong coefficient.
  double worst = 0, at = 0;
  const std::vector<float> x = nonpositive_grid(-126.f, 400000);
  for (float v : x) {
    const double want = std::exp2(double(v));
    const double e = std::fabs(double(lanes(simd::exp2(simd::set1(v)))[0]) - want) / want / kU;
    if (e > worst) worst = e, at = v;
  }
  EXPECT_LE(worst, 2.0) << "worst at x = " << at;
  // Below 2^-126.5 the result is exactly 0; positive arguments clamp to 2^0.
  EXPECT_EQ(lanes(simd::exp2(simd::set1(-127.f)))[0], 0.f);
  EXPECT_EQ(lanes(simd::exp2(simd::set1(-500.f)))[0], 0.f);
  EXPECT_EQ(lanes(simd::exp2(simd::set1(3.f)))[0], 1.f);
}

TEST(SimdTranspose, RowsAndStridedTileAreExact) {
  // Source rows of W floats with a row stride that is not a multiple of W (5 floats of padding);
  // destination stride 2W + 3, as the key-tile users have wider destinations than W.
  const size_t lds = W + 5, ldd = 2 * W + 3;
  const std::vector<float> src = accel::test::random_normal(W * lds, 7);
  std::vector<float> a(W * ldd, -1.f), b(W * ldd, -1.f);
  simd::transpose_tile(src.data(), lds, a.data(), ldd);
  const float* rows[W];
  for (int r = 0; r < W; ++r) rows[r] = src.data() + r * lds;
  simd::transpose_rows(rows, b.data(), ldd);
  for (int r = 0; r < W; ++r)
    for (int c = 0; c < W; ++c) {
      ASSERT_EQ(a[c * ldd + r], src[r * lds + c]) << "tile r=" << r << " c=" << c;
      ASSERT_EQ(b[c * ldd + r], src[r * lds + c]) << "rows r=" << r << " c=" << c;
    }
  for (size_t i = 0; i < a.size(); ++i)
    if (i % ldd >= size_t(W)) {
      ASSERT_EQ(a[i], -1.f) << "wrote outside the tile at " << i;
    }
}

TEST(SimdMask, MaskedLoadAndStoreTouchOnlyTheFirstNLanes) {
  for (int n = 0; n <= W; ++n) {
    std::vector<float> src(W), dst(W, -7.f);
    std::iota(src.begin(), src.end(), 1.f);
    const std::vector<float> got = lanes(simd::load_n(src.data(), simd::first(n)));
    simd::store_n(dst.data(), simd::set1(9.f), simd::first(n));
    for (int l = 0; l < W; ++l) {
      EXPECT_EQ(got[l], l < n ? src[l] : 0.f) << "n=" << n << " lane " << l;
      EXPECT_EQ(dst[l], l < n ? 9.f : -7.f) << "n=" << n << " lane " << l;
    }
  }
}

TEST(SimdReduce, HmaxIsTheExactMaximumInEveryLane) {
  for (int where = 0; where < W; ++where) {
    std::vector<float> x = accel::test::random_normal(W, 30 + where);
    for (float& v : x) v = -std::fabs(v);
    x[where] = 3.5f;
    EXPECT_EQ(simd::hmax(simd::load(x.data())), 3.5f) << "max in lane " << where;
  }
}

TEST(SimdConvert, HalfBf16Int8AndNibblesWidenExactly) {
  std::vector<uint16_t> h(W), b(W);
  std::vector<int8_t> i8(W);
  std::vector<uint8_t> u4(W);
  for (int l = 0; l < W; ++l) {
    h[l] = uint16_t(0x3c00 + 977 * l);  // spread over exponents and signs
    b[l] = uint16_t(0xbf80 - 613 * l);
    i8[l] = int8_t(-128 + 17 * l);
    u4[l] = uint8_t(37 * l + 5);
  }
  const std::vector<float> fh = lanes(simd::from_f16(h.data()));
  const std::vector<float> fb = lanes(simd::from_bf16(b.data()));
  const std::vector<float> fi = lanes(simd::from_i8(i8.data()));
  simd::vf lo, hi;
  simd::from_u4(u4.data(), lo, hi);
  const std::vector<float> flo = lanes(lo), fhi = lanes(hi);
  for (int l = 0; l < W; ++l) {
    EXPECT_EQ(std::bit_cast<uint32_t>(fh[l]), std::bit_cast<uint32_t>(accel::fp16_to_f32(h[l])));
    EXPECT_EQ(std::bit_cast<uint32_t>(fb[l]), std::bit_cast<uint32_t>(accel::bf16_to_f32(b[l])));
    EXPECT_EQ(fi[l], float(i8[l]));
    EXPECT_EQ(flo[l], float((u4[l] & 15) - 8));
    EXPECT_EQ(fhi[l], float((u4[l] >> 4) - 8));
  }
}

TEST(SimdLanes16d, SumsEachPositionModSixteenInOrder) {
  // 5 blocks of 16 values whose double sums are exact and distinct per lane.
  std::vector<float> x(80);
  for (size_t i = 0; i < x.size(); ++i) x[i] = float(i % 16) * 0.25f + float(i / 16);
  simd::Lanes16d acc = simd::lanes16d_zero();
  for (size_t j = 0; j < x.size(); j += 16) simd::lanes16d_add(acc, x.data() + j);
  double got[16];
  simd::lanes16d_store(got, acc);
  for (int l = 0; l < 16; ++l) {
    double want = 0;
    for (size_t j = size_t(l); j < x.size(); j += 16) want += double(x[j]);
    EXPECT_EQ(got[l], want) << "lane " << l;
  }
}

}  // namespace
