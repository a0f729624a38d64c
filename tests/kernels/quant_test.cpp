// Tests of kernels/quant.h and fp16.h: exhaustive fp16 round trip, hand-worked f32->fp16/bf16
// rounding cases, and q8_0/q4_0 quantize->dequantize error bounds and hand-worked blocks that pin
// ggml's reference algorithms (round-half-away for q8_0, the signed max and clamp for q4_0).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "kernels/fp16.h"
#include "kernels/quant.h"
#include "tests/support/test_support.h"

namespace accel {
namespace {

uint32_t bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
bool half_is_nan(uint16_t h) {
  return (h & 0x7c00) == 0x7c00 && (h & 0x3ff) != 0;
}

// All 65536 halves through dequantize_row(F16) then quantize_row(F16): every non-NaN comes back
// bit for bit (the f32 image is exact); NaNs stay NaN (sign kept).
TEST(Fp16, ExhaustiveRoundTrip) {
  std::vector<uint16_t> h(65536), back(65536);
  for (size_t i = 0; i < h.size(); ++i) h[i] = uint16_t(i);
  std::vector<float> f(h.size());
  dequantize_row(DType::F16, h.data(), f.data(), h.size());
  quantize_row(DType::F16, f.data(), back.data(), h.size());
  for (size_t i = 0; i < h.size(); ++i) {
    ASSERT_EQ(bits(f[i]), bits(fp16_to_f32(h[i]))) << std::hex << i;
    if (half_is_nan(h[i])) {
      ASSERT_TRUE(std::isnan(f[i])) << std::hex << i;
      ASSERT_TRUE(half_is_nan(back[i])) << std::hex << i;
      ASSERT_EQ(back[i] & 0x8000, h[i] & 0x8000) << std::hex << i;
    } else {
      ASSERT_EQ(back[i], h[i]) << std::hex << i;
    }
  }
}

TEST(Fp16, RoundingHandCases) {
  const float two_m24 = std::ldexp(1.f, -24);  // smallest subnormal half
  struct C {
    float f;
    uint16_t h;
  } cases[] = {
      {1.f, 0x3c00},
      {-2.f, 0xc000},
      {std::ldexp(1.f, -11) + 1.f, 0x3c00},      // halfway 1 .. 1+2^-10: tie to even (down)
      {3 * std::ldexp(1.f, -11) + 1.f, 0x3c02},  // halfway 1+2^-10 .. 1+2^-9: tie to even (up)
      {std::nextafter(1.f + std::ldexp(1.f, -11), 2.f), 0x3c01},  // just above the tie
      {65504.f, 0x7bff},                                          // largest half
      {65519.f, 0x7bff},                                          // below the overflow tie
      {65520.f, 0x7c00},                                          // tie to even -> inf
      {1e10f, 0x7c00},
      {-1e10f, 0xfc00},
      {std::numeric_limits<float>::infinity(), 0x7c00},
      {std::ldexp(1.f, -14), 0x0400},  // smallest normal
      {two_m24, 0x0001},
      {1023 * two_m24, 0x03ff},   // largest subnormal
      {two_m24 / 2, 0x0000},      // tie between 0 and 2^-24: even (0)
      {1.5f * two_m24, 0x0002},   // tie between 1 and 2 ulps: even (2)
      {0.75f * two_m24, 0x0001},  // above the tie
      {2.5f * two_m24, 0x0002},   // tie: even (2)
      {-0.f, 0x8000},
      {1e-30f, 0x0000},
  };
  for (const C& c : cases) EXPECT_EQ(f32_to_fp16(c.f), c.h) << c.f;
  EXPECT_TRUE(half_is_nan(f32_to_fp16(std::numeric_limits<float>::quiet_NaN())));
}

TEST(Bf16, HandCasesAndExhaustiveRoundTrip) {
  EXPECT_EQ(f32_to_bf16(1.f), 0x3f80);
  EXPECT_EQ(f32_to_bf16(1.f + std::ldexp(1.f, -8)), 0x3f80);      // tie to even (down)
  EXPECT_EQ(f32_to_bf16(1.f + 3 * std::ldexp(1.f, -8)), 0x3f82);  // tie to even (up)
  EXPECT_EQ(f32_to_bf16(std::nextafter(1.f + std::ldexp(1.f, -8), 2.f)), 0x3f81);
  EXPECT_EQ(f32_to_bf16(-2.f), 0xc000);
  EXPECT_EQ(f32_to_bf16(std::numeric_limits<float>::max()), 0x7f80);  // rounds up to inf
  EXPECT_EQ(f32_to_bf16(std::numeric_limits<float>::infinity()), 0x7f80);
  EXPECT_EQ(f32_to_bf16(std::numeric_limits<float>::denorm_min()), 0x0000);
  const uint16_t qnan = f32_to_bf16(std::numeric_limits<float>::quiet_NaN());
  EXPECT_TRUE(std::isnan(bf16_to_f32(qnan)));
  // A signalling NaN whose payload sits only in the low 16 bits must not become infinity.
  float snan;
  const uint32_t sbits = 0x7f800001u;
  std::memcpy(&snan, &sbits, 4);
  EXPECT_TRUE(std::isnan(bf16_to_f32(f32_to_bf16(snan))));
  for (uint32_t i = 0; i < 65536; ++i) {
    const uint16_t b = uint16_t(i);
    const float f = bf16_to_f32(b);
    ASSERT_EQ(bits(f), uint32_t(b) << 16);
    if (std::isnan(f)) {
      ASSERT_TRUE(std::isnan(bf16_to_f32(f32_to_bf16(f))));
    } else {
      ASSERT_EQ(f32_to_bf16(f), b) << std::hex << i;
    }
  }
}

// q8_0 error: x ≈ q·d with q = round(x/d) (|err| <= d/2), then d is stored as fp16 (relative
// error <= 2^-11) and |q| <= 127, so |x - q·d_h| <= d/2 + 127·d·2^-11 (+ float slack).
TEST(Q8_0, ErrorBound) {
  const size_t n = 32 * 64;
  const std::vector<float> x = test::random_normal(n, 3, 2.f);
  std::vector<BlockQ8_0> q(n / 32);
  std::vector<float> y(n);
  quantize_row(DType::Q8_0, x.data(), q.data(), n);
  dequantize_row(DType::Q8_0, q.data(), y.data(), n);
  for (size_t b = 0; b < n / 32; ++b) {
    float amax = 0;
    for (int i = 0; i < 32; ++i) amax = std::max(amax, std::fabs(x[b * 32 + i]));
    const double d = amax / 127.0;
    const double bound = d * (0.5 + 127 * std::ldexp(1.0, -11) + 1e-5);
    for (int i = 0; i < 32; ++i)
      ASSERT_LE(std::fabs(double(y[b * 32 + i]) - x[b * 32 + i]), bound) << b << " " << i;
  }
}

TEST(Q8_0, HandWorkedBlocks) {
  // All zeros: d = 0, every code 0, dequantizes to zeros.
  float zeros[32] = {};
  BlockQ8_0 z;
  quantize_row(DType::Q8_0, zeros, &z, 32);
  EXPECT_EQ(z.d, 0);
  for (int i = 0; i < 32; ++i) EXPECT_EQ(z.qs[i], 0);
  // amax 127 -> d = 1 exactly, so codes are round-half-away-from-zero of the inputs.
  float x[32] = {};
  x[0] = -127.f;
  x[1] = 0.5f;    // -> 1
  x[2] = -0.5f;   // -> -1
  x[3] = 2.5f;    // -> 3 (away from zero, not to even)
  x[4] = 2.49f;   // -> 2
  x[5] = 126.6f;  // -> 127
  BlockQ8_0 b;
  quantize_row(DType::Q8_0, x, &b, 32);
  EXPECT_EQ(b.d, 0x3c00);  // fp16(1.0)
  const int8_t want[6] = {-127, 1, -1, 3, 2, 127};
  for (int i = 0; i < 6; ++i) EXPECT_EQ(b.qs[i], want[i]) << i;
  float y[32];
  dequantize_row(DType::Q8_0, &b, y, 32);
  for (int i = 0; i < 6; ++i) EXPECT_EQ(y[i], float(want[i]));
}

// q4_0 error: d = max/-8 (signed), q = min(15, floor(x/d + 8.5)) so q - 8 is x/d rounded (half
// up) except that x/d in [7.5, 8] clamps to 7: |err| <= |d| (and <= |d|/2 elsewhere), plus the
// fp16 rounding of d times |q - 8| <= 8: 8·|d|·2^-11.
TEST(Q4_0, ErrorBound) {
  const size_t n = 32 * 64;
  const std::vector<float> x = test::random_normal(n, 4, 3.f);
  std::vector<BlockQ4_0> q(n / 32);
  std::vector<float> y(n);
  quantize_row(DType::Q4_0, x.data(), q.data(), n);
  dequantize_row(DType::Q4_0, q.data(), y.data(), n);
  for (size_t b = 0; b < n / 32; ++b) {
    float amax = 0;
    for (int i = 0; i < 32; ++i) amax = std::max(amax, std::fabs(x[b * 32 + i]));
    const double d = amax / 8.0;
    for (int i = 0; i < 32; ++i) {
      const double err = std::fabs(double(y[b * 32 + i]) - x[b * 32 + i]);
      ASSERT_LE(err, d * (1 + 8 * std::ldexp(1.0, -11) + 1e-5)) << b << " " << i;
    }
  }
}

// q5_0 error: as q4_0 with 16 steps: d = max/-16, code = min(31, floor(x/d + 16.5)), so |err| <=
// |d| (the clamp at x/d in [15.5, 16]) and <= |d|/2 elsewhere, plus the fp16 rounding of d times
// |code - 16| <= 16: 16·|d|·2^-11.
TEST(Q5_0, ErrorBound) {
  const size_t n = 32 * 64;
  const std::vector<float> x = test::random_normal(n, 5, 3.f);
  std::vector<BlockQ5_0> q(n / 32);
  std::vector<float> y(n);
  quantize_row(DType::Q5_0, x.data(), q.data(), n);
  dequantize_row(DType::Q5_0, q.data(), y.data(), n);
  for (size_t b = 0; b < n / 32; ++b) {
    float amax = 0;
    for (int i = 0; i < 32; ++i) amax = std::max(amax, std::fabs(x[b * 32 + i]));
    const double d = amax / 16.0;
    for (int i = 0; i < 32; ++i) {
      const double err = std::fabs(double(y[b * 32 + i]) - x[b * 32 + i]);
      ASSERT_LE(err, d * (1 + 16 * std::ldexp(1.0, -11) + 1e-5)) << b << " " << i;
    }
  }
}

// The layout worked by hand (ggml's block_q5_0: low nibbles of elements j and j + 16 in qs[j],
// their fifth bits at qh bits j and j + 16), and its q8_0 repack holding the same values.
TEST(Q5_0, HandWorkedBlockAndItsQ8_0Repack) {
  float x[32] = {};
  x[0] = -16.f;  // max magnitude, negative: d = -16 / -16 = 1; code 0 -> -16
  x[1] = 15.f;   // code 31 -> 15 (fifth bit set)
  x[2] = 0.5f;   // 17.0 -> code 17 -> 1 (half rounds up; fifth bit set)
  x[16] = -1.f;  // code 15 -> -1 (high nibble of qs[0], fifth bit clear)
  x[17] = 3.f;   // code 19 -> 3 (fifth bit 16 + 1 = bit 17 set)
  BlockQ5_0 b;
  quantize_row(DType::Q5_0, x, &b, 32);
  EXPECT_EQ(b.d, 0x3c00);
  EXPECT_EQ(b.qs[0], 0x0 | 15 << 4);
  EXPECT_EQ(b.qs[1], 15 | 3 << 4);  // element 17's code 19 = 16 + 3
  EXPECT_EQ(b.qs[2], 1 | 0 << 4);   // element 18 is 0: code 16, nibble 0
  uint32_t qh;
  std::memcpy(&qh, b.qh, 4);
  EXPECT_EQ(qh & 0x7u, 0x6u);          // elements 1 and 2 have their fifth bit, 0 not
  EXPECT_EQ((qh >> 16) & 0x7u, 0x6u);  // 17 and 18 (a zero: code 16) have it, 16 not
  const BlockQ8_0 q = q5_0_as_q8_0(b);
  EXPECT_EQ(q.d, b.d);
  const int8_t want[5][2] = {{0, -16}, {1, 15}, {2, 1}, {16, -1}, {17, 3}};
  for (const auto& w : want) EXPECT_EQ(q.qs[w[0]], w[1]) << int(w[0]);
  float y[32], z[32];
  dequantize_row(DType::Q5_0, &b, y, 32);
  dequantize_row(DType::Q8_0, &q, z, 32);
  for (int i = 0; i < 32; ++i) EXPECT_EQ(y[i], z[i]) << i;
  EXPECT_EQ(y[17], 3.f);
}

TEST(Q4_0, HandWorkedBlocks) {
  float zeros[32] = {};
  BlockQ4_0 z;
  quantize_row(DType::Q4_0, zeros, &z, 32);
  EXPECT_EQ(z.d, 0x8000);  // d = 0 / -8 = -0.0, as in ggml's reference
  for (int i = 0; i < 16; ++i) EXPECT_EQ(z.qs[i], 0x88);  // code 8 = value 0 in both nibbles

  // Max magnitude is negative (-8): d = -8 / -8 = 1, codes = floor(x + 8.5) clamped to 15.
  float x[32] = {};
  x[0] = -8.f;    // code 0  -> -8
  x[1] = 7.f;     // code 15 -> 7
  x[2] = -7.5f;   // 1.0 -> code 1 -> -7
  x[3] = 0.5f;    // 9.0 -> code 9 -> 1 (half rounds up)
  x[16] = 3.f;    // high nibble of byte 0: code 11 -> 3
  x[17] = -0.4f;  // 8.1 -> code 8 -> 0
  BlockQ4_0 b;
  quantize_row(DType::Q4_0, x, &b, 32);
  EXPECT_EQ(b.d, 0x3c00);
  EXPECT_EQ(b.qs[0], 0x0 | 11 << 4);
  EXPECT_EQ(b.qs[1], 15 | 8 << 4);
  EXPECT_EQ(b.qs[2], 1 | 8 << 4);
  EXPECT_EQ(b.qs[3], 9 | 8 << 4);
  float y[32];
  dequantize_row(DType::Q4_0, &b, y, 32);
  EXPECT_EQ(y[0], -8.f);
  EXPECT_EQ(y[1], 7.f);
  EXPECT_EQ(y[2], -7.f);
  EXPECT_EQ(y[3], 1.f);
  EXPECT_EQ(y[16], 3.f);
  EXPECT_EQ(y[17], 0.f);

  // Max magnitude positive (8): d = -1, so -8 maps to code 16, clamped to 15 -> -7.
  float p[32] = {};
  p[0] = 8.f;
  p[1] = -8.f;
  BlockQ4_0 c;
  quantize_row(DType::Q4_0, p, &c, 32);
  EXPECT_EQ(c.d, 0xbc00);  // fp16(-1.0)
  dequantize_row(DType::Q4_0, &c, y, 32);
  EXPECT_EQ(y[0], 8.f);
  EXPECT_EQ(y[1], -7.f);
}

}  // namespace
}  // namespace accel
