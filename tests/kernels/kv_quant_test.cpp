// Tests of the KV record formats (kernels/kv_quant.h): int4 against an independent transcription
// of methods.md §4.1's formulas (hardware fp16 rounding, bit for bit), hand-worked nibble order,
// degenerate groups, round trips, and the q8_0 record against ggml's rule. Tests only.
#include <gtest/gtest.h>

#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "kernels/kv_quant.h"
#include "kernels/quant.h"
#include "tests/support/test_support.h"

namespace {

using accel::KVQuant;

// Round to fp16 and back with the F16C instruction (round to nearest even): independent of the
// project's software converter.
float f16(float x) {
  return _cvtsh_ss(_cvtss_sh(x, _MM_FROUND_TO_NEAREST_INT));
}
uint16_t f16_bits(float x) {
  return _cvtss_sh(x, _MM_FROUND_TO_NEAREST_INT);
}

// methods.md §4.1, written out again: scale in fp16, zero = -min / scale in fp16, codes =
// round-half-even(clip(x / scale + zero, 0, 15)), byte b = q[2b] | q[2b+1] << 4. The project's
// guard for degenerate groups (a documented addition: the seed divides by zero there) is
// transcribed from kv_quant.h's contract.
struct Group {
  uint8_t codes[16];
  uint16_t scale, zero;
};
Group spec_quantize(const float* x) {
  float lo = *std::min_element(x, x + 32), hi = *std::max_element(x, x + 32);
  float s = f16((hi - lo) / 15.f);
  float z = s > 0 ? f16(-lo / s) : 0.f;
  if (!(s > 0) || std::isinf(z)) {
    s = f16(std::max(std::fabs(lo), std::fabs(hi)) / 15.f);
    z = s > 0 ? f16(-lo / s) : 0.f;
  }
  Group g{};
  g.scale = f16_bits(s);
  g.zero = f16_bits(z);
  for (int b = 0; b < 16; ++b) {
    int q[2];
    for (int e = 0; e < 2; ++e) {
      float v = s > 0 ? x[2 * b + e] / s + z : 0.f;
      v = std::min(15.f, std::max(0.f, v));
      q[e] = int(std::rint(v));
    }
    g.codes[b] = uint8_t(q[0] | q[1] << 4);
  }
  return g;
}

std::vector<std::vector<float>> special_groups() {
  std::vector<std::vector<float>> gs;
  gs.push_back(std::vector<float>(32, 0.f));     // all zero
  gs.push_back(std::vector<float>(32, 0.5f));    // constant: scale rounds to 0
  gs.push_back(std::vector<float>(32, -3.25f));  // constant, negative
  std::vector<float> g(32, 100.f);
  g[7] = 100.0001f;  // range tiny against magnitude: -min/scale overflows fp16
  gs.push_back(g);
  std::vector<float> ties(32);
  for (int i = 0; i < 32; ++i) ties[i] = float(i % 16) * 0.5f + (i == 3 ? 0.25f : 0.f);  // halves
  gs.push_back(ties);
  std::vector<float> neg(32);
  for (int i = 0; i < 32; ++i) neg[i] = -1.f - float(i) / 7.f;  // all negative
  gs.push_back(neg);
  return gs;
}

TEST(KVQuantInt4, GroupMatchesTheSpecFormulasBitForBitOnRandomAndSpecialGroups) {
  auto groups = special_groups();
  for (int t = 0; t < 2000; ++t) {
    const float sd = std::pow(10.f, float(t % 7) - 3.f);  // 1e-3 .. 1e3
    auto x = accel::test::random_normal(32, 1000 + uint64_t(t), sd);
    if (t % 5 == 0)
      for (auto& v : x) v += 3 * sd;  // groups not straddling zero
    groups.push_back(x);
  }
  for (size_t i = 0; i < groups.size(); ++i) {
    const Group want = spec_quantize(groups[i].data());
    Group got{};
    accel::int4_quantize_group(groups[i].data(), got.codes, &got.scale, &got.zero);
    ASSERT_EQ(got.scale, want.scale) << "group " << i;
    ASSERT_EQ(got.zero, want.zero) << "group " << i;
    ASSERT_EQ(0, std::memcmp(got.codes, want.codes, 16)) << "group " << i;
  }
}

TEST(KVQuantInt4, HandWorkedGroupPutsTheEvenElementInTheLowNibble) {
  // x = 0, 1, ..., 15, then 15 sixteen times: min 0, max 15, scale 1, zero 0, codes = x.
  float x[32];
  for (int i = 0; i < 32; ++i) x[i] = float(std::min(i, 15));
  Group g{};
  accel::int4_quantize_group(x, g.codes, &g.scale, &g.zero);
  EXPECT_EQ(g.scale, 0x3c00);   // fp16 1.0
  EXPECT_EQ(g.zero, 0x8000);    // -min / s = -0.0: fp16 negative zero, decodes like +0
  EXPECT_EQ(g.codes[0], 0x10);  // q0 = 0 low, q1 = 1 high
  EXPECT_EQ(g.codes[1], 0x32);
  EXPECT_EQ(g.codes[7], 0xfe);
  EXPECT_EQ(g.codes[8], 0xff);
}

TEST(KVQuantInt4, DegenerateGroupsDecodeToTheirValue) {
  for (const auto& x : special_groups()) {
    const float mn = *std::min_element(x.begin(), x.end());
    const float mx = *std::max_element(x.begin(), x.end());
    if (mn != mx) continue;
    uint8_t rec[16 + 4];
    accel::kv_quantize_head(KVQuant::Int4, x.data(), 32, rec);
    float y[32];
    accel::kv_dequantize_head(KVQuant::Int4, rec, 32, y);
    for (int i = 0; i < 32; ++i) {
      ASSERT_TRUE(std::isfinite(y[i]));
      // the value is (0 - z) * s with z = fp16(-x/s): within fp16's relative rounding of z
      EXPECT_NEAR(y[i], x[i], std::fabs(x[i]) * 1e-3) << "constant " << x[0];
    }
  }
}

TEST(KVQuantInt4, RoundTripErrorIsAtMostHalfAStepAndRequantizingIsIdempotent) {
  const int D = 128;
  for (int t = 0; t < 200; ++t) {
    auto x = accel::test::random_normal(D, 77 + uint64_t(t), 2.f);
    std::vector<uint8_t> rec(accel::kv_quant_record_bytes(KVQuant::Int4, D)), rec2(rec.size());
    ASSERT_EQ(rec.size(), size_t(D / 2 + D / 32 * 4));
    accel::kv_quantize_head(KVQuant::Int4, x.data(), D, rec.data());
    std::vector<float> y(D);
    accel::kv_dequantize_head(KVQuant::Int4, rec.data(), D, y.data());
    for (int g = 0; g < D / 32; ++g) {
      uint16_t sh;
      std::memcpy(&sh, &rec[D / 2 + 2 * g], 2);
      const float s = _cvtsh_ss(sh);
      for (int i = g * 32; i < g * 32 + 32; ++i)
        // half a step, plus the fp16 rounding of the zero point (<= s/2 * 2^-10 * 15 steps)
        ASSERT_LE(std::fabs(y[i] - x[i]), s * (0.5f + 0.01f)) << "t " << t << " i " << i;
    }
    accel::kv_quantize_head(KVQuant::Int4, y.data(), D, rec2.data());
    std::vector<float> y2(D);
    accel::kv_dequantize_head(KVQuant::Int4, rec2.data(), D, y2.data());
    for (int i = 0; i < D; ++i) ASSERT_NEAR(y2[i], y[i], 1e-6f * std::fabs(y[i]) + 1e-6f);
  }
}

TEST(KVQuantQ8_0, RecordIsGgmlBlocksAndDecodesToCodeTimesScale) {
  const int D = 64;
  auto x = accel::test::random_normal(D, 5, 1.f);
  std::vector<uint8_t> rec(accel::kv_quant_record_bytes(KVQuant::Q8_0, D));
  ASSERT_EQ(rec.size(), 2 * sizeof(accel::BlockQ8_0));
  accel::kv_quantize_head(KVQuant::Q8_0, x.data(), D, rec.data());
  std::vector<float> y(D);
  accel::kv_dequantize_head(KVQuant::Q8_0, rec.data(), D, y.data());
  for (int g = 0; g < 2; ++g) {
    float amax = 0;
    for (int i = 0; i < 32; ++i) amax = std::max(amax, std::fabs(x[g * 32 + i]));
    const float d = amax / 127.f;  // ggml quantize_row_q8_0_ref
    uint16_t dh;
    std::memcpy(&dh, &rec[g * 34], 2);
    EXPECT_EQ(dh, f16_bits(d));
    for (int i = 0; i < 32; ++i) {
      const int8_t q = int8_t(rec[g * 34 + 2 + i]);
      EXPECT_EQ(q, int8_t(std::round(x[g * 32 + i] * (1.f / d)))) << i;
      EXPECT_EQ(y[g * 32 + i], float(q) * _cvtsh_ss(dh));
    }
  }
}

}  // namespace

namespace {

// A key block holds its tokens' records bit for bit: put then get returns every record, in any
// fill order, for both formats, and a block is exactly 32 records' bytes.
TEST(KVQuantKeyBlock, PutThenGetReturnsEveryRecordBitForBit) {
  for (KVQuant f : {KVQuant::Int4, KVQuant::Q8_0})
    for (int D : {32, 64, 128, 256}) {
      const size_t rec = accel::kv_quant_record_bytes(f, D);
      ASSERT_EQ(accel::kv_quant_kblock_bytes(f, D), 32 * rec);
      std::vector<std::vector<uint8_t>> recs(32, std::vector<uint8_t>(rec));
      for (int t = 0; t < 32; ++t) {
        const auto x = accel::test::random_normal(size_t(D), 900 + uint64_t(t * D), 1.5f);
        accel::kv_quantize_head(f, x.data(), D, recs[size_t(t)].data());
      }
      std::vector<uint8_t> block(32 * rec, 0xA5);  // stale bytes must be overwritten
      for (int i = 0; i < 32; ++i) {
        const int t = (i * 7 + 3) % 32;  // a fill order that is not sequential
        accel::kblock_put(f, D, recs[size_t(t)].data(), block.data(), t);
      }
      std::vector<uint8_t> back(rec);
      for (int t = 0; t < 32; ++t) {
        accel::kblock_get(f, D, block.data(), t, back.data());
        ASSERT_EQ(back, recs[size_t(t)]) << "D " << D << " token " << t;
      }
    }
}

TEST(KVQuantKeyBlock, Int4RowHoldsOneElementOfEveryTokenLowNibblesFirst) {
  // Records built code by code: token t's element e has code (e + t) % 16.
  const int D = 32;
  std::vector<uint8_t> block(accel::kv_quant_kblock_bytes(KVQuant::Int4, D), 0);
  for (int t = 0; t < 32; ++t) {
    std::vector<uint8_t> rec(accel::kv_quant_record_bytes(KVQuant::Int4, D), 0);
    for (int e = 0; e < D; ++e) rec[size_t(e / 2)] |= uint8_t(((e + t) % 16) << (e % 2 ? 4 : 0));
    accel::kblock_put(KVQuant::Int4, D, rec.data(), block.data(), t);
  }
  for (int e = 0; e < D; ++e)
    for (int b = 0; b < 16; ++b)
      ASSERT_EQ(block[size_t(e * 16 + b)], uint8_t(((e + b) % 16) | (((e + b + 16) % 16) << 4)))
          << "row " << e << " byte " << b;
}

// An int4 value block holds its tokens' records bit for bit (put then get, any fill order), takes
// exactly 32 records' bytes, and refuses q8_0 (whose values stay records).
TEST(KVQuantValueBlock, PutThenGetReturnsEveryRecordBitForBit) {
  for (int D : {32, 64, 128, 256}) {
    const size_t rec = accel::kv_quant_record_bytes(KVQuant::Int4, D);
    ASSERT_EQ(accel::kv_quant_vhead_bytes(KVQuant::Int4, D, 33), 64 * rec);  // whole blocks
    std::vector<std::vector<uint8_t>> recs(32, std::vector<uint8_t>(rec));
    for (int t = 0; t < 32; ++t) {
      const auto x = accel::test::random_normal(size_t(D), 700 + uint64_t(t * D), 1.5f);
      accel::kv_quantize_head(KVQuant::Int4, x.data(), D, recs[size_t(t)].data());
    }
    std::vector<uint8_t> block(32 * rec, 0xA5);
    for (int i = 0; i < 32; ++i) {
      const int t = (i * 7 + 3) % 32;
      accel::vblock_put(KVQuant::Int4, D, recs[size_t(t)].data(), block.data(), t);
    }
    std::vector<uint8_t> back(rec);
    for (int t = 0; t < 32; ++t) {
      accel::vblock_get(KVQuant::Int4, D, block.data(), t, back.data());
      ASSERT_EQ(back, recs[size_t(t)]) << "D " << D << " token " << t;
    }
  }
  EXPECT_EQ(accel::kv_quant_vhead_bytes(KVQuant::Q8_0, 64, 33),
            33 * accel::kv_quant_record_bytes(KVQuant::Q8_0, 64));
  std::vector<uint8_t> r(accel::kv_quant_record_bytes(KVQuant::Q8_0, 64)), b(32 * r.size());
  EXPECT_DEATH(accel::vblock_put(KVQuant::Q8_0, 64, r.data(), b.data(), 0), "int4 layout");
}

// The layout, worked by hand: with record byte k of group g of token t set to 16 g + k (t's own
// identity in its scale), group g's quad line u holds byte k of token 4u + r at 4k + r, and the
// scales lie after the D * 16 code bytes as [group][token], the zeros after them likewise.
TEST(KVQuantValueBlock, QuadLinesInterleaveFourTokensAndParametersLieInLanesOverTokens) {
  constexpr int D = 64, kGroups = D / 32;
  const size_t rec = accel::kv_quant_record_bytes(KVQuant::Int4, D);
  std::vector<uint8_t> block(32 * rec, 0);
  for (int t = 0; t < 32; ++t) {
    std::vector<uint8_t> r(rec);
    for (int g = 0; g < kGroups; ++g) {
      for (int k = 0; k < 16; ++k) r[size_t(g * 16 + k)] = uint8_t(16 * g + k + t);
      const uint16_t sc = uint16_t(1000 + 100 * g + t), zr = uint16_t(2000 + 100 * g + t);
      std::memcpy(&r[size_t(D / 2 + 2 * g)], &sc, 2);
      std::memcpy(&r[size_t(D / 2 + 2 * (kGroups + g))], &zr, 2);
    }
    accel::vblock_put(KVQuant::Int4, D, r.data(), block.data(), t);
  }
  for (int g = 0; g < kGroups; ++g)
    for (int t = 0; t < 32; ++t) {
      for (int k = 0; k < 16; ++k)
        ASSERT_EQ(block[size_t(g * 512 + (t / 4) * 64 + 4 * k + t % 4)], uint8_t(16 * g + k + t))
            << "group " << g << " token " << t << " byte " << k;
      uint16_t sc, zr;
      std::memcpy(&sc, &block[size_t(D * 16 + (g * 32 + t) * 2)], 2);
      std::memcpy(&zr, &block[size_t(D * 16 + kGroups * 64 + (g * 32 + t) * 2)], 2);
      EXPECT_EQ(sc, 1000 + 100 * g + t);
      EXPECT_EQ(zr, 2000 + 100 * g + t);
    }
}

}  // namespace
