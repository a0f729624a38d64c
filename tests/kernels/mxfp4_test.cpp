// Tests of kernels/mxfp4.h and the GEMM's MXFP4 path: dequantization against a double-precision
// model written from the OCP MX format definition (every code at every exponent), hand-worked
// blocks, ggml's reference quantizer on hand-worked ties, the q8_0 activation quantizer on
// hand-worked blocks, and the GEMM's integer path against the f32 GEMM on the dequantized matrix
// for every code and exponent where both are exact.
#include "kernels/mxfp4.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "kernels/dtype.h"
#include "kernels/gemm.h"
#include "kernels/quant.h"
#include "tests/support/test_support.h"

namespace accel {
namespace {

// From the format definition, not from ggml's doubled table: E2M1 code = sign bit (3), exponent
// field (2 bits) and mantissa bit; exponent field 0 is subnormal (m * 0.5), else
// 2^(ee-1) * (1 + m/2). E8M0 e scales by 2^(e-127).
double e2m1(uint8_t code) {
  const int ee = (code >> 1) & 3, m = code & 1;
  const double mag = ee == 0 ? 0.5 * m : std::ldexp(1.0 + 0.5 * m, ee - 1);
  return code & 8 ? -mag : mag;
}
double mx_value(uint8_t e, uint8_t code) {
  return e2m1(code) * std::ldexp(1.0, int(e) - 127);
}

std::vector<float> dequant(const std::vector<BlockMXFP4>& b) {
  std::vector<float> y(b.size() * 32);
  dequantize_row(DType::MXFP4, b.data(), y.data(), y.size());
  return y;
}

// Every code at every exponent: ggml's float(value*2) * 2^(e-128) equals the format's value
// rounded to float (the product is exact except where it overflows to +-inf: e >= 254 with a large
// code, as the double value beyond FLT_MAX rounds to inf too). Codes 0 and 8 are +0 in ggml (its
// table holds 0 for both); the format's -0 compares equal.
TEST(Mxfp4, DequantizeEveryCodeAtEveryExponentMatchesTheFormat) {
  std::vector<BlockMXFP4> blocks(256);
  for (int e = 0; e < 256; ++e) {
    blocks[e].e = uint8_t(e);
    for (int j = 0; j < 16; ++j) blocks[e].qs[j] = uint8_t(j | (15 - j) << 4);
  }
  const std::vector<float> y = dequant(blocks);
  for (int e = 0; e < 256; ++e)
    for (int j = 0; j < 16; ++j) {
      ASSERT_EQ(y[e * 32 + j], float(mx_value(uint8_t(e), uint8_t(j)))) << e << " " << j;
      ASSERT_EQ(y[e * 32 + 16 + j], float(mx_value(uint8_t(e), uint8_t(15 - j)))) << e << " " << j;
    }
}

TEST(Mxfp4, HandWorkedBlocks) {
  BlockMXFP4 b{};
  b.e = 127;  // scale 1: the E2M1 values themselves
  for (int j = 0; j < 16; ++j) b.qs[j] = uint8_t(j | (j == 7 ? 0xF0 : 0x10));
  std::vector<float> y = dequant({b});
  const float want[16] = {0, 0.5f, 1, 1.5f, 2, 3, 4, 6, 0, -0.5f, -1, -1.5f, -2, -3, -4, -6};
  for (int j = 0; j < 16; ++j) EXPECT_EQ(y[j], want[j]) << j;
  EXPECT_EQ(y[16], 0.5f);
  EXPECT_EQ(y[16 + 7], -6.0f);
  EXPECT_FALSE(std::signbit(y[8]));  // code 8 is +0 as in ggml

  b.e = 0;  // 2^-127: code 1 is 2^-128, a float subnormal
  b.qs[0] = 0x71;
  y = dequant({b});
  EXPECT_EQ(y[0], std::ldexp(1.0f, -128));
  EXPECT_EQ(y[16], 6 * std::ldexp(1.0f, -127));
  b.e = 1;
  y = dequant({b});
  EXPECT_EQ(y[0], std::ldexp(1.0f, -127));
  b.e = 2;  // first normal scale field
  y = dequant({b});
  EXPECT_EQ(y[0], std::ldexp(1.0f, -126));
  b.e = 254;  // 2^127: 0.5 * 2^127 is finite, 6 * 2^127 overflows
  y = dequant({b});
  EXPECT_EQ(y[0], std::ldexp(1.0f, 126));
  EXPECT_EQ(y[16], std::numeric_limits<float>::infinity());
  b.e = 255;  // the E8M0 NaN code: ggml's conversion gives 2^128 / 2 = 2^127 * 1 -> same as 254+1
  y = dequant({b});
  EXPECT_EQ(y[0], std::ldexp(1.0f, 127));
  EXPECT_EQ(e8m0_to_f32_half(255), std::ldexp(1.0f, 127));
}

// ggml's quantize_row_mxfp4_ref on a hand-worked block: amax 7 -> e = floor(log2 7) - 2 + 127 =
// 127, so the grid is the E2M1 values themselves. A tie between two codes goes to the first in
// table order: 0.25 -> 0 (over 0.5), -0.25 -> 0 (over -0.5, code 9), 5 -> 4 (over 6), 2.5 -> 2,
// -1.75 -> -1.5 (code 11 over 12), 1.25 -> 1, -5 -> -4 (code 14 over 15); 7 clamps to 6.
TEST(Mxfp4, QuantizerFollowsGgmlOnHandWorkedTies) {
  float x[32] = {6, 0.25f, -0.25f, 5, 2.5f, -1.75f, 1.25f, -6, 0.1f, 3.9f, 7};
  x[16] = 5.5f;
  x[17] = -5.0f;
  BlockMXFP4 b{};
  quantize_row(DType::MXFP4, x, &b, 32);
  EXPECT_EQ(b.e, 127);
  const uint8_t lo[16] = {7, 0, 0, 6, 4, 11, 2, 15, 0, 6, 7, 0, 0, 0, 0, 0};
  const uint8_t hi[16] = {7, 14};
  for (int j = 0; j < 16; ++j) {
    EXPECT_EQ(b.qs[j] & 15, lo[j]) << j;
    EXPECT_EQ(b.qs[j] >> 4, hi[j]) << j;
  }
}

// The shared exponent: floor(log2(amax)) - 2 + 127, 0 for an all-zero block; amax beyond what
// uint8 holds (ggml: undefined) clamps to the ends.
TEST(Mxfp4, QuantizerExponent) {
  const struct {
    float amax;
    uint8_t e;
  } cases[] = {{0.f, 0},
               {1.f, 125},
               {3.99f, 126},
               {4.f, 127},
               {std::ldexp(1.f, -125), 0},
               {std::ldexp(1.f, -120), 5},
               {std::ldexp(1.f, 127), 252},
               {std::ldexp(1.f, -140), 0},
               {std::numeric_limits<float>::infinity(), 254}};
  for (const auto& c : cases) {
    float x[32] = {};
    x[5] = -c.amax;
    BlockMXFP4 b{};
    quantize_row(DType::MXFP4, x, &b, 32);
    EXPECT_EQ(b.e, c.e) << c.amax;
  }
}

// Requantizing a dequantized block gives it back whenever its largest code has magnitude 4 or 6
// (so the exponent is recovered) and it has no code 8 (-0, which comes back as code 0): every
// value is then exactly on the grid.
TEST(Mxfp4, RequantizingDequantizedBlocksIsExact) {
  uint64_t s = 1;
  auto next = [&] { return s = s * 6364136223846793005ull + 1442695040888963407ull, s >> 33; };
  std::vector<BlockMXFP4> blocks(500);
  for (BlockMXFP4& b : blocks) {
    b.e = uint8_t(3 + next() % 245);
    for (uint8_t& q : b.qs) {
      uint8_t lo = uint8_t(next() % 16), h = uint8_t(next() % 16);
      if (lo == 8) lo = 0;
      if (h == 8) h = 1;
      q = uint8_t(lo | h << 4);
    }
    b.qs[next() % 16] = uint8_t(next() % 2 ? 0x76 : 0x6F);  // magnitudes 6 / 4 present
  }
  const std::vector<float> y = dequant(blocks);
  std::vector<BlockMXFP4> back(blocks.size());
  quantize_row(DType::MXFP4, y.data(), back.data(), y.size());
  for (size_t i = 0; i < blocks.size(); ++i)
    ASSERT_EQ(std::memcmp(&blocks[i], &back[i], sizeof(BlockMXFP4)), 0) << i;
}

// The GEMM multiplies MXFP4 by q8_0 activations in integers. With integer activations and a 127
// in every 32-block, d = fp16(127 / 127) = 1 and the codes are the activations themselves, so each
// block's term is 2^(e-128) times an exact integer, and both this path and the f32 GEMM on the
// dequantized matrix (whose partial sums are multiples of 2^(e-128) below 2^(e-128+17)) are exact:
// they must agree bit for bit for every code and every exponent up to 238 (above, partial sums
// of 2^(e-128) * 2^17 overflow), with one row (decode) and forty.
TEST(Mxfp4, GemmIsExactForEveryCodeAndExponent) {
  constexpr size_t N = 239, K = 64;
  std::vector<BlockMXFP4> raw(N * K / 32);
  for (size_t n = 0; n < N; ++n)
    for (size_t kb = 0; kb < K / 32; ++kb) {
      BlockMXFP4& b = raw[n * (K / 32) + kb];
      b.e = uint8_t(n);
      for (int j = 0; j < 16; ++j)
        b.qs[j] = uint8_t(((j + n + kb) % 16) | ((15 - j + kb) % 16) << 4);
    }
  std::vector<float> w(N * K);
  dequantize_row(DType::MXFP4, raw.data(), w.data(), w.size());
  const PackedWeight pq = PackedWeight::pack(DType::MXFP4, raw.data(), N, K);
  const PackedWeight pf = PackedWeight::pack(DType::F32, w.data(), N, K);
  for (size_t M : {1, 40}) {
    std::vector<float> x(M * K);
    for (size_t i = 0; i < x.size(); ++i)
      x[i] = i % 32 == 5 ? (i % 64 < 32 ? 127.f : -127.f) : float(int(i * 37 % 255) - 127);
    std::vector<float> yq(M * N), yf(M * N);
    gemm(x.data(), M, K, pq, yq.data(), N);
    gemm(x.data(), M, K, pf, yf.data(), N);
    EXPECT_TRUE(test::bit_equal(yq, yf)) << "M=" << M;
  }
}

// ggml's x86 quantize_row_q8_0 on hand-worked blocks: amax 127 gives id = 1 and d = 1, so the
// codes are x rounded to nearest even (63.5 -> 64, 2.5 -> 2, -0.5 -> 0, 1.5 -> 2); amax 254 gives
// d = 2 and id = 0.5 (x = 3 -> 1.5 -> 2, x = 5 -> 2.5 -> 2); amax 0 gives d = 0 and zero codes;
// a NaN or infinity gives d = NaN and zero codes; amax 1e-38, where 127 / amax overflows, gives
// d = 0 (fp16(amax / 127) is 0, as in ggml) and zero codes.
TEST(Mxfp4, ActivationQuantizerMatchesGgmlOnHandWorkedBlocks) {
  std::vector<float> x(5 * 32, 0.f);
  const float a[] = {127.f, 63.5f, 2.5f, -0.5f, 1.5f, -126.6f};
  std::copy(std::begin(a), std::end(a), x.begin());
  x[32] = -254.f;
  x[33] = 3.f;
  x[34] = 5.f;
  x[96] = std::numeric_limits<float>::infinity();
  x[97] = 1.f;
  x[128] = 1e-38f;
  x[129] = -5e-39f;
  std::vector<int8_t> q(x.size());
  std::vector<float> d(5);
  std::vector<int32_t> sums(5);
  quantize_activations_q8_0(x.data(), x.size(), q.data(), d.data(), sums.data());
  const int8_t want0[] = {127, 64, 2, 0, 2, -127};
  for (int i = 0; i < 6; ++i) EXPECT_EQ(q[size_t(i)], want0[i]) << i;
  EXPECT_EQ(d[0], 1.f);
  EXPECT_EQ(sums[0], 127 + 64 + 2 + 0 + 2 - 127);
  EXPECT_EQ(q[32], -127);
  EXPECT_EQ(q[33], 2);
  EXPECT_EQ(q[34], 2);
  EXPECT_EQ(d[1], 2.f);
  EXPECT_EQ(sums[1], -127 + 2 + 2);
  EXPECT_EQ(d[2], 0.f);
  EXPECT_EQ(sums[2], 0);
  EXPECT_TRUE(std::isnan(d[3]));
  EXPECT_EQ(q[97], 0);
  EXPECT_EQ(sums[3], 0);
  EXPECT_EQ(d[4], 0.f);
  EXPECT_EQ(q[128], 0);
  EXPECT_EQ(q[129], 0);
  EXPECT_EQ(sums[4], 0);
}

}  // namespace
}  // namespace accel
