// Tests of the k-quant formats (kernels/kquant.h) and their GEMM path: dequantization equals a
// plain reimplementation of ggml's reference formulas (written here over raw byte offsets, not the
// structs) bit for bit on random blocks and edge cases; the GEMM's integer-dot path equals an
// independent scalar model bit for bit; the activation quantizer on hand-worked blocks; quantizer
// error bounds and hand-checked corner cases.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kernels/dtype.h"
#include "kernels/fp16.h"
#include "kernels/gemm.h"
#include "kernels/kquant.h"
#include "kernels/quant.h"
#include "tests/support/kquant_dot_reference.h"
#include "tests/support/test_support.h"

namespace accel {
namespace {

constexpr DType kKTypes[] = {DType::Q4_K, DType::Q5_K, DType::Q6_K};

uint16_t half_at(const uint8_t* p) {
  return uint16_t(p[0] | (p[1] << 8));  // GGUF is little-endian
}

using test::ggml_scale_min;

// The reference formulas of ggml-quants.c (dequantize_row_q{4,5,6}_K), one element at a time:
//   q4_K  y[64j + l]      = (d*sc_{2j})   * (qs[32j + l] & 15) - dmin*m_{2j}
//         y[64j + 32 + l] = (d*sc_{2j+1}) * (qs[32j + l] >> 4) - dmin*m_{2j+1}
//   q5_K  as q4_K with + 16 when bit 2j (resp. 2j+1) of qh[l] is set
//   q6_K  y[128h + 32t + l] = (d*sc[8h + 2t + l/16]) * (q - 32), q = 4 low bits from
//         ql[64h + l + 32(t&1)] (low nibble for t < 2, high for t >= 2) | bits 2t..2t+1 of
//         qh[32h + l] << 4
// Block byte offsets: q4_K d 0, dmin 2, scales 4, qs 16; q5_K as q4_K but qh 16, qs 48;
// q6_K ql 0, qh 128, scales 192, d 208.
float ref_element(DType t, const uint8_t* b, int e) {
  if (t == DType::Q6_K) {
    const float d = fp16_to_f32(half_at(b + 208));
    const int h = e / 128, t4 = (e % 128) / 32, l = e % 32;
    const uint8_t ql = b[64 * h + l + 32 * (t4 & 1)];
    const int lo = t4 < 2 ? (ql & 0xF) : (ql >> 4);
    const int hi = (b[128 + 32 * h + l] >> (2 * t4)) & 3;
    const int sc = int8_t(b[192 + 8 * h + 2 * t4 + l / 16]);
    return d * float(sc) * float((lo | (hi << 4)) - 32);
  }
  const float d = fp16_to_f32(half_at(b)), dmin = fp16_to_f32(half_at(b + 2));
  const int s = e / 32, l = e % 32;
  int sc, m;
  ggml_scale_min(s, b + 4, sc, m);
  const uint8_t* qs = b + (t == DType::Q5_K ? 48 : 16);
  int q = s % 2 == 0 ? (qs[32 * (s / 2) + l] & 0xF) : (qs[32 * (s / 2) + l] >> 4);
  if (t == DType::Q5_K && (b[16 + l] >> s) & 1) q += 16;
  const float d1 = d * float(sc), m1 = dmin * float(m);
  return d1 * float(q) - m1;
}

std::vector<float> ref_dequant(DType t, const std::vector<uint8_t>& raw) {
  const size_t bb = dtype_block_bytes(t);
  std::vector<float> y(raw.size() / bb * 256);
  for (size_t i = 0; i < raw.size() / bb; ++i)
    for (int e = 0; e < 256; ++e) y[i * 256 + e] = ref_element(t, raw.data() + i * bb, e);
  return y;
}

void set_half(uint8_t* p, uint16_t h) {
  p[0] = uint8_t(h & 0xFF);
  p[1] = uint8_t(h >> 8);
}

// Offsets of the fp16 fields of a block.
std::vector<size_t> half_fields(DType t) {
  return t == DType::Q6_K ? std::vector<size_t>{208} : std::vector<size_t>{0, 2};
}

// n_blocks random blocks: uniformly random bytes, with the fp16 fields drawn from finite halves of
// every exponent (subnormals, 65504, negative values), so the codes and scales cover every bit.
std::vector<uint8_t> random_blocks(DType t, size_t n_blocks, uint64_t seed) {
  std::mt19937_64 rng(seed);
  const size_t bb = dtype_block_bytes(t);
  std::vector<uint8_t> raw(n_blocks * bb);
  for (auto& x : raw) x = uint8_t(rng());
  for (size_t i = 0; i < n_blocks; ++i)
    for (size_t off : half_fields(t)) {
      uint16_t h;
      do h = uint16_t(rng());
      while ((h & 0x7C00) == 0x7C00);  // inf/NaN: not finite, excluded
      set_half(raw.data() + i * bb + off, h);
    }
  return raw;
}

// Edge blocks: all zero; every byte 0xFF with the largest finite d/dmin (65504: max 6-bit scale
// and min, max code, q6_K scale -1); the smallest subnormal d; and max-magnitude int8 scales.
std::vector<uint8_t> edge_blocks(DType t) {
  const size_t bb = dtype_block_bytes(t);
  std::vector<uint8_t> raw(5 * bb, 0);
  std::memset(raw.data() + bb, 0xFF, bb);
  for (size_t off : half_fields(t)) set_half(raw.data() + bb + off, 0x7BFF);  // 65504
  std::memset(raw.data() + 2 * bb, 0xA5, bb);
  for (size_t off : half_fields(t)) set_half(raw.data() + 2 * bb + off, 0x0001);  // 2^-24
  std::memset(raw.data() + 3 * bb, 0x3F, bb);  // 6-bit fields at max, q6_K scales +63
  for (size_t off : half_fields(t)) set_half(raw.data() + 3 * bb + off, 0xFBFF);  // -65504
  uint8_t* b = raw.data() + 4 * bb;
  std::memset(b, 0x80, bb);  // q6_K scales -128 (most negative int8), q4/5_K high bits
  for (size_t off : half_fields(t)) set_half(b + off, 0x3C00);  // 1.0
  return raw;
}

::testing::AssertionResult same_bits(const std::vector<float>& got,
                                     const std::vector<float>& want) {
  for (size_t i = 0; i < want.size(); ++i) {
    uint32_t a, b;
    std::memcpy(&a, &got[i], 4);
    std::memcpy(&b, &want[i], 4);
    if (a != b)
      return ::testing::AssertionFailure()
             << "element " << i << " (block " << i / 256 << ", index " << i % 256 << "): got "
             << got[i] << ", reference " << want[i];
  }
  return ::testing::AssertionSuccess();
}

class KQuant : public ::testing::TestWithParam<DType> {};

TEST_P(KQuant, DequantizeRowMatchesReferenceFormulasBitForBit) {
  const DType t = GetParam();
  for (const auto& raw : {random_blocks(t, 64, 1), edge_blocks(t)}) {
    std::vector<float> y(raw.size() / dtype_block_bytes(t) * 256);
    dequantize_row(t, raw.data(), y.data(), y.size());
    EXPECT_TRUE(same_bits(y, ref_dequant(t, raw)));
  }
}

// The GEMM's k-quant path (integer dot products on q8_K activations) against the independent
// scalar model of tests/support/kquant_dot_reference.h, bit for bit, on random and edge blocks
// (edges in rows 0..4: zero, all-ones bytes at d = +-65504, subnormal d, int8 scale -128): M = 1,
// 3 and 5 rows (tiles of 1 to 4 rows), 37 rows (several tiles, threads), with a bias; N = 70
// spans two AVX-512 panels with padding; K = 512 is two super-blocks. NaN (inf - inf at the
// extreme scales) only needs to stay NaN.
TEST_P(KQuant, GemmEqualsTheIntegerDotModelBitForBit) {
  const DType t = GetParam();
  const size_t K = 512, N = 70, bb = dtype_block_bytes(t);
  std::vector<uint8_t> raw = random_blocks(t, N * K / 256, 2);
  const std::vector<uint8_t> edges = edge_blocks(t);
  std::copy(edges.begin(), edges.end(), raw.begin());
  const PackedWeight pw = PackedWeight::pack(t, raw.data(), N, K);
  const std::vector<float> bias = test::random_normal(N, 4);
  for (size_t M : {size_t(1), size_t(3), size_t(5), size_t(37)}) {
    std::vector<float> x = test::random_normal(M * K, 3 + M);
    for (size_t k = 0; k < 256; ++k) x[k] = 0;  // a zero block: d = 0, zero codes
    std::vector<float> y(M * N);
    gemm(x.data(), M, K, pw, y.data(), N, bias.data());
    for (size_t m = 0; m < M; ++m)
      for (size_t n = 0; n < N; ++n) {
        const float want = test::kquant_dot_reference(t, raw.data() + n * (K / 256) * bb,
                                                      x.data() + m * K, K, &bias[n])
                               .model;
        const float got = y[m * N + n];
        if (std::isnan(want)) {
          ASSERT_TRUE(std::isnan(got))
              << dtype_name(t) << " M=" << M << " (" << m << ", " << n << ")";
          continue;
        }
        uint32_t a, b;
        std::memcpy(&a, &got, 4);
        std::memcpy(&b, &want, 4);
        ASSERT_EQ(a, b) << dtype_name(t) << " M=" << M << " (" << m << ", " << n << "): got " << got
                        << ", model " << want;
      }
  }
}

// The activation quantizer on hand-worked blocks: amax 127/64 -> iscale exactly 64, so every
// product below is exact: codes round(x * 64) to nearest even (0.5 -> 32; 1/128 -> 0.5 -> 0;
// 3/128 -> 1.5 -> 2; -1 -> -64), d = 1 / 64; a zero block (d = 0); a block holding a NaN (d = NaN,
// zero codes); sums per 16.
TEST(KQuantActivations, HandWorkedCodesScalesAndSums) {
  std::vector<float> x(3 * 256, 0.f);
  x[0] = 127.f / 64;
  x[1] = -127.f / 64;
  x[2] = 0.5f;
  x[3] = 1.f / 128;
  x[4] = 3.f / 128;
  x[17] = -1.f;
  x[2 * 256 + 5] = NAN;
  std::vector<int8_t> q(x.size());
  std::vector<float> d(3);
  std::vector<int32_t> s(3 * 16);
  quantize_activations_q8_K(x.data(), x.size(), q.data(), d.data(), s.data());
  EXPECT_EQ(q[0], 127);
  EXPECT_EQ(q[1], -127);
  EXPECT_EQ(q[2], 32);
  EXPECT_EQ(q[3], 0);
  EXPECT_EQ(q[4], 2);
  EXPECT_EQ(q[17], -64);
  EXPECT_EQ(d[0], 1.f / 64);
  EXPECT_EQ(s[0], 127 - 127 + 32 + 0 + 2);
  EXPECT_EQ(s[1], -64);
  EXPECT_EQ(d[1], 0.f);
  EXPECT_TRUE(std::isnan(d[2]));
  for (size_t i = 256; i < x.size(); ++i) ASSERT_EQ(q[i], 0) << i;
}

// The dispatched activation quantizer (AVX-512 where built) against the scalar reference, bit for
// bit: codes, scales and sums over random blocks at scales from 1e-30 to 1e30, blocks of exact
// ties (x * iscale = k + 0.5 with iscale = 64), a zero block, blocks holding NaN, +Inf or -Inf,
// and a denormal-only block (iscale overflows: the reference's own path).
TEST(KQuantActivations, DispatchedEqualsTheReferenceBitForBit) {
  const size_t blocks = 40;
  std::vector<float> x = test::random_normal(blocks * 256, 77);
  for (size_t b = 0; b < 20; ++b)
    for (size_t i = 0; i < 256; ++i) x[b * 256 + i] *= std::pow(10.f, float(int(b) - 10) * 3.f);
  for (size_t i = 0; i < 256; ++i)  // block 20: ties; amax 127/64 so iscale is exactly 64
    x[20 * 256 + i] = i == 0 ? 127.f / 64 : (float(int(i % 61) - 30) + 0.5f) / 64;
  std::fill_n(x.begin() + 21 * 256, 256, 0.f);
  x[22 * 256 + 7] = NAN;
  x[23 * 256 + 100] = INFINITY;
  x[24 * 256 + 255] = -INFINITY;
  for (size_t i = 0; i < 256; ++i) x[25 * 256 + i] = float(i % 5) * 1e-42f;  // denormals
  std::vector<int8_t> q(x.size()), qr(x.size());
  std::vector<float> d(blocks), dr(blocks);
  std::vector<int32_t> s(blocks * 16), sr(blocks * 16);
  quantize_activations_q8_K(x.data(), x.size(), q.data(), d.data(), s.data());
  quantize_activations_q8_K_reference(x.data(), x.size(), qr.data(), dr.data(), sr.data());
  EXPECT_EQ(q, qr);
  EXPECT_EQ(s, sr);
  for (size_t b = 0; b < blocks; ++b)
    EXPECT_TRUE(std::memcmp(&d[b], &dr[b], sizeof(float)) == 0) << "block " << b;
  // Ties round to even: -28.5 -> -28 and -27.5 -> -28.
  EXPECT_EQ(q[20 * 256 + 1], -28);
  EXPECT_EQ(q[20 * 256 + 2], -28);
}

// Quantizer accuracy on N(0, 1) data, RMS error relative to the data's RMS. Estimates: q4_K
// codes step ~ range/15 over 32 samples (range ~4.1 sigma) -> uniform rounding error
// step/sqrt(12) ~ 0.079, plus the min rounded to a 6-bit grid of dmin (<= dmin/2 ~ 0.02); q5_K the
// same with 31 steps ~ 0.038 + 0.02; q6_K absmax/31 over 16 samples (absmax ~2 sigma) ~ 0.019.
// Bounds are those estimates with ~30% margin; measured 0.079, 0.038, 0.019.
TEST_P(KQuant, QuantizerRmsErrorBound) {
  const DType t = GetParam();
  const double bound = t == DType::Q4_K ? 0.11 : t == DType::Q5_K ? 0.065 : 0.026;
  const size_t n = 256 * 256;
  const std::vector<float> x = test::random_normal(n, 3);
  std::vector<uint8_t> q(dtype_row_bytes(t, n));
  quantize_row(t, x.data(), q.data(), n);
  std::vector<float> y(n);
  dequantize_row(t, q.data(), y.data(), n);
  double e2 = 0, x2 = 0;
  for (size_t i = 0; i < n; ++i) {
    e2 += (double(x[i]) - y[i]) * (double(x[i]) - y[i]);
    x2 += double(x[i]) * x[i];
  }
  const double rel = std::sqrt(e2 / x2);
  RecordProperty("relative_rms_error", std::to_string(rel));
  EXPECT_LT(rel, bound) << dtype_name(t);
  EXPECT_TRUE(same_bits(y, ref_dequant(t, q)));  // our own output is a valid ggml block
}

// Zeros quantize to all-zero blocks that decode to +0 exactly; a constant block (all one value)
// decodes to a value within one step, and a block spanning the largest fp16-representable scale
// stays finite.
TEST_P(KQuant, QuantizerCornerCases) {
  const DType t = GetParam();
  const size_t bb = dtype_block_bytes(t);
  std::vector<uint8_t> q(bb);
  std::vector<float> y(256);
  const std::vector<float> zeros(256, 0.f);
  quantize_row(t, zeros.data(), q.data(), 256);
  if (t != DType::Q6_K) {  // q6_K: see ZeroBlockCodesAreTheMidpoint
    EXPECT_EQ(q, std::vector<uint8_t>(bb, 0));
  }
  dequantize_row(t, q.data(), y.data(), 256);
  for (float v : y) ASSERT_EQ(v, 0.f);

  std::vector<float> big(256);
  for (int i = 0; i < 256; ++i) big[i] = (i % 2 ? 1 : -1) * 60000.f * float(i + 1) / 256.f;
  quantize_row(t, big.data(), q.data(), 256);
  dequantize_row(t, q.data(), y.data(), 256);
  for (int i = 0; i < 256; ++i) {
    ASSERT_TRUE(std::isfinite(y[i])) << i;
    ASSERT_NEAR(y[i], big[i], 0.1 * 60000.f) << dtype_name(t) << " element " << i;
  }
}

// q6_K's zero block: every code must be 32 (the value 0), not 0 (the value -32 * d * sc = 0 only
// because d = 0). Pins the "+ 32" offset of our quantizer.
TEST(KQuantQ6, ZeroBlockCodesAreTheMidpoint) {
  std::vector<float> zeros(256, 0.f);
  BlockQ6_K b;
  quantize_row(DType::Q6_K, zeros.data(), &b, 256);
  for (int l = 0; l < 128; ++l) ASSERT_EQ(b.ql[l], 0);    // low nibble of 32 is 0
  for (int l = 0; l < 64; ++l) ASSERT_EQ(b.qh[l], 0xAA);  // high bits 10 in every pair
}

// The 6-bit scale packing round-trips for every (scale, min) value in every sub-block slot.
TEST(KQuantScales, PackedSixBitScalesRoundTrip) {
  std::vector<float> x(256);
  for (int s = 0; s < 8; ++s)  // sub-block s: values in [-s, 4 s + 1]: distinct scales and mins
    for (int i = 0; i < 32; ++i) x[32 * s + i] = -float(s) + float(5 * s + 1) * float(i) / 31.f;
  BlockQ4_K b;
  quantize_row(DType::Q4_K, x.data(), &b, 256);
  for (int s = 0; s < 8; ++s) {
    uint8_t sc, m;
    int rsc, rm;
    kquant_scale_min(s, b.scales, sc, m);
    ggml_scale_min(s, b.scales, rsc, rm);
    EXPECT_EQ(sc, rsc);
    EXPECT_EQ(m, rm);
  }
  uint8_t sc, m;
  kquant_scale_min(7, b.scales, sc, m);
  EXPECT_EQ(sc, 63);  // the largest sub-block range maps to the top 6-bit code
  kquant_scale_min(7, b.scales, sc, m);
  EXPECT_EQ(m, 63);
  kquant_scale_min(0, b.scales, sc, m);
  EXPECT_EQ(m, 0);  // sub-block 0 has min 0
}

INSTANTIATE_TEST_SUITE_P(KTypes, KQuant, ::testing::ValuesIn(kKTypes),
                         [](const auto& info) { return std::string(dtype_name(info.param)); });

}  // namespace
}  // namespace accel
