// Tests of the int4 kernel's exact P.V on the value codes (kernels/attention_pv_codes.h): the
// block's weights and P.V against a double transcription of the value definition, per-head bits
// independent of how the heads are grouped into passes, and invisible slots that weigh nothing
// whatever bytes they hold (the kernel against the reference: attention_quant_test). Tests only.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "kernels/attention_pv_codes.h"
#include "kernels/fp16.h"
#include "kernels/kv_quant.h"
#include "tests/support/test_support.h"

namespace {

using accel::KVQuant;
namespace pvc = accel::attention_pv_codes;

// Element of lane-order position k (attention_quant.h): per 2W elements, W even then W odd ones.
int lane_element(int k) {
  const int w = accel::simd::W, base = k / (2 * w) * (2 * w), r = k % (2 * w);
  return r < w ? base + 2 * r : base + 2 * (r - w) + 1;
}

struct Block {
  int D;
  size_t rec;
  std::vector<uint8_t> records;  // 32 int4 records
  std::vector<uint8_t> vblock;   // the same as a value block
};

// 32 records of random values; every third group is shifted by `offset` so that its zeros lie far
// outside the code range (codes then sit far from z), the others straddle 0 (codes near z).
Block make_block(int D, uint64_t seed, float offset) {
  Block b{D, accel::kv_quant_record_bytes(KVQuant::Int4, D), {}, {}};
  b.records.assign(32 * b.rec, 0);
  b.vblock.assign(accel::kv_quant_kblock_bytes(KVQuant::Int4, D), 0);
  auto v = accel::test::random_normal(32 * size_t(D), seed, 2.f);
  for (size_t i = 0; i < v.size(); ++i)
    if ((i % size_t(D)) / 32 % 3 == 2) v[i] += offset;
  for (int t = 0; t < 32; ++t) {
    accel::kv_quantize_head(KVQuant::Int4, &v[size_t(t) * D], D, &b.records[size_t(t) * b.rec]);
    accel::vblock_put(KVQuant::Int4, D, &b.records[size_t(t) * b.rec], b.vblock.data(), t);
  }
  return b;
}

float record_param(const Block& b, int t, int which, int g) {  // which 0: scale, 1: zero
  uint16_t h;
  std::memcpy(&h, &b.records[size_t(t) * b.rec + size_t(b.D / 2 + 2 * (which * b.D / 32 + g))], 2);
  return accel::fp16_to_f32(h);
}

// The kernel on one block: G heads' o (lane order, stride D) = o * alpha + P.V.
std::vector<float> run(const Block& b, int G, const std::vector<float>& p, uint32_t bits,
                       const std::vector<float>& alpha, std::vector<float> o) {
  const int groups = b.D / 32;
  std::vector<float> w(size_t(groups) * G * 32), z(size_t(groups) * 32);
  pvc::block_weights(G, b.D, p.data(), bits, b.vblock.data(), w.data(), z.data());
  pvc::pv_heads(G, b.D, o.data(), size_t(b.D), 0, alpha.data(), w.data(), z.data(), bits,
                b.vblock.data());
  return o;
}

// The kernel against o * alpha + sum over visible t of p_t * s_t * (c - z) in double, per element.
// c - z is exact for these zeros (normal fp16 values: |c - z| needs at most 11 + 5 bits); the
// kernel rounds o * alpha, each w_t = p_t * s_t, and one fma per visible key, so with at most 32
// keys the error is within (32 + 3) u of mag = |o * alpha| + sum_t p_t s_t |c - z| (recursive
// summation plus one rounding per product): 40 u = 2.4e-6 of mag.
TEST(PvCodes, EqualsTheValueDefinitionWithinTheDerivedTolerance) {
  for (int D : {32, 64, 128, 256})
    for (int G : {1, 3, 8, 11})
      for (uint32_t bits : {0xffffffffu, 0x0000ffffu, 0x7f3ff0fdu}) {
        const Block b = make_block(D, uint64_t(D * 100 + G), 300.f);
        const auto r = accel::test::random_normal(size_t(G) * 32, uint64_t(G), 5.f);
        std::vector<float> p(static_cast<size_t>(G) * 32), alpha(static_cast<size_t>(G));
        for (int h = 0; h < G; ++h) {
          alpha[size_t(h)] = 0.75f - 0.05f * float(h % 5);
          for (int t = 0; t < 32; ++t)
            p[size_t(h) * 32 + t] =
                (bits >> t & 1u) ? std::exp2(-std::fabs(r[size_t(h) * 32 + t])) : 0.f;
        }
        const auto o0 = accel::test::random_normal(size_t(G) * D, 3);
        const auto got = run(b, G, p, bits, alpha, o0);
        for (int h = 0; h < G; ++h)
          for (int k = 0; k < D; ++k) {
            const int e = lane_element(k), g = e / 32;
            const size_t at = size_t(h) * D + size_t(k);
            double want = double(o0[at]) * alpha[size_t(h)], mag = std::fabs(want);
            for (int t = 0; t < 32; ++t) {
              if (!(bits >> t & 1u)) continue;
              const uint8_t byte = b.records[size_t(t) * b.rec + size_t(e / 2)];
              const int c = e % 2 ? byte >> 4 : byte & 15;
              const double s = record_param(b, t, 0, g), z = record_param(b, t, 1, g);
              const double pt = p[size_t(h) * 32 + t];
              want += pt * (c - z) * s;
              mag += pt * s * std::fabs(c - z);
            }
            ASSERT_NEAR(got[at], want, 2.4e-6 * mag)
                << "D " << D << " G " << G << " bits " << bits << " head " << h << " element " << e;
          }
      }
}

// Eleven heads at once (passes of kHeadsPerPass and a remainder) give each head the bits it gets
// alone.
TEST(PvCodes, EachHeadsBitsAreTheSameHoweverTheHeadsArePassed) {
  constexpr int D = 128, G = 11;
  const Block b = make_block(D, 5, 40.f);
  const uint32_t bits = 0xfff7fffeu;
  const auto r = accel::test::random_normal(G * 32, 9, 3.f);
  std::vector<float> p(G * 32), alpha(G, 0.5f);
  for (int i = 0; i < G * 32; ++i)
    p[size_t(i)] = (bits >> (i % 32) & 1u) ? std::exp2(-std::fabs(r[size_t(i)])) : 0.f;
  const auto o0 = accel::test::random_normal(size_t(G) * D, 4);
  const auto all = run(b, G, p, bits, alpha, o0);
  for (int h = 0; h < G; ++h) {
    const std::vector<float> ph(p.begin() + h * 32, p.begin() + (h + 1) * 32);
    const std::vector<float> oh(o0.begin() + h * D, o0.begin() + (h + 1) * D);
    const auto alone = run(b, 1, ph, bits, {alpha[size_t(h)]}, oh);
    EXPECT_EQ(0, std::memcmp(alone.data(), &all[size_t(h) * D], D * sizeof(float))) << "head " << h;
  }
}

// Slots the query does not see may hold any bytes (past the cache's end, or masked keys): with
// infinite and NaN scales and zeros there and every code 15, the result is bit for bit the one
// with those slots zeroed.
TEST(PvCodes, InvisibleSlotsWeighNothingWhateverTheyHold) {
  constexpr int D = 64, G = 3;
  Block clean = make_block(D, 8, 0.f), dirty = clean;
  const uint32_t bits = 0x00ff0f0fu;
  const uint16_t junk[2] = {accel::f32_to_fp16(std::numeric_limits<float>::infinity()), 0x7e00};
  for (int t = 0; t < 32; ++t) {
    if (bits >> t & 1u) continue;
    std::vector<uint8_t> rec(dirty.rec, 0xff);
    for (size_t i = size_t(D / 2); i + 1 < dirty.rec; i += 2)
      std::memcpy(&rec[i], &junk[i / 2 % 2], 2);
    accel::vblock_put(KVQuant::Int4, D, rec.data(), dirty.vblock.data(), t);
    std::vector<uint8_t> zeros(clean.rec, 0);
    accel::vblock_put(KVQuant::Int4, D, zeros.data(), clean.vblock.data(), t);
  }
  std::vector<float> p(G * 32, 0.f), alpha(G, 1.f);
  for (int i = 0; i < G * 32; ++i)
    if (bits >> (i % 32) & 1u) p[size_t(i)] = 1.f / float(1 + i % 7);
  const auto o0 = accel::test::random_normal(size_t(G) * D, 6);
  const auto a = run(clean, G, p, bits, alpha, o0), c = run(dirty, G, p, bits, alpha, o0);
  for (float x : c) ASSERT_TRUE(std::isfinite(x));
  EXPECT_EQ(0, std::memcmp(a.data(), c.data(), a.size() * sizeof(float)));
}

}  // namespace
