// Tests of the int4 kernel's 8-bit P.V (QuantPV::Int8, kernels/attention_pv8.h): the derived
// worst-case bound against the exact kernel on random and adversarial caches (flat attention, one
// dominant key, maximal codes), a block built to come close to the bound, pv8_heads against a
// scalar transcription of its numerics, and the refusal for q8_0 caches (bit identity across
// threads, batches and work splits: attention_quant_test). Tests only.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <numeric>
#include <vector>

#include "kernels/attention_pv8.h"
#include "kernels/attention_quant.h"
#include "kernels/fp16.h"
#include "kernels/kv_quant.h"
#include "tests/support/quant_cache.h"
#include "tests/support/test_support.h"

namespace {

using accel::AttentionShape;
using accel::KVQuant;
using accel::QuantPV;
using accel::test::QuantCache;

std::vector<int32_t> iota_pos(size_t n) {
  std::vector<int32_t> p(n);
  std::iota(p.begin(), p.end(), 0);
  return p;
}

std::vector<float> run(const AttentionShape& s, const std::vector<float>& q,
                       const std::vector<int32_t>& qpos, const QuantCache& c, QuantPV pv) {
  const size_t qd = size_t(s.n_heads) * s.head_dim;
  const auto kpos = iota_pos(c.n);
  std::vector<float> out(qpos.size() * qd, -1.f);
  accel::attention_quant(s, q.data(), qd, qpos.data(), qpos.size(), c.view(), kpos.data(), c.n,
                         out.data(), qd, accel::kSplitKChunk, accel::QuantScorePath::Auto, pv);
  return out;
}

// One head's 8-bit P.V over a value block: o = o * alpha + the block's sum.
void pv8_one(const uint8_t* vblock, int D, uint32_t bits, float* o, float alpha, const float* p) {
  accel::attention_pv8::Scratch s;
  accel::attention_pv8::pv8_heads(1, D, o, 0, 0, &alpha, p, bits, vblock, s);
}

// The first nb of 32 int4 records (the vector's front) as a value block (kv_quant.h), the rest of
// the block zeros: what pv8_heads reads.
std::vector<uint8_t> value_block(const std::vector<uint8_t>& records, int D, int nb) {
  const size_t rec = accel::kv_quant_record_bytes(KVQuant::Int4, D);
  std::vector<uint8_t> block(accel::kv_quant_kblock_bytes(KVQuant::Int4, D), 0);
  for (int t = 0; t < nb; ++t)
    accel::vblock_put(KVQuant::Int4, D, &records[size_t(t) * rec], block.data(), t);
  return block;
}

// The header's bound (attention_quant.h, QuantPV): (32 / 510) * max s * max(|z|, |15 - z|) over
// every value record of the cache, read from the records' fp16 scales and zeros.
double derived_bound(const QuantCache& c) {
  const int groups = c.D / 32;
  double smax = 0, zeta = 0;
  for (size_t r = 0; r < c.v.size() / c.rec; ++r) {
    const uint8_t* rec = &c.v[r * c.rec] + c.D / 2;
    for (int g = 0; g < groups; ++g) {
      uint16_t sh, zh;
      std::memcpy(&sh, rec + 2 * g, 2);
      std::memcpy(&zh, rec + 2 * (groups + g), 2);
      const double z = accel::fp16_to_f32(zh);
      smax = std::max(smax, double(accel::fp16_to_f32(sh)));
      zeta = std::max({zeta, std::fabs(z), std::fabs(15 - z)});
    }
  }
  return 32.0 / 510.0 * smax * zeta;
}

double max_abs(const std::vector<float>& x) {
  double m = 0;
  for (float v : x) m = std::max(m, double(std::fabs(v)));
  return m;
}

struct Gap {
  double max = 0, mean = 0;
};

Gap gap(const std::vector<float>& a, const std::vector<float>& b) {
  Gap g;
  for (size_t i = 0; i < a.size(); ++i) {
    const double d = std::fabs(double(a[i]) - double(b[i]));
    g.max = std::max(g.max, d);
    g.mean += d;
  }
  g.mean /= double(a.size());
  return g;
}

// Against the exact kernel (same scores, softmax and merge: only P.V differs) the output may move
// by the derived bound plus float rounding: both kernels' o and l sums and the 8-bit path's fold
// (a handful of roundings per block, relative to the block's sum of |w (c - z)|), far below
// 1e-4 max|v| at these sizes (the exact kernel's own allowance in attention_quant_test).
void expect_within_bound(const AttentionShape& s, const QuantCache& c,
                         const std::vector<int32_t>& qpos, const std::vector<float>& q) {
  const auto exact = run(s, q, qpos, c, QuantPV::Exact);
  const auto pv8 = run(s, q, qpos, c, QuantPV::Int8);
  const double bound = derived_bound(c) + 1e-4 * max_abs(c.vf);
  const Gap g = gap(exact, pv8);
  EXPECT_LE(g.max, bound) << "mean gap " << g.mean;
  EXPECT_GT(g.max, 0.0) << "the 8-bit path gave the exact kernel's bits: was it taken?";
}

struct Shape {
  int heads, kv_heads, D;
  size_t n_kv;
  float kscale;  // key spread: larger makes the softmax more peaked
};

class Pv8Shapes : public ::testing::TestWithParam<Shape> {};

TEST_P(Pv8Shapes, StaysWithinTheDerivedBoundOfTheExactKernel) {
  const Shape p = GetParam();
  const AttentionShape s{p.heads, p.kv_heads, p.D, 1.f / std::sqrt(float(p.D))};
  const QuantCache c = accel::test::make_quant_cache(KVQuant::Int4, p.kv_heads, p.D, p.n_kv,
                                                     uint64_t(p.D) + p.n_kv, p.kscale);
  const int32_t last = int32_t(p.n_kv) - 1;
  for (std::vector<int32_t> qpos :
       {std::vector<int32_t>{last}, std::vector<int32_t>{0, 31, 33, last, 520, 5}}) {
    for (auto& x : qpos) x = std::min(x, last);
    expect_within_bound(s, c, qpos,
                        accel::test::random_normal(qpos.size() * size_t(p.heads) * p.D, 9));
  }
}

INSTANTIATE_TEST_SUITE_P(Shapes, Pv8Shapes,
                         ::testing::Values(Shape{8, 1, 128, 1, 1}, Shape{8, 1, 128, 33, 1},
                                           Shape{8, 1, 128, 1100, 1}, Shape{8, 1, 128, 1100, 4},
                                           Shape{12, 4, 64, 1500, 1}, Shape{3, 1, 64, 700, 3},
                                           Shape{4, 4, 32, 70, 1}, Shape{6, 2, 96, 300, 1},
                                           Shape{4, 2, 256, 530, 2}, Shape{5, 1, 160, 90, 1}),
                         [](const auto& info) {
                           const Shape& p = info.param;
                           return "h" + std::to_string(p.heads) + "_kv" +
                                  std::to_string(p.kv_heads) + "_d" + std::to_string(p.D) + "_n" +
                                  std::to_string(p.n_kv) + "_k" + std::to_string(int(p.kscale));
                         });

// Flat attention (a zero query: every key weighs the same), one dominant key (a query along one
// key, scaled up), and maximal codes (values at +-8, so codes 0 and 15 and zeros near the range's
// ends): each within the bound.
TEST(Pv8, FlatAttentionOneDominantKeyAndMaximalCodesStayWithinTheBound) {
  const AttentionShape s{8, 1, 128, 1.f / std::sqrt(128.f)};
  const size_t n = 1000;
  QuantCache c = accel::test::make_quant_cache(KVQuant::Int4, 1, 128, n, 71);
  const std::vector<int32_t> qpos{int32_t(n) - 1};
  {
    SCOPED_TRACE("flat");
    expect_within_bound(s, c, qpos, std::vector<float>(8 * 128, 0.f));
  }
  {
    SCOPED_TRACE("one dominant key");
    std::vector<float> q(8 * 128);
    for (int h = 0; h < 8; ++h)
      for (int e = 0; e < 128; ++e) q[size_t(h) * 128 + e] = 40.f * c.kf[417 * 128 + size_t(e)];
    expect_within_bound(s, c, qpos, q);
  }
  {
    SCOPED_TRACE("maximal codes");
    std::vector<float> v(128), k(128);
    std::vector<uint8_t> rec(c.rec);
    for (size_t j = 0; j < n; ++j) {
      for (int e = 0; e < 128; ++e) v[size_t(e)] = (e + int(j)) % 2 ? 8.f : -8.f;
      accel::kv_quantize_head(KVQuant::Int4, v.data(), 128, &c.v[j * c.rec]);
    }
    c.dequantize();
    expect_within_bound(s, c, qpos, accel::test::random_normal(8 * 128, 5));
  }
}

// Mixed scales, where the bound's two maxima come from different keys: key 0 spans +-750 (scale
// 100, zero 7.5), key 1 spans [1000, 1001] (scale 1/15, zero -15000); under flat attention key
// 1's code is nearbyint(255 * (1/15) / 100) = 0, so its whole weight is dropped and the output
// moves by ~500. The bound (separate maxima: 2/510 * 100 * 15000 ~ 5900) holds; a bound pairing
// each key's scale with its own zero (max of s * max(|z|, |15 - z|): ~1000 * 2/510 ~ 4) would not.
TEST(Pv8, MixedScalesDropASmallScaleKeyAndStayWithinTheBound) {
  constexpr int D = 32;
  QuantCache c = accel::test::make_quant_cache(KVQuant::Int4, 1, D, 2, 13);
  std::vector<float> v(D);
  for (int e = 0; e < D; ++e) v[size_t(e)] = e % 2 ? 750.f : -750.f;
  accel::kv_quantize_head(KVQuant::Int4, v.data(), D, &c.v[0]);
  for (int e = 0; e < D; ++e) v[size_t(e)] = 1000.f + float(e % 2);
  accel::kv_quantize_head(KVQuant::Int4, v.data(), D, &c.v[c.rec]);
  c.dequantize();
  const AttentionShape s{1, 1, D, 1.f / std::sqrt(float(D))};
  const std::vector<int32_t> qpos{1};
  const std::vector<float> q(D, 0.f);  // flat: both keys weigh 1/2
  const Gap g = gap(run(s, q, qpos, c, QuantPV::Exact), run(s, q, qpos, c, QuantPV::Int8));
  EXPECT_LE(g.max, derived_bound(c) + 1e-4 * max_abs(c.vf));
  EXPECT_GT(g.max, 400.0) << "key 1 was expected to round to code 0 and drop out";
}

// The tile's lane order (attention_quant.h): per 2W elements, W even ones then W odd ones.
int lane_element(int k) {
  const int w = accel::simd::W, base = k / (2 * w) * (2 * w), r = k % (2 * w);
  return r < w ? base + 2 * r : base + 2 * (r - w) + 1;
}

// One block built to approach the bound: key 0 has p = 1, keys 1-31 p = 0.499 / 255 (each rounds
// to code 0), every scale 1, every zero 0 and every code 15. The exact block sum is
// 15 * (1 + 31 * 0.499 / 255); the 8-bit one drops the 31 small weights, an error of
// 31 * 0.499 / 255 * 15 = 0.91, against the per-block bound 32 * (1 / 510) * 15 = 0.94.
TEST(Pv8, ABlockOfWeightsJustBelowTheRoundingStepComesWithinTenPercentOfTheBound) {
  constexpr int D = 128;
  const size_t rec = accel::kv_quant_record_bytes(KVQuant::Int4, D);
  std::vector<uint8_t> records(32 * rec);
  for (int t = 0; t < 32; ++t) {
    uint8_t* r = &records[size_t(t) * rec];
    std::fill(r, r + D / 2, uint8_t(0xff));
    for (int g = 0; g < D / 32; ++g) {
      const uint16_t one = accel::f32_to_fp16(1.f), zero = accel::f32_to_fp16(0.f);
      std::memcpy(r + D / 2 + 2 * g, &one, 2);
      std::memcpy(r + D / 2 + 2 * (D / 32 + g), &zero, 2);
    }
  }
  const auto block = value_block(records, D, 32);
  alignas(64) float p[32];
  p[0] = 1.f;
  for (int t = 1; t < 32; ++t) p[t] = 0.499f / 255.f;
  alignas(64) float o[D] = {};
  pv8_one(block.data(), D, 0xffffffffu, o, 1.f, p);
  const double exact = 15.0 * (1.0 + 31.0 * 0.499 / 255.0), bound = 32.0 / 510.0 * 15.0;
  for (int k = 0; k < D; ++k) {
    SCOPED_TRACE(lane_element(k));
    const double err = std::fabs(double(o[k]) - exact);
    EXPECT_LE(err, bound);
    EXPECT_GE(err, 0.9 * bound);
  }
}

// A block whose largest weight is tiny (2^-125, where 255 / P overflows a float) must not turn
// its zero weights into NaN codes: it adds nothing, as the header says.
TEST(Pv8, ABlockOfVanishingWeightsAddsNothingAndStaysFinite) {
  constexpr int D = 64;
  const size_t rec = accel::kv_quant_record_bytes(KVQuant::Int4, D);
  std::vector<uint8_t> records(32 * rec);
  const auto v = accel::test::random_normal(32 * size_t(D), 2);
  for (int t = 0; t < 32; ++t)
    accel::kv_quantize_head(KVQuant::Int4, &v[size_t(t) * D], D, &records[size_t(t) * rec]);
  const auto block = value_block(records, D, 32);
  alignas(64) float p[32] = {};
  p[3] = 0x1p-125f;
  alignas(64) float o[D];
  for (int k = 0; k < D; ++k) o[k] = float(k);
  pv8_one(block.data(), D, 0xffffffffu, o, 0.5f, p);
  for (int k = 0; k < D; ++k) EXPECT_EQ(o[k], 0.5f * float(k)) << k;
}

TEST(Pv8, RefusesAQ8_0Cache) {
  const AttentionShape s{2, 1, 64, 0.125f};
  const QuantCache c = accel::test::make_quant_cache(KVQuant::Q8_0, 1, 64, 40, 3);
  EXPECT_DEATH(run(s, accel::test::random_normal(128, 1), {39}, c, QuantPV::Int8),
               "int4 caches only");
}

}  // namespace

namespace {

// A plain scalar transcription of pv8_heads' numerics per head (attention_pv8.h) in the same float
// operations, for one head over one block of hand-made records; `mag` gets each group's
// kappa * sum_t u_t * (15 + |z_t|), the scale of the fold's rounding.
std::vector<float> pv8_model(const std::vector<uint8_t>& records, size_t rec, int D, const float* p,
                             uint32_t bits, float alpha, std::vector<float> o,
                             std::vector<double>& mag) {
  mag.assign(o.size(), 0.0);
  const int groups = D / 32;
  float P = 0;
  for (int t = 0; t < 32; ++t) P = std::max(P, p[t]);
  for (auto& x : o) x *= alpha;
  if (!(P > 0)) return o;
  const float a = 255.f / P;
  for (int g = 0; g < groups; ++g) {
    float s[32], z[32], sigma = 0;
    for (int t = 0; t < 32; ++t) {
      uint16_t sh = 0, zh = 0;
      if (bits >> t & 1u) {
        std::memcpy(&sh, &records[size_t(t) * rec + D / 2 + 2 * g], 2);
        std::memcpy(&zh, &records[size_t(t) * rec + D / 2 + 2 * (groups + g)], 2);
      }
      s[t] = accel::fp16_to_f32(sh);
      z[t] = accel::fp16_to_f32(zh);
      sigma = std::max(sigma, s[t]);
    }
    const float inv = sigma > 0 ? 1.f / sigma : 0.f;
    int32_t u[32];
    for (int t = 0; t < 32; ++t) u[t] = int32_t(std::nearbyint((p[t] * a) * (s[t] * inv)));
    double Zd = 0;  // the kernel's lane-then-horizontal order differs; compared with a tolerance
    for (int t = 0; t < 32; ++t) Zd += double(u[t]) * z[t];
    const float kappa = P * sigma * (1.f / 255.f);
    double m = 0;
    for (int t = 0; t < 32; ++t) m += double(u[t]) * (15 + std::fabs(z[t])) * kappa;
    for (int e = 0; e < 32; ++e) mag[size_t(g * 32 + e)] = m;
    for (int e = 0; e < 32; ++e) {
      const int el = g * 32 + e;
      int32_t I = 0;
      for (int t = 0; t < 32; ++t) {
        const uint8_t byte = records[size_t(t) * rec + size_t(el / 2)];
        I += u[t] * ((el % 2) ? byte >> 4 : byte & 15);
      }
      o[size_t(el)] = float((double(I) - Zd) * kappa + o[size_t(el)]);
    }
  }
  return o;
}

// pv8_heads against the model on random records, probabilities spanning 2^-20..1, a partial block
// and masked keys. Everything but Z is the same float sequence (the integer dots are exact); the
// model sums Z in double where the kernel rounds 32 lane products and sums (<= 40 u relative to
// sum |u z|), and folds in double where the kernel rounds I - Z, the product with kappa and the
// fma with o * alpha. So they agree within 50 u of kappa * sum |u| (15 + |z|) + |o|: 4e-6 of it.
// (On this machine the two have agreed bit for bit.)
TEST(Pv8, HeadEqualsAScalarTranscriptionOfItsNumerics) {
  for (int D : {32, 64, 128, 256}) {
    const size_t rec = accel::kv_quant_record_bytes(KVQuant::Int4, D);
    std::vector<uint8_t> records(32 * rec);
    const auto v = accel::test::random_normal(32 * size_t(D), uint64_t(D), 2.f);
    for (int t = 0; t < 32; ++t)
      accel::kv_quantize_head(KVQuant::Int4, &v[size_t(t) * D], D, &records[size_t(t) * rec]);
    const auto r = accel::test::random_normal(32, uint64_t(D) + 1, 5.f);
    for (uint32_t bits : {0xffffffffu, 0x0000ffffu, 0x7f3ff0fdu}) {
      const int nb = bits == 0x0000ffffu ? 16 : 32;
      alignas(64) float p[32];
      for (int t = 0; t < 32; ++t) p[t] = (bits >> t & 1u) ? std::exp2(-std::fabs(r[t])) : 0.f;
      const auto block = value_block(records, D, nb);
      const auto o0 = accel::test::random_normal(size_t(D), 3);
      alignas(64) float o[256];
      // the kernel's o is in lane order; the model's in element order
      for (int k = 0; k < D; ++k) o[k] = o0[size_t(lane_element(k))];
      const float alpha = 0.75f;
      pv8_one(block.data(), D, bits, o, alpha, p);
      std::vector<double> mag;
      const auto want = pv8_model(records, rec, D, p, bits, alpha, o0, mag);
      for (int k = 0; k < D; ++k)
        EXPECT_NEAR(o[k], want[size_t(lane_element(k))],
                    4e-6 * (mag[size_t(lane_element(k))] + std::fabs(o[k])))
            << "D " << D << " bits " << bits << " element " << lane_element(k);
    }
  }
}

// G heads' 8-bit P.V over one value block: head h's 32 probabilities at p + 32h, its partial
// output (D floats, lane order) at o + D h.
std::vector<float> pv8_group(const std::vector<uint8_t>& vblock, int G, int D, uint32_t bits,
                             const std::vector<float>& p, const std::vector<float>& alpha,
                             std::vector<float> o) {
  accel::attention_pv8::Scratch s;
  accel::attention_pv8::pv8_heads(G, D, o.data(), size_t(D), 0, alpha.data(), p.data(), bits,
                                  vblock.data(), s);
  return o;
}

std::vector<uint8_t> random_records(int D, uint64_t seed) {
  const size_t rec = accel::kv_quant_record_bytes(KVQuant::Int4, D);
  std::vector<uint8_t> records(32 * rec);
  const auto v = accel::test::random_normal(32 * size_t(D), seed, 2.f);
  for (int t = 0; t < 32; ++t)
    accel::kv_quantize_head(KVQuant::Int4, &v[size_t(t) * D], D, &records[size_t(t) * rec]);
  return records;
}

// Heads are passed kHeadsPerPass at a time (the last pass shorter): 11 heads at once, one of them
// with a block too faint to add anything, give each head the bytes it gets alone.
TEST(Pv8, EachHeadsBitsAreTheSameHoweverTheHeadsArePassed) {
  constexpr int D = 128, G = 11;
  const auto block = value_block(random_records(D, 21), D, 32);
  const uint32_t bits = 0xfff7fffeu;
  const auto r = accel::test::random_normal(G * 32, 9, 3.f);
  std::vector<float> p(G * 32), alpha(G);
  for (int i = 0; i < G * 32; ++i)
    p[size_t(i)] = (bits >> (i % 32) & 1u) ? std::exp2(-std::fabs(r[size_t(i)])) : 0.f;
  for (int t = 0; t < 32; ++t) p[size_t(4 * 32 + t)] *= 0x1p-124f;  // head 4: `none`
  for (int h = 0; h < G; ++h) alpha[size_t(h)] = 1.f / float(1 + h);
  const auto o0 = accel::test::random_normal(size_t(G) * D, 4);
  const auto all = pv8_group(block, G, D, bits, p, alpha, o0);
  for (int h = 0; h < G; ++h) {
    const std::vector<float> ph(p.begin() + h * 32, p.begin() + (h + 1) * 32);
    const std::vector<float> oh(o0.begin() + h * D, o0.begin() + (h + 1) * D);
    const auto alone = pv8_group(block, 1, D, bits, ph, {alpha[size_t(h)]}, oh);
    EXPECT_EQ(0, std::memcmp(alone.data(), &all[size_t(h) * D], D * sizeof(float))) << "head " << h;
  }
}

// A pair of blocks as attention_quant's pairs run them, both blocks' weights (pv8_weights) before
// either update (pv8_update), each with its own Scratch, gives the bytes of pv8_heads block after
// block: nothing of the first block's weights is lost when the second's are made.
TEST(Pv8, BothBlocksWeightsBeforeEitherUpdateEqualsOneBlockAfterTheOther) {
  constexpr int D = 64, G = 3;
  const auto blockA = value_block(random_records(D, 31), D, 32);
  const auto blockB = value_block(random_records(D, 32), D, 32);
  const uint32_t bitsA = 0xffffffffu, bitsB = 0x0fff7fffu;
  const auto r = accel::test::random_normal(2 * G * 32, 10, 3.f);
  std::vector<float> pA(G * 32), pB(G * 32);
  for (int i = 0; i < G * 32; ++i) {
    pA[size_t(i)] = std::exp2(-std::fabs(r[size_t(i)]));
    pB[size_t(i)] = (bitsB >> (i % 32) & 1u) ? std::exp2(-std::fabs(r[size_t(G * 32 + i)])) : 0.f;
  }
  const float alphaA[G] = {1.f, 0.5f, 0.25f}, alphaB[G] = {0.75f, 1.f, 0.125f};
  const auto o0 = accel::test::random_normal(size_t(G) * D, 7);
  std::vector<float> seq = o0, split = o0;
  accel::attention_pv8::Scratch s, sA, sB;
  accel::attention_pv8::pv8_heads(G, D, seq.data(), D, 0, alphaA, pA.data(), bitsA, blockA.data(),
                                  s);
  accel::attention_pv8::pv8_heads(G, D, seq.data(), D, 0, alphaB, pB.data(), bitsB, blockB.data(),
                                  s);
  accel::attention_pv8::pv8_weights(G, D, pA.data(), bitsA, blockA.data(), sA);
  accel::attention_pv8::pv8_weights(G, D, pB.data(), bitsB, blockB.data(), sB);
  accel::attention_pv8::pv8_update(G, D, split.data(), D, 0, alphaA, blockA.data(), sA);
  accel::attention_pv8::pv8_update(G, D, split.data(), D, 0, alphaB, blockB.data(), sB);
  EXPECT_NE(0, std::memcmp(seq.data(), o0.data(), seq.size() * sizeof(float)));
  EXPECT_EQ(0, std::memcmp(seq.data(), split.data(), seq.size() * sizeof(float)));
}

// Slots the query does not see may hold any bytes (past the cache's end, or masked keys): with
// infinite and NaN scales and zeros there and every code 15, the result is bit for bit the one
// with those slots zeroed.
TEST(Pv8, InvisibleSlotsWeighNothingWhateverTheyHold) {
  constexpr int D = 64, G = 3;
  const size_t rec = accel::kv_quant_record_bytes(KVQuant::Int4, D);
  const auto records = random_records(D, 8);
  auto clean = value_block(records, D, 32), dirty = clean;
  const uint32_t bits = 0x00ff0f0fu;
  const uint16_t junk[2] = {accel::f32_to_fp16(std::numeric_limits<float>::infinity()), 0x7e00};
  for (int t = 0; t < 32; ++t) {
    if (bits >> t & 1u) continue;
    std::vector<uint8_t> bad(rec, 0xff);
    for (size_t i = size_t(D / 2); i + 1 < rec; i += 2) std::memcpy(&bad[i], &junk[i / 2 % 2], 2);
    accel::vblock_put(KVQuant::Int4, D, bad.data(), dirty.data(), t);
    const std::vector<uint8_t> zeros(rec, 0);
    accel::vblock_put(KVQuant::Int4, D, zeros.data(), clean.data(), t);
  }
  std::vector<float> p(G * 32, 0.f), alpha(G, 1.f);
  for (int i = 0; i < G * 32; ++i)
    if (bits >> (i % 32) & 1u) p[size_t(i)] = 1.f / float(1 + i % 7);
  const auto o0 = accel::test::random_normal(size_t(G) * D, 6);
  const auto a = pv8_group(clean, G, D, bits, p, alpha, o0);
  const auto c = pv8_group(dirty, G, D, bits, p, alpha, o0);
  for (float x : c) ASSERT_TRUE(std::isfinite(x));
  EXPECT_EQ(0, std::memcmp(a.data(), c.data(), a.size() * sizeof(float)));
}

}  // namespace
