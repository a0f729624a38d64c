// Tests of accel::attention_quant (the fused int4 / q8_0 attention): agreement with the double
// reference on the same dequantized data and the kernel's rounded query, the bound the query
// rounding allows against the unrounded query, the rounding rule itself, split-K against a
// single pass, bit-exact invariance to threads, batch and masked later keys, masked and empty
// chunks, and dequantize_kv_rows against the scalar format definition. Tests only.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <tuple>
#include <vector>

#include "kernels/attention.h"
#include "kernels/attention_quant.h"
#include "kernels/kv_quant.h"
#include "kernels/threading.h"
#include "tests/support/quant_cache.h"
#include "tests/support/test_support.h"

namespace {

using accel::AttentionShape;
using accel::KVQuant;

using accel::test::QuantCache;

QuantCache make_cache(KVQuant f, int hkv, int D, size_t n, uint64_t seed, float kscale = 1.f) {
  return accel::test::make_quant_cache(f, hkv, D, n, seed, kscale);
}

std::vector<int32_t> iota_pos(size_t n) {
  std::vector<int32_t> p(n);
  std::iota(p.begin(), p.end(), 0);
  return p;
}

std::vector<float> run(const AttentionShape& s, const std::vector<float>& q,
                       const std::vector<int32_t>& qpos, const QuantCache& c,
                       const std::vector<int32_t>& kpos, size_t chunk = accel::kSplitKChunk) {
  const size_t qd = size_t(s.n_heads) * s.head_dim;
  std::vector<float> out(qpos.size() * qd, -1.f);
  accel::attention_quant(s, q.data(), qd, qpos.data(), qpos.size(), c.view(), kpos.data(), c.n,
                         out.data(), qd, chunk);
  return out;
}

struct Errors {
  double max_abs = 0, mean_abs = 0, vmax = 0;
};

// The query as the kernel uses it: rounded per group of 32 by quantize_query_group, the codes
// times the step (a float product; the reference then works in double).
std::vector<float> rounded_query(const std::vector<float>& q) {
  std::vector<float> r(q.size());
  int8_t codes[32];
  for (size_t g = 0; g < q.size(); g += 32) {
    const float step = accel::quantize_query_group(&q[g], codes);
    for (int e = 0; e < 32; ++e) r[g + size_t(e)] = float(codes[e]) * step;
  }
  return r;
}

// Errors of `got` against the double reference on the cache's dequantized data with the query
// rounded as the kernel rounds it (rounded = true) or as given.
Errors compare_to_reference(const AttentionShape& s, const std::vector<float>& q,
                            const std::vector<int32_t>& qpos, const QuantCache& c,
                            const std::vector<int32_t>& kpos, const std::vector<float>& got,
                            bool rounded = true) {
  const size_t qd = size_t(s.n_heads) * s.head_dim;
  std::vector<double> want(got.size());
  const std::vector<float> qr = rounded ? rounded_query(q) : q;
  accel::attention_reference(s, qr.data(), qd, qpos.data(), qpos.size(), c.kf.data(), c.vf.data(),
                             size_t(c.hkv) * c.D, kpos.data(), c.n, want.data(), qd);
  Errors e;
  for (size_t i = 0; i < got.size(); ++i) {
    const double d = std::fabs(double(got[i]) - want[i]);
    e.max_abs = std::max(e.max_abs, d);
    e.mean_abs += d;
  }
  e.mean_abs /= double(got.size());
  for (float x : c.vf) e.vmax = std::max(e.vmax, double(std::fabs(x)));
  return e;
}

struct Shape {
  KVQuant f;
  int heads, kv_heads, D;
  size_t n_kv;
};

class AttentionQuantShapes : public ::testing::TestWithParam<Shape> {};

// Tolerance: the output is a convex combination of v rows, so errors are relative to max|v|.
// Against the reference on the rounded query the integer group dots are exact; the float sources
// are the fold (an fnmadd, a mul and an fma per group, D/32 + 2 roundings: <= 10 u relative to
// sum |q̃ k̂| at D = 256) and the reference's own q̃ = code * step (one rounding per element), both
// a few units here: ~1e-5 absolute in the exponent; exp2's ~2e-7 relative error, and the l and o
// sums (n_kv terms, ~n_kv u relative in the worst case, far less in practice). For D <= 128 and
// n_kv <= 5000 this bounds the error by ~4e-5 max|v|; 1e-4 max|v| leaves a margin of 2.5.
TEST_P(AttentionQuantShapes, MatchesTheDoubleReferenceOnTheDequantizedCacheAndTheRoundedQuery) {
  const Shape p = GetParam();
  const AttentionShape s{p.heads, p.kv_heads, p.D, 1.f / std::sqrt(float(p.D))};
  const QuantCache c = make_cache(p.f, p.kv_heads, p.D, p.n_kv, 11);
  const auto kpos = iota_pos(p.n_kv);
  // decode (one query at the last position) and a batch of queries at scattered positions
  for (std::vector<int32_t> qpos :
       {std::vector<int32_t>{int32_t(p.n_kv) - 1},
        std::vector<int32_t>{0, 31, 32, 511, 512, 700, int32_t(p.n_kv) - 1}}) {
    for (auto& x : qpos) x = std::min(x, int32_t(p.n_kv) - 1);
    const auto q = accel::test::random_normal(qpos.size() * p.heads * p.D, 3);
    const auto got = run(s, q, qpos, c, kpos);
    const Errors e = compare_to_reference(s, q, qpos, c, kpos, got);
    EXPECT_LE(e.max_abs, 1e-4 * e.vmax) << "n_q " << qpos.size();
    EXPECT_LT(e.mean_abs, 0.02);  // the seed's own gate, far looser
  }
}

// Against the unrounded query: each score moves by at most delta = scale * sum_e |q_e - q̃_e| |k̂_e|
// (computed here in double over every query, head and visible key), so every softmax weight moves
// by a factor within [e^-2delta, e^2delta] and the output, a convex combination of v rows, by at
// most (e^2delta - 1) max|v|; plus the 1e-4 max|v| float allowance above.
TEST_P(AttentionQuantShapes, StaysWithinTheQueryRoundingBoundOfTheUnroundedReference) {
  const Shape p = GetParam();
  const AttentionShape s{p.heads, p.kv_heads, p.D, 1.f / std::sqrt(float(p.D))};
  const QuantCache c = make_cache(p.f, p.kv_heads, p.D, p.n_kv, 11);
  const auto kpos = iota_pos(p.n_kv);
  const std::vector<int32_t> qpos{int32_t(p.n_kv) - 1};
  const auto q = accel::test::random_normal(size_t(p.heads) * p.D, 3);
  const auto qr = rounded_query(q);
  double delta = 0;
  const int G = p.heads / p.kv_heads;
  for (int h = 0; h < p.heads; ++h)
    for (size_t j = 0; j < p.n_kv; ++j) {
      double d = 0;
      for (int e = 0; e < p.D; ++e)
        d += std::fabs(double(q[size_t(h) * p.D + e]) - qr[size_t(h) * p.D + e]) *
             std::fabs(c.kf[j * size_t(p.kv_heads) * p.D + size_t(h / G) * p.D + e]);
      delta = std::max(delta, d * s.scale);
    }
  const Errors e = compare_to_reference(s, q, qpos, c, kpos, run(s, q, qpos, c, kpos), false);
  EXPECT_LE(e.max_abs, (std::expm1(2 * delta) + 1e-4) * e.vmax) << "delta " << delta;
  EXPECT_LT(e.mean_abs, 0.02);  // the seed's gate
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, AttentionQuantShapes,
    ::testing::Values(Shape{KVQuant::Int4, 8, 1, 128, 1}, Shape{KVQuant::Int4, 8, 1, 128, 33},
                      Shape{KVQuant::Int4, 12, 4, 64, 1500}, Shape{KVQuant::Int4, 16, 2, 128, 4100},
                      Shape{KVQuant::Int4, 4, 4, 32, 600}, Shape{KVQuant::Int4, 4, 2, 256, 700},
                      Shape{KVQuant::Q8_0, 12, 4, 64, 1500}, Shape{KVQuant::Q8_0, 8, 2, 128, 2049}),
    [](const auto& info) {
      const Shape& p = info.param;
      return std::string(p.f == KVQuant::Int4 ? "int4" : "q8_0") + "_h" + std::to_string(p.heads) +
             "_kv" + std::to_string(p.kv_heads) + "_d" + std::to_string(p.D) + "_n" +
             std::to_string(p.n_kv);
    });

// The merge multiplies each chunk's (l, o) by one more exp2 factor (relative error <= ~3e-7) and
// adds the chunks in a different association than one pass does (<= n_chunks u relative to the
// sums); with 9 chunks this is ~1e-6 relative to max|v|. Tolerance 1e-5 max|v|.
TEST(AttentionQuant, SplitKMergeEqualsTheSinglePassWithinTheDerivedTolerance) {
  const AttentionShape s{8, 2, 128, 1.f / std::sqrt(128.f)};
  const size_t n = 4500;
  const QuantCache c = make_cache(KVQuant::Int4, 2, 128, n, 21, 2.f);
  const auto kpos = iota_pos(n);
  const std::vector<int32_t> qpos{int32_t(n) - 1};
  const auto q = accel::test::random_normal(8 * 128, 4);
  const auto split = run(s, q, qpos, c, kpos, 512);
  const auto single = run(s, q, qpos, c, kpos, (n + 31) / 32 * 32);
  double vmax = 0, worst = 0;
  for (float x : c.vf) vmax = std::max(vmax, double(std::fabs(x)));
  for (size_t i = 0; i < split.size(); ++i)
    worst = std::max(worst, double(std::fabs(split[i] - single[i])));
  EXPECT_LE(worst, 1e-5 * vmax);
  EXPECT_GT(worst, 0.0) << "split and single pass are expected to round differently";
}

// For both P.V paths (exact, and 8-bit: kernels/attention_pv8.h).
TEST(AttentionQuant, BitIdenticalAcrossThreadsBatchAndMaskedLaterKeys) {
  for (accel::QuantPV pv : {accel::QuantPV::Exact, accel::QuantPV::Int8}) {
    SCOPED_TRACE(pv == accel::QuantPV::Exact ? "exact P.V" : "8-bit P.V");
    const AttentionShape s{12, 4, 64, 0.125f};
    const size_t n = 2100;
    const QuantCache c = make_cache(KVQuant::Int4, 4, 64, n, 31);
    const auto kpos = iota_pos(n);
    const int32_t p = 1337;
    const size_t qd = 12 * 64;
    const auto qrow = accel::test::random_normal(qd, 5);
    auto with_threads = [&](int threads, const std::vector<float>& q,
                            const std::vector<int32_t>& qpos, size_t n_kv) {
      const int t0 = accel::num_threads();
      accel::set_num_threads(threads);
      std::vector<float> out(qpos.size() * qd);
      accel::attention_quant(s, q.data(), qd, qpos.data(), qpos.size(), c.view(), kpos.data(), n_kv,
                             out.data(), qd, accel::kSplitKChunk, accel::QuantScorePath::Auto, pv);
      accel::set_num_threads(t0);
      return out;
    };
    // A: the query alone over exactly the keys it sees (decode: split-K items + merge pass).
    const auto a1 = with_threads(1, qrow, {p}, size_t(p) + 1);
    EXPECT_TRUE(accel::test::bit_equal(a1, with_threads(2, qrow, {p}, size_t(p) + 1)));
    // B: the same query as row 5 of a 9-row batch over all n keys (later keys masked; per-row
    // items that merge their own chunks).
    const std::vector<int32_t> qpos{0, 100, 2000, 700, 5, p, 2099, 64, 1};
    std::vector<float> q = accel::test::random_normal(qpos.size() * qd, 6);
    std::copy(qrow.begin(), qrow.end(), q.begin() + 5 * qd);
    for (int threads : {1, 2}) {
      const auto out = with_threads(threads, q, qpos, n);
      EXPECT_TRUE(accel::test::bit_equal(
          std::vector<float>(out.begin() + 5 * qd, out.begin() + 6 * qd), a1))
          << threads << " threads";
    }
  }
}

// The vpdpbusd path (where the CPU has AVX-512 VBMI + VNNI) and the exact-float path compute the
// same integer group dots and the same fold: the outputs must be the same bits, for 1 to 8 heads
// per kv head, several head_dims and both the split-K and per-row paths. On a CPU without
// VBMI/VNNI both runs take the float path and the test holds trivially.
TEST(AttentionQuant, VnniAndFloatScorePathsAreBitIdentical) {
  for (const auto& [heads, kv_heads, D, n] :
       {std::tuple{8, 1, 128, 700}, std::tuple{12, 4, 64, 1500}, std::tuple{5, 5, 32, 90},
        std::tuple{6, 2, 256, 300}, std::tuple{7, 1, 96, 530}}) {
    const AttentionShape s{heads, kv_heads, D, 1.f / std::sqrt(float(D))};
    const QuantCache c = make_cache(KVQuant::Int4, kv_heads, D, size_t(n), uint64_t(D + n));
    const auto kpos = iota_pos(size_t(n));
    for (std::vector<int32_t> qpos :
         {std::vector<int32_t>{n - 1}, std::vector<int32_t>{0, 40, n - 1, 30, 17, 5, 64, 9}}) {
      const auto q = accel::test::random_normal(qpos.size() * size_t(heads) * D, uint64_t(n));
      const size_t qd = size_t(heads) * D;
      std::vector<float> a(qpos.size() * qd), b(a.size());
      accel::attention_quant(s, q.data(), qd, qpos.data(), qpos.size(), c.view(), kpos.data(), c.n,
                             a.data(), qd);
      accel::attention_quant(s, q.data(), qd, qpos.data(), qpos.size(), c.view(), kpos.data(), c.n,
                             b.data(), qd, accel::kSplitKChunk, accel::QuantScorePath::Float);
      EXPECT_TRUE(accel::test::bit_equal(a, b))
          << "heads " << heads << " kv " << kv_heads << " D " << D << " n_q " << qpos.size();
    }
  }
}

TEST(AttentionQuant, FullyMaskedChunksAreSkippedAndAQueryThatSeesNothingGetsZeros) {
  const AttentionShape s{4, 2, 64, 0.125f};
  const size_t n = 1600;
  const QuantCache c = make_cache(KVQuant::Int4, 2, 64, n, 41);
  // Positions of a sparse prefill: the first chunk (512 keys) holds positions after the query.
  std::vector<int32_t> kpos(n);
  for (size_t j = 0; j < n; ++j) kpos[j] = j < 512 ? int32_t(5000 + j) : int32_t(j);
  const std::vector<int32_t> qpos{1599, 10};  // the second query sees no key at all
  const auto q = accel::test::random_normal(2 * 4 * 64, 7);
  const auto got = run(s, q, qpos, c, kpos);
  const Errors e = compare_to_reference(s, q, qpos, c, kpos, got);
  EXPECT_LE(e.max_abs, 1e-4 * e.vmax);
  for (size_t i = 4 * 64; i < got.size(); ++i) ASSERT_EQ(got[i], 0.f) << i;
}

TEST(AttentionQuant, ScaleOneAttentionStillMatchesTheReference) {
  // Gemma's attention scale 1.0: scores 8x larger than 1/sqrt(64), peaked softmax.
  const AttentionShape s{4, 1, 64, 1.f};
  const QuantCache c = make_cache(KVQuant::Int4, 1, 64, 900, 51, 0.5f);
  const auto kpos = iota_pos(900);
  const std::vector<int32_t> qpos{899};
  const auto q = accel::test::random_normal(4 * 64, 8, 0.5f);
  const auto got = run(s, q, qpos, c, kpos);
  const Errors e = compare_to_reference(s, q, qpos, c, kpos, got);
  EXPECT_LE(e.max_abs, 1e-4 * e.vmax);
}

// Sliding windows (edge inside a key block, a chunk, and wider than the cache) and gpt-oss sinks,
// in both the per-row (many rows) and split-K (one row) paths, against the reference on the
// rounded query with the tolerance of MatchesTheDoubleReference... (the sink adds one exp2 and one
// term to l: well inside it). Then invariance: a windowed query alone equals the same query in a
// batch, on 1 and 2 threads, and with every out-of-window key moved to a masked position.
TEST(AttentionQuant, SlidingWindowAndSinksMatchTheReferenceAndStayBatchInvariant) {
  const auto sinks = accel::test::random_normal(12, 9, 2.f);
  for (KVQuant f : {KVQuant::Int4, KVQuant::Q8_0})
    for (int window : {1, 45, 128, 700, 5000})
      for (bool with_sinks : {false, true}) {
        SCOPED_TRACE(::testing::Message() << "window " << window << " sinks " << with_sinks);
        AttentionShape s{12, 4, 64, 0.125f};
        s.window = window;
        s.sinks = with_sinks ? sinks.data() : nullptr;
        const size_t n = 1500;
        const QuantCache c = make_cache(f, 4, 64, n, 61 + uint64_t(window));
        const auto kpos = iota_pos(n);
        const std::vector<int32_t> many{0, 31, 32, 511, 512, 700, 1000, 1499};
        const auto q = accel::test::random_normal(many.size() * 12 * 64, 10);
        const auto got = run(s, q, many, c, kpos);
        const Errors e = compare_to_reference(s, q, many, c, kpos, got);
        EXPECT_LE(e.max_abs, 1e-4 * e.vmax);
        for (size_t i = 0; i < many.size(); ++i) {
          const std::vector<float> qi(q.begin() + i * 768, q.begin() + (i + 1) * 768);
          const std::vector<float> want(got.begin() + i * 768, got.begin() + (i + 1) * 768);
          std::vector<int32_t> masked = kpos;
          for (auto& x : masked)
            if (!accel::attention_visible(x, many[i], window)) x = 1 << 30;
          for (int threads : {1, 2}) {
            const int t0 = accel::num_threads();
            accel::set_num_threads(threads);
            const auto alone = run(s, qi, {many[i]}, c, kpos);
            const auto alone_masked = run(s, qi, {many[i]}, c, masked);
            accel::set_num_threads(t0);
            ASSERT_TRUE(accel::test::bit_equal(alone, want)) << "row " << i << " " << threads;
            ASSERT_TRUE(accel::test::bit_equal(alone_masked, want)) << "row " << i;
          }
        }
      }
}

TEST(AttentionQuant, RefusesSoftCapping) {
  AttentionShape s{4, 1, 64, 0.125f};
  s.softcap = 30.f;
  const QuantCache c = make_cache(KVQuant::Int4, 1, 64, 40, 3);
  const auto q = accel::test::random_normal(4 * 64, 8);
  EXPECT_DEATH(run(s, q, {39}, c, iota_pos(40)), "soft-cap");
}

// quantize_query_group against a plain transcription of its rule (header): amax, codes by
// round-half-to-even of x * (127 / amax), step amax / 127; zeros, exact ties, a lone large value,
// and NaN / infinity (zero codes, NaN step).
TEST(QuantizeQueryGroup, EqualsAPlainTranscriptionOfTheRuleBitForBit) {
  std::vector<std::vector<float>> groups;
  groups.push_back(std::vector<float>(32, 0.f));
  std::vector<float> ties(32);
  for (int e = 0; e < 32; ++e) ties[size_t(e)] = float(e - 16) + 0.5f;  // amax 16.5
  ties[0] = 127.f;  // amax 127: id = 1, so x.5 values are exact ties
  groups.push_back(ties);
  std::vector<float> lone(32, 1e-3f);
  lone[9] = -300.f;
  groups.push_back(lone);
  for (float bad : {NAN, INFINITY, -INFINITY}) {
    std::vector<float> g(32, 1.f);
    g[3] = bad;
    groups.push_back(g);
  }
  for (uint64_t seed = 0; seed < 200; ++seed)
    groups.push_back(accel::test::random_normal(32, 100 + seed, float(seed % 7) + 0.25f));
  for (size_t i = 0; i < groups.size(); ++i) {
    const auto& x = groups[i];
    float amax = 0;
    bool finite = true;
    for (float v : x) amax = std::max(amax, std::fabs(v)), finite = finite && std::isfinite(v);
    const float up = amax < 0x1p-100f ? 0x1p100f : 1.f;  // the documented pre-scaling
    const float id = finite && amax > 0 ? 127.f / (amax * up) : 0.f;
    int8_t got[32];
    const float step = accel::quantize_query_group(x.data(), got);
    for (int e = 0; e < 32; ++e) {
      const float t = finite ? x[size_t(e)] * up * id : 0.f;  // nearest, ties to even, by hand:
      float r = std::floor(t);
      const float frac = t - r;
      if (frac > 0.5f || (frac == 0.5f && std::fmod(r, 2.f) != 0.f)) r += 1.f;
      ASSERT_EQ(int(got[e]), int(std::max(-127.f, std::min(127.f, r))))
          << "group " << i << " element " << e;
    }
    if (finite)
      EXPECT_EQ(step, amax / 127.f) << "group " << i;
    else
      EXPECT_TRUE(std::isnan(step)) << "group " << i;
  }
  // amax below 2^-100 (here subnormal): 127 / amax would overflow; the group is scaled first.
  std::vector<float> tiny(32, 0.f);
  tiny[0] = 1e-38f;
  tiny[1] = -1e-38f / 4;  // code -127/4 = -31.75 -> -32
  int8_t t8[32];
  const float tiny_step = accel::quantize_query_group(tiny.data(), t8);
  EXPECT_EQ(int(t8[0]), 127);
  EXPECT_EQ(int(t8[1]), -32);
  for (int e = 2; e < 32; ++e) EXPECT_EQ(int(t8[e]), 0) << e;
  EXPECT_EQ(tiny_step, 1e-38f / 127.f);
  int8_t tie[32];
  accel::quantize_query_group(ties.data(), tie);
  EXPECT_EQ(tie[1], -14);  // -14.5 -> -14 (even)
  EXPECT_EQ(tie[2], -14);  // -13.5 -> -14 (even)
}

TEST(DequantizeKVRows, EqualsTheScalarFormatDefinitionBitForBit) {
  for (KVQuant f : {KVQuant::Int4, KVQuant::Q8_0})
    for (int D : {32, 64, 128, 256}) {
      const QuantCache c = make_cache(f, 3, D, 70, uint64_t(D));
      const size_t kv_dim = size_t(3) * D;
      std::vector<float> k(60 * kv_dim), v(60 * kv_dim);
      accel::dequantize_kv_rows(c.view(), 3, D, 10, 60, k.data(), v.data(), kv_dim);
      EXPECT_TRUE(accel::test::bit_equal(
          k, std::vector<float>(c.kf.begin() + 10 * kv_dim, c.kf.begin() + 70 * kv_dim)));
      EXPECT_TRUE(accel::test::bit_equal(
          v, std::vector<float>(c.vf.begin() + 10 * kv_dim, c.vf.begin() + 70 * kv_dim)));
    }
}

// An int4 value block's slots past the cache's last key are read by both P.V paths (whole quad
// lines) yet must weigh nothing: filled with code 15 everywhere and NaN scales and infinite zeros,
// they leave every output bit as zero-filled slots do, for exact and 8-bit P.V, split-K and not.
TEST(AttentionQuant, Int4ValueBlockSlotsPastTheLastKeyChangeNothing) {
  constexpr int D = 64;
  const AttentionShape s{6, 2, D, 0.125f};
  // Keys 42..63 of block 1 unused: quad 2 of the block holds two used keys and two unused.
  QuantCache c = make_cache(KVQuant::Int4, 2, D, 42, 61);
  const auto q = accel::test::random_normal(2 * 6 * D, 62);
  const std::vector<int32_t> qpos{41, 20};
  const auto kpos = iota_pos(c.n);
  const size_t rec = accel::kv_quant_record_bytes(KVQuant::Int4, D);
  const size_t kbb = accel::kv_quant_kblock_bytes(KVQuant::Int4, D);
  std::vector<uint8_t> junk(rec, 0xff);
  for (int g = 0; g < D / 32; ++g) {
    const uint16_t nan = 0x7e00, inf = 0x7c00;
    std::memcpy(&junk[size_t(D / 2 + 2 * g)], &nan, 2);
    std::memcpy(&junk[size_t(D / 2 + 2 * (D / 32 + g))], &inf, 2);
  }
  for (auto pv : {accel::QuantPV::Exact, accel::QuantPV::Int8})
    for (size_t chunk : {size_t(32), accel::kSplitKChunk}) {
      const size_t qd = size_t(s.n_heads) * D;
      auto attend = [&](const QuantCache& cc) {
        std::vector<float> out(qpos.size() * qd);
        accel::attention_quant(s, q.data(), qd, qpos.data(), qpos.size(), cc.view(), kpos.data(),
                               cc.n, out.data(), qd, chunk, accel::QuantScorePath::Auto, pv);
        return out;
      };
      const auto clean = attend(c);
      QuantCache dirty = c;
      for (int g = 0; g < 2; ++g)
        for (int t = 42 % 32; t < 32; ++t)
          accel::vblock_put(KVQuant::Int4, D, junk.data(),
                            &dirty.vblk[size_t(g) * dirty.vhead() + kbb], t);
      const auto out = attend(dirty);
      for (float x : out) ASSERT_TRUE(std::isfinite(x));
      EXPECT_TRUE(std::equal(out.begin(), out.end(), clean.begin(),
                             [](float a, float b) { return std::memcmp(&a, &b, 4) == 0; }))
          << "pv " << int(pv) << " chunk " << chunk;
    }
}

}  // namespace
