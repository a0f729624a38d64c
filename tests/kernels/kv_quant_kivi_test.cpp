// KIVI's formats (kernels/kv_quant_kivi.h) against a plain transcription of methods.md §4.4's
// formulas written here, bit for bit (codes, fp16 scale and min); the pack order worked by hand;
// the round-trip error bound; per-channel keys and per-token values.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "kernels/fp16.h"
#include "kernels/kv_quant_kivi.h"

namespace accel {
namespace {

struct Group {
  std::vector<int> q;
  uint16_t scale, mn;
};

// §4.4: scale = (max - min) / (2^b - 1), x' = clamp((x - min) / scale, 0, 2^b - 1).round(), with
// scale and min stored as fp16 (min clamped into fp16's range, scale saturated) and used at their
// stored values; a zero scale gives code 0; NaN values are left out of min/max and get code 0; a
// group whose values are all the same infinity has scale 0 (its range inf - inf is not a number).
Group transcribe(const std::vector<float>& x, int bits) {
  float lo = INFINITY, hi = -INFINITY;
  for (float v : x)
    if (!std::isnan(v)) lo = std::min(lo, v), hi = std::max(hi, v);
  if (lo > hi) lo = hi = 0;
  const float qmax = float((1 << bits) - 1);
  Group g;
  g.mn = f32_to_fp16(std::max(-65504.f, std::min(65504.f, lo)));
  const float range = hi - lo;  // NaN for a group of one infinity: scale 0
  g.scale = std::isnan(range) ? f32_to_fp16(0.f) : f32_to_fp16(std::min(65504.f, range / qmax));
  const float s = fp16_to_f32(g.scale), m = fp16_to_f32(g.mn);
  for (float v : x) {
    float t = s > 0 && !std::isnan(v) ? (v - m) / s : 0.f;
    t = std::max(0.f, std::min(qmax, t));
    g.q.push_back(int(std::nearbyint(t)));
  }
  return g;
}

Group run(const std::vector<float>& x, int bits) {
  std::vector<uint8_t> codes(kivi_codes_bytes(bits));
  Group g;
  kivi_quantize_group(x.data(), 1, bits, codes.data(), &g.scale, &g.mn);
  for (int i = 0; i < kKiviGroup; ++i) g.q.push_back(kivi_code(codes.data(), bits, i));
  return g;
}

std::vector<std::vector<float>> special_groups() {
  std::vector<std::vector<float>> out;
  out.push_back(std::vector<float>(32, 0.f));
  out.push_back(std::vector<float>(32, 3.25f));  // constant: scale 0
  std::vector<float> ramp(32);
  for (int i = 0; i < 32; ++i) ramp[size_t(i)] = float(i) * 0.5f - 3.f;
  out.push_back(ramp);
  std::vector<float> outlier(32, 0.01f);
  outlier[7] = 40.f;
  out.push_back(outlier);
  std::vector<float> huge(32, 1.f);
  huge[3] = -7e4f;  // below fp16's range: min clamps to -65504
  huge[9] = 9e4f;
  out.push_back(huge);
  std::vector<float> with_nan(32, 2.f);
  with_nan[5] = NAN;
  with_nan[6] = -1.f;
  out.push_back(with_nan);
  std::vector<float> tiny(32, 1000.f);
  tiny[0] = 1000.001f;  // range below fp16's resolution at this magnitude
  out.push_back(tiny);
  out.push_back(std::vector<float>(32, INFINITY));
  out.push_back(std::vector<float>(32, -INFINITY));
  std::vector<float> both(32, INFINITY);
  both[4] = -INFINITY;  // range inf: scale saturates to 65504
  out.push_back(both);
  return out;
}

TEST(KiviQuant, GroupEqualsAPlainTranscriptionOfKivisFormulasBitForBit) {
  std::mt19937 rng(17);
  std::normal_distribution<float> nd(0.f, 1.f);
  std::uniform_real_distribution<float> mag(-6.f, 3.f), off(-4.f, 4.f);
  auto groups = special_groups();
  for (int n = 0; n < 2000; ++n) {
    const float scale = std::pow(10.f, mag(rng)), shift = off(rng) * scale;
    std::vector<float> x(32);
    for (float& v : x) v = nd(rng) * scale + shift;
    groups.push_back(x);
  }
  for (int bits : {2, 4})
    for (size_t i = 0; i < groups.size(); ++i) {
      const Group want = transcribe(groups[i], bits), got = run(groups[i], bits);
      ASSERT_EQ(got.scale, want.scale) << "group " << i << " bits " << bits;
      ASSERT_EQ(got.mn, want.mn) << "group " << i << " bits " << bits;
      ASSERT_EQ(got.q, want.q) << "group " << i << " bits " << bits;
    }
}

// Codes 0,1,2,3,3,2,1,0 (min 0, max 3: scale 1) packed 2 bits each, low bits first:
// byte 0 = 3<<6 | 2<<4 | 1<<2 | 0 = 0xE4, byte 1 = 0<<6 | 1<<4 | 2<<2 | 3 = 0x1B.
TEST(KiviQuant, PackOrderIsLowBitsFirstHandWorked) {
  std::vector<float> x(32, 0.f);
  const float pattern[8] = {0, 1, 2, 3, 3, 2, 1, 0};
  for (int i = 0; i < 32; ++i) x[size_t(i)] = pattern[i % 8];
  std::vector<uint8_t> codes(kivi_codes_bytes(2));
  uint16_t s, m;
  kivi_quantize_group(x.data(), 1, 2, codes.data(), &s, &m);
  EXPECT_EQ(fp16_to_f32(s), 1.f);
  EXPECT_EQ(fp16_to_f32(m), 0.f);
  EXPECT_EQ(codes[0], 0xE4);
  EXPECT_EQ(codes[1], 0x1B);
  // 4 bits: element 2b in the low nibble of byte b.
  for (int i = 0; i < 32; ++i) x[size_t(i)] = float(i % 16);
  std::vector<uint8_t> c4(kivi_codes_bytes(4));
  kivi_quantize_group(x.data(), 1, 4, c4.data(), &s, &m);
  EXPECT_EQ(c4[0], 0x10);
  EXPECT_EQ(c4[1], 0x32);
  EXPECT_EQ(c4[7], 0xFE);
}

// A group of +inf (an overflowed activation) stores scale 0 and min 65504, so it decodes to
// fp16's largest finite value instead of NaN (inf - inf would have made the scale NaN).
TEST(KiviQuant, GroupOfInfinitiesDecodesToTheLargestFiniteHalfNotNaN) {
  for (int bits : {2, 4}) {
    const std::vector<float> x(32, INFINITY);
    std::vector<uint8_t> codes(kivi_codes_bytes(bits));
    uint16_t sh, mh;
    kivi_quantize_group(x.data(), 1, bits, codes.data(), &sh, &mh);
    EXPECT_EQ(fp16_to_f32(sh), 0.f);
    for (int i = 0; i < 32; ++i)
      EXPECT_EQ(kivi_dequant(kivi_code(codes.data(), bits, i), fp16_to_f32(sh), fp16_to_f32(mh)),
                65504.f)
          << "bits " << bits << " element " << i;
  }
}

// |x - x̂| <= scale / 2 from rounding, plus what the fp16 rounding of min and scale moves the end
// points (|min - mn| at the bottom, qmax * |scale - range / qmax| at the top), plus f32 rounding
// of the quantize/dequantize arithmetic (a few ulps of the largest magnitude: 1e-6 relative).
TEST(KiviQuant, RoundTripErrorIsWithinHalfAStepPlusTheFp16Rounding) {
  std::mt19937 rng(5);
  std::normal_distribution<float> nd(0.f, 1.f);
  for (int bits : {2, 4}) {
    const float qmax = float((1 << bits) - 1);
    for (int n = 0; n < 500; ++n) {
      std::vector<float> x(32);
      for (float& v : x) v = nd(rng) * 2.f + 0.5f;
      std::vector<uint8_t> codes(kivi_codes_bytes(bits));
      uint16_t sh, mh;
      kivi_quantize_group(x.data(), 1, bits, codes.data(), &sh, &mh);
      const float lo = *std::min_element(x.begin(), x.end());
      const float hi = *std::max_element(x.begin(), x.end());
      const float s = fp16_to_f32(sh), m = fp16_to_f32(mh);
      float amax = 0;
      for (float v : x) amax = std::max(amax, std::fabs(v));
      const double bound =
          s / 2 + std::fabs(m - lo) + qmax * std::fabs(s - (hi - lo) / qmax) + 1e-6 * (amax + 1);
      for (int i = 0; i < 32; ++i)
        ASSERT_LE(std::fabs(x[size_t(i)] - kivi_dequant(kivi_code(codes.data(), bits, i), s, m)),
                  bound)
            << "bits " << bits << " group " << n << " element " << i;
    }
  }
}

// Keys: channel e of a block is one group over the 32 tokens; values: channels [32g, 32g + 32)
// of one token are one group. Checked against kivi_quantize_group on the gathered groups.
TEST(KiviQuant, KeyBlocksGroupChannelsOverTokensAndValueRecordsGroupChannels) {
  const int D = 64;
  const size_t ld = 100;  // rows wider than one head: the block reads head columns only
  std::mt19937 rng(3);
  std::normal_distribution<float> nd(0.f, 1.f);
  std::vector<float> k(32 * ld);
  for (size_t t = 0; t < 32; ++t)
    for (int e = 0; e < D; ++e) k[t * ld + size_t(e)] = nd(rng) * float(1 + e);  // per-channel
  for (int bits : {2, 4}) {
    std::vector<uint8_t> block(kivi_key_block_bytes(bits, D));
    ASSERT_EQ(block.size(), size_t(D) * (size_t(bits) * 4 + 4));
    kivi_quantize_key_block(k.data(), ld, D, bits, block.data());
    std::vector<float> back(32 * ld, -1.f);
    kivi_dequantize_key_block(block.data(), D, bits, 32, back.data(), ld);
    for (int e = 0; e < D; ++e) {
      std::vector<float> col(32);
      for (size_t t = 0; t < 32; ++t) col[t] = k[t * ld + size_t(e)];
      const Group g = transcribe(col, bits);
      for (size_t t = 0; t < 32; ++t)
        ASSERT_EQ(back[t * ld + size_t(e)],
                  kivi_dequant(g.q[t], fp16_to_f32(g.scale), fp16_to_f32(g.mn)))
            << "channel " << e << " token " << t;
    }
    EXPECT_EQ(back[D], -1.f);  // columns past the head untouched
    std::vector<uint8_t> rec(kivi_value_record_bytes(bits, D));
    ASSERT_EQ(rec.size(), size_t(D / 32) * (size_t(bits) * 4 + 4));
    kivi_quantize_value(k.data(), D, bits, rec.data());
    std::vector<float> v(D);
    kivi_dequantize_value(rec.data(), D, bits, v.data());
    for (int g = 0; g < D / 32; ++g) {
      const Group want =
          transcribe(std::vector<float>(k.begin() + g * 32, k.begin() + g * 32 + 32), bits);
      for (int i = 0; i < 32; ++i)
        ASSERT_EQ(v[size_t(g * 32 + i)],
                  kivi_dequant(want.q[size_t(i)], fp16_to_f32(want.scale), fp16_to_f32(want.mn)));
    }
  }
}

}  // namespace
}  // namespace accel
