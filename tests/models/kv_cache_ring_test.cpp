// KVCache with sliding-window layers (the ring of kv_cache.h), driven directly with seeded rows:
// agreement with the double reference under the window mask, bit-identical results across chunk
// sizes (1 / 13 / 64 / 300, pieces that wrap the ring) and thread counts for every ring-capable
// type, KIVI rings against linear KIVI caches and f32, exact rollback (verify batch, trim,
// re-decode) including rollbacks that cross the window edge, refusal of a rollback the ring cannot
// honour, and memory that does not grow with the context. Tests only.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <vector>

#include "kernels/attention.h"
#include "kernels/threading.h"
#include "models/kv_cache.h"
#include "tests/support/test_support.h"

namespace accel {
namespace {

constexpr int kHeads = 4, kKVHeads = 2, kD = 32, kWindow = 100;
constexpr size_t kRollback = 16;  // ring: round_up(100 + 16, 64) = 128 slots
constexpr size_t kQDim = size_t(kHeads) * kD, kKVDim = size_t(kKVHeads) * kD;

// Token t's rows are fixed functions of t (and the layer), whatever the batching.
struct Rows {
  std::vector<float> q, k, v;  // [n][dim]
  std::vector<int32_t> pos;
};
Rows make_rows(size_t n, uint64_t seed, int32_t first_pos = 0, int32_t stride = 1) {
  Rows r;
  r.q = test::random_normal(n * kQDim, seed, 2.f);
  r.k = test::random_normal(n * kKVDim, seed + 1);
  r.v = test::random_normal(n * kKVDim, seed + 2);
  for (size_t t = 0; t < n; ++t) r.pos.push_back(first_pos + int32_t(t) * stride);
  return r;
}

double max_abs(const std::vector<float>& x) {
  double m = 0;
  for (float v : x) m = std::max(m, double(std::fabs(v)));
  return m;
}

// Layer 0 slides (window 100), layer 1 is full; both read the same rows (different shapes of
// AttentionShape only). Returns out[layer][token][kQDim].
using Outs = std::vector<std::vector<float>>;
std::vector<KVLayerShape> two_kinds() {
  return {{kKVHeads, kD, kWindow}, {kKVHeads, kD, 0}};
}
AttentionShape shape_of(int layer) {
  AttentionShape s{kHeads, kKVHeads, kD, float(1.0 / std::sqrt(double(kD)))};
  s.window = layer == 0 ? kWindow : 0;
  return s;
}

void run_batch(KVCache& c, const Rows& r, size_t t0, size_t n, Outs& out) {
  c.stage(r.pos.data() + t0, n);
  for (int layer = 0; layer < 2; ++layer)
    c.attend(layer, shape_of(layer), r.q.data() + t0 * kQDim, kQDim, r.pos.data() + t0,
             r.k.data() + t0 * kKVDim, r.v.data() + t0 * kKVDim, kKVDim, n,
             out[size_t(layer)].data() + t0 * kQDim, kQDim);
  c.commit(n);
}

Outs run_chunked(KVDType t, const Rows& r, size_t chunk) {
  KVCache c(two_kinds(), t, kRollback);
  const size_t n = r.pos.size();
  Outs out(2, std::vector<float>(n * kQDim, NAN));
  for (size_t t0 = 0; t0 < n; t0 += chunk) run_batch(c, r, t0, std::min(chunk, n - t0), out);
  return out;
}

TEST(KVCacheRing, SlotsAndRollbackBound) {
  KVCache c(two_kinds(), KVDType::F32, kRollback);
  EXPECT_EQ(c.ring_slots(), 128u);
  EXPECT_EQ(c.max_rollback(), 28u);  // R - window: at least the requested 16
  EXPECT_EQ(c.window(0), kWindow);
  EXPECT_EQ(c.window(1), 0);
  EXPECT_THROW(KVCache(two_kinds(), KVDType::F32, 0), std::invalid_argument);
  // KIVI keeps 31 slots of slack (kv_cache.h): round_up(100 + 16 + 31, 64) = 192, reach 161.
  const KVCache kivi(two_kinds(), KVDType::Kivi4, kRollback);
  EXPECT_EQ(kivi.ring_slots(), 192u);
  EXPECT_EQ(kivi.max_rollback(), 61u);
  EXPECT_THROW(KVCache({{2, 32, 100}, {2, 32, 50}}, KVDType::F32, kRollback),
               std::invalid_argument);
  c.reserve(8);
  EXPECT_THROW(c.f32_keys(0), std::logic_error);
  EXPECT_NO_THROW(c.f32_keys(1));
}

// The sliding layer's output for every token against attention_reference over every key up to it
// with the window mask (the full layer against the plain causal reference). Tolerance: the f32
// kernel's error for <= 600 keys of D = 32 with scores of a few units is ~1e-6 max|v| (see
// tests/kernels/attention_test.cpp's bound); 2e-5 max|v| leaves a margin of ~20 and is far below
// the O(1 / window) = 1e-2 change one key too many or too few at the window edge makes.
TEST(KVCacheRing, MatchesTheWindowedReferenceOverTheWholeSequence) {
  const size_t n = 600;
  const Rows r = make_rows(n, 5);
  const Outs got = run_chunked(KVDType::F32, r, 64);
  const double vmax = max_abs(r.v);
  for (int layer = 0; layer < 2; ++layer) {
    std::vector<double> want(n * kQDim);
    attention_reference(shape_of(layer), r.q.data(), kQDim, r.pos.data(), n, r.k.data(), r.v.data(),
                        kKVDim, r.pos.data(), n, want.data(), kQDim);
    double worst = 0;
    for (size_t i = 0; i < want.size(); ++i)
      worst = std::max(worst, std::fabs(double(got[size_t(layer)][i]) - want[i]));
    EXPECT_LE(worst, 2e-5 * vmax) << "layer " << layer;
  }
}

// Gapped positions (a sparse prefill keeps tokens at their original positions): the window is in
// positions, so fewer entries than the window can be visible; still exact against the reference.
TEST(KVCacheRing, GappedPositionsFollowTheWindowInPositions) {
  const size_t n = 300;
  const Rows r = make_rows(n, 9, 3, 3);  // positions 3, 6, 9, ...: a window holds 33-34 entries
  const Outs got = run_chunked(KVDType::F32, r, 13);
  std::vector<double> want(n * kQDim);
  attention_reference(shape_of(0), r.q.data(), kQDim, r.pos.data(), n, r.k.data(), r.v.data(),
                      kKVDim, r.pos.data(), n, want.data(), kQDim);
  const double vmax = max_abs(r.v);
  double worst = 0;
  for (size_t i = 0; i < want.size(); ++i)
    worst = std::max(worst, std::fabs(double(got[0][i]) - want[i]));
  EXPECT_LE(worst, 2e-5 * vmax);  // as above
}

// `good` with tokens [from, from + n) taken from `bad` (rejected draft tokens: other rows, the
// same positions).
Rows with_rejected(const Rows& good, const Rows& bad, size_t from, size_t n) {
  Rows mixed = good;
  const auto at = [](size_t t, size_t dim) { return std::ptrdiff_t(t * dim); };
  std::copy_n(bad.q.begin() + at(from, kQDim), n * kQDim, mixed.q.begin() + at(from, kQDim));
  std::copy_n(bad.k.begin() + at(from, kKVDim), n * kKVDim, mixed.k.begin() + at(from, kKVDim));
  std::copy_n(bad.v.begin() + at(from, kKVDim), n * kKVDim, mixed.v.begin() + at(from, kKVDim));
  return mixed;
}

class RingTypes : public ::testing::TestWithParam<KVDType> {};

// Chunk sizes 1 / 13 / 64 / 300 (a 300-token batch is written in pieces that wrap the 128-slot
// ring) and 1 vs 2 threads give the same bits on both layer kinds.
TEST_P(RingTypes, BitIdenticalAcrossChunkSizesAndThreads) {
  const Rows r = make_rows(700, 11);
  const Outs ref = run_chunked(GetParam(), r, 1);
  for (size_t chunk : {size_t(13), size_t(64), size_t(300)}) {
    const Outs o = run_chunked(GetParam(), r, chunk);
    for (int layer = 0; layer < 2; ++layer)
      EXPECT_TRUE(test::bit_equal(o[size_t(layer)], ref[size_t(layer)]))
          << "chunk " << chunk << " layer " << layer;
  }
  const int t0 = num_threads();
  set_num_threads(1);
  const Outs one = run_chunked(GetParam(), r, 64);
  set_num_threads(t0);
  for (int layer = 0; layer < 2; ++layer)
    EXPECT_TRUE(test::bit_equal(one[size_t(layer)], ref[size_t(layer)])) << "1 thread";
}

// PLD's pattern: a verify batch of k + 1 tokens, trim of the rejected ones, then the accepted
// continuation decoded; the results equal decoding the continuation token by token, for rollbacks
// of 1 .. 17 entries (up to the requested 16 and beyond, inside max_rollback), at cache sizes that
// put the window edge inside the rolled-back stretch and the ring's wrap point inside the batch.
TEST_P(RingTypes, VerifyTrimAndRedecodeEqualsPlainDecode) {
  const size_t prefix = 250;
  const Rows good = make_rows(prefix + 20, 21);
  Rows bad = make_rows(prefix + 20, 99);  // rejected draft tokens: other rows, same positions
  bad.pos = good.pos;
  Outs plain(2, std::vector<float>((prefix + 20) * kQDim));
  {
    KVCache c(two_kinds(), GetParam(), kRollback);
    for (size_t t = 0; t < prefix + 20; ++t) run_batch(c, good, t, 1, plain);
  }
  for (size_t reject : {size_t(1), size_t(5), size_t(16), size_t(17)}) {
    KVCache c(two_kinds(), GetParam(), kRollback);
    Outs o(2, std::vector<float>((prefix + 20) * kQDim));
    for (size_t t = 0; t < prefix; ++t) run_batch(c, good, t, 1, o);
    // Verify: the accepted token then `reject` rejected ones, as one batch.
    const Rows mixed = with_rejected(good, bad, prefix + 1, reject);
    run_batch(c, mixed, prefix, 1 + reject, o);
    c.trim(reject);
    ASSERT_EQ(c.size(), prefix + 1);
    for (size_t t = prefix + 1; t < prefix + 20; ++t) run_batch(c, good, t, 1, o);
    for (int layer = 0; layer < 2; ++layer)
      EXPECT_TRUE(test::bit_equal(o[size_t(layer)], plain[size_t(layer)]))
          << "reject " << reject << " layer " << layer;
  }
}

INSTANTIATE_TEST_SUITE_P(Types, RingTypes,
                         ::testing::Values(KVDType::F32, KVDType::F16, KVDType::Int4Uniform,
                                           KVDType::Q8_0Uniform),
                         [](const auto& info) {
                           std::string s = kv_dtype_name(info.param);
                           std::replace(s.begin(), s.end(), '-', '_');
                           return s;
                         });

// The seed-placement quantized types on the ring (a multi-token piece attends over the history
// dequantized and its own rows in f32; a decode step through the fused kernel). The first piece
// (29 tokens: nothing stored before it, every other slot empty and masked) gives the f32 ring's
// bits. After it, outputs differ from f32 by a quantization-sized amount. Values are N(0, 1): an
// int4 step is ~1/15 of a group's range (~6), <= 0.2 per value; a key's rounding moves a score
// (q ~ N(0, 4), 32 dims, scale 0.18) by up to ~0.2, the softmax weights by ~20%: outputs by up to
// ~0.5. 1.0 (int4) and 0.15 (q8_0, steps 16x finer) catch gross errors (garbage or zero rows, a
// broken dequantization); the exactness of the ring itself is RingTypes' bit-for-bit tests.
TEST(KVCacheRing, SeedPlacementTypesStayCloseToF32OnBothKinds) {
  const Rows r = make_rows(400, 51);
  for (size_t chunk : {size_t(1), size_t(64)}) {
    const Outs ref = run_chunked(KVDType::F32, r, chunk);
    for (auto [t, tol] : {std::pair{KVDType::Int4, 1.0}, std::pair{KVDType::Q8_0, 0.15}}) {
      SCOPED_TRACE(kv_dtype_name(t) + " chunk " + std::to_string(chunk));
      const Outs o = run_chunked(t, r, chunk);
      for (int layer = 0; layer < 2; ++layer) {
        const std::vector<double> want(ref[size_t(layer)].begin(), ref[size_t(layer)].end());
        EXPECT_TRUE(test::near_all(o[size_t(layer)], want, tol, 0)) << "layer " << layer;
        if (chunk == 64) {
          const std::vector<float> a(o[size_t(layer)].begin(),
                                     o[size_t(layer)].begin() + 29 * kQDim);
          const std::vector<float> b(ref[size_t(layer)].begin(),
                                     ref[size_t(layer)].begin() + 29 * kQDim);
          EXPECT_TRUE(test::bit_equal(a, b)) << "first piece, layer " << layer;
        }
      }
      EXPECT_FALSE(test::bit_equal(o[0], ref[0]))
          << "quantization should show after the first piece";
    }
  }
}

// The same rows through a linear cache (every layer full; layer 0 still attends with the window).
Outs run_chunked_linear(KVDType t, const Rows& r, size_t chunk) {
  KVCache c(2, kKVHeads, kD, t);
  const size_t n = r.pos.size();
  Outs out(2, std::vector<float>(n * kQDim, NAN));
  for (size_t t0 = 0; t0 < n; t0 += chunk) run_batch(c, r, t0, std::min(chunk, n - t0), out);
  return out;
}

// KIVI on a ring against KIVI in a linear cache with the same window mask. Slot blocks line up
// with entry blocks (R is a multiple of 64), so both seal the same 32 entries into the same codes
// and reopen alike; a query sees the same keys with the same quantized values, visited in another
// block order (the ring lists its blocks oldest slot first). So the outputs agree to float
// rounding: for <= 600 keys of D = 32 that is ~1e-6 max|v| (as above); 2e-5 max|v| is far below
// what one wrongly kept or dropped key (~1e-2, O(1 / window)) or one block's codes read from the
// wrong slots would change. Chunks 1 and 16 run the fused kernel, 32 the dequantizing path; all
// divide the 192 slots, so no batch is split at the ring's end (a split batch attends piece by
// piece, kv_storage_kivi.h, and is checked against f32 below).
TEST(KVCacheRing, KiviRingEqualsLinearKiviUnderTheWindow) {
  const Rows r = make_rows(700, 61);
  const double vmax = max_abs(r.v);
  for (KVDType t : {KVDType::Kivi4, KVDType::Kivi2})
    for (size_t chunk : {size_t(1), size_t(16), size_t(32)}) {
      SCOPED_TRACE(kv_dtype_name(t) + " chunk " + std::to_string(chunk));
      const Outs ring = run_chunked(t, r, chunk);
      const Outs linear = run_chunked_linear(t, r, chunk);
      for (int layer = 0; layer < 2; ++layer) {
        const std::vector<double> want(linear[size_t(layer)].begin(), linear[size_t(layer)].end());
        EXPECT_TRUE(test::near_all(ring[size_t(layer)], want, 2e-5 * vmax, 0)) << "layer " << layer;
      }
      EXPECT_FALSE(test::bit_equal(ring[0], run_chunked(KVDType::F32, r, chunk)[0]));
    }
}

// KIVI rings stay close to the f32 ring on both kinds, and kivi2 further than kivi4. Values are
// N(0, 1) and a 4-bit step is a group's range / 15 (~0.4 for keys over 32 tokens, ~0.3 for values
// over 32 channels): outputs move by up to ~0.5 (as int4 above), 2-bit ones up to ~5x more. 1.0 and
// 2.5 catch gross errors (a block from the wrong slots, a stale residual); the mean error orders
// the two widths. Chunks 13, 64 and 300 are split into pieces (at the ring's end; 64 and 300 also
// by the 62-entry piece limit).
TEST(KVCacheRing, KiviRingsStayCloseToF32OnBothKinds) {
  const Rows r = make_rows(500, 67);
  for (size_t chunk : {size_t(1), size_t(13), size_t(64), size_t(300)}) {
    const Outs ref = run_chunked(KVDType::F32, r, chunk);
    double mean[2] = {0, 0};
    int i = 0;
    for (auto [t, tol] : {std::pair{KVDType::Kivi4, 1.0}, std::pair{KVDType::Kivi2, 2.5}}) {
      SCOPED_TRACE(kv_dtype_name(t) + " chunk " + std::to_string(chunk));
      const Outs o = run_chunked(t, r, chunk);
      for (int layer = 0; layer < 2; ++layer) {
        const std::vector<double> want(ref[size_t(layer)].begin(), ref[size_t(layer)].end());
        EXPECT_TRUE(test::near_all(o[size_t(layer)], want, tol, 0)) << "layer " << layer;
      }
      for (size_t k = 0; k < o[0].size(); ++k) mean[i] += std::fabs(o[0][k] - ref[0][k]);
      ++i;
    }
    EXPECT_LT(mean[0], mean[1]) << "kivi4 should be closer to f32 than kivi2";
  }
}

// PLD's pattern on a KIVI ring: verify, trim of 1 .. 61 rejected rows (up to max_rollback, which
// crosses block boundaries and the window edge), then decode; equal to a linear KIVI cache doing
// the same within float rounding (as above: same codes, same reopened blocks). After a long batch,
// a rollback two past max_rollback is refused (one past is still within reach: the bound is
// stated for any batch, and a long one leaves one more entry than the worst case).
TEST(KVCacheRing, KiviRingRollsBackAsTheLinearCacheDoes) {
  const size_t prefix = 250;
  const Rows good = make_rows(prefix + 80, 71);
  const Rows bad = make_rows(prefix + 80, 73);
  const double vmax = std::max(max_abs(good.v), max_abs(bad.v));
  for (size_t reject : {size_t(1), size_t(17), size_t(40), size_t(61)}) {
    SCOPED_TRACE("reject " + std::to_string(reject));
    KVCache ring(two_kinds(), KVDType::Kivi4, kRollback);
    KVCache linear(2, kKVHeads, kD, KVDType::Kivi4);
    Outs o_ring(2, std::vector<float>((prefix + 80) * kQDim));
    Outs o_lin = o_ring;
    const Rows mixed = with_rejected(good, bad, prefix + 1, reject);
    for (auto [c, o] : {std::pair{&ring, &o_ring}, std::pair{&linear, &o_lin}}) {
      // Batches that never cross the ring's end (224 = 7 x 32, then slots 32..57).
      for (size_t t = 0; t < prefix; t += 32)
        run_batch(*c, good, t, std::min<size_t>(32, prefix - t), *o);
      run_batch(*c, mixed, prefix, 1 + reject, *o);
      c->trim(reject);
      for (size_t t = prefix + 1; t < prefix + 80; ++t) run_batch(*c, good, t, 1, *o);
    }
    for (int layer = 0; layer < 2; ++layer) {
      const std::vector<double> want(o_lin[size_t(layer)].begin(), o_lin[size_t(layer)].end());
      EXPECT_TRUE(test::near_all(o_ring[size_t(layer)], want, 2e-5 * vmax, 0)) << layer;
    }
  }
  KVCache c(two_kinds(), KVDType::Kivi4, kRollback);
  Outs o(2, std::vector<float>(400 * kQDim));
  run_batch(c, good, 0, 300, o);
  EXPECT_THROW(c.trim(c.max_rollback() + 2), std::logic_error);
  EXPECT_NO_THROW(c.trim(c.max_rollback()));
}

// A rollback past what the ring has overwritten is refused; the largest guaranteed one works.
TEST(KVCacheRing, TrimBeyondTheRingIsRefused) {
  const Rows r = make_rows(400, 31);
  KVCache c(two_kinds(), KVDType::F32, kRollback);
  Outs o(2, std::vector<float>(400 * kQDim));
  run_batch(c, r, 0, 200, o);
  run_batch(c, r, 200, 100, o);
  // 100 entries written since entry 200: the next token at 200 would need entries 101..199,
  // whose slots entries 229..299 overwrote.
  EXPECT_THROW(c.trim(100), std::logic_error);
  EXPECT_EQ(c.size(), 300u);
  EXPECT_NO_THROW(c.trim(c.max_rollback()));
  EXPECT_EQ(c.size(), 300u - c.max_rollback());
  EXPECT_NO_THROW(c.trim(1000));  // everything: nothing left to need
  EXPECT_EQ(c.size(), 0u);
}

// Positions that do not increase are refused when layers slide (the ring's bound relies on it).
TEST(KVCacheRing, NonIncreasingPositionsAreRefused) {
  KVCache c(two_kinds(), KVDType::F32, kRollback);
  const std::vector<int32_t> pos{0, 1, 1};
  EXPECT_THROW(c.stage(pos.data(), 3), std::invalid_argument);
}

// Memory: a cache whose layers all slide holds the same K/V bytes after 4K and after 32K tokens
// (min(n, window) entries per layer, what kvcalc counts), and its ring never grows; the only
// per-token cost left is the int32 position of each entry.
TEST(KVCacheRing, SlidingLayersMemoryIsIndependentOfContextLength) {
  const std::vector<KVLayerShape> layers(3, KVLayerShape{kKVHeads, kD, 128});
  const size_t row = 2 * kKVDim * sizeof(float);
  auto after = [&](size_t n_tokens) {
    KVCache c(layers, KVDType::F32, 8);
    const Rows r = make_rows(512, 41);
    std::vector<float> out(512 * kQDim);
    AttentionShape s{kHeads, kKVHeads, kD, 0.17f};
    s.window = 128;
    for (size_t t0 = 0; t0 < n_tokens; t0 += 512) {
      std::vector<int32_t> pos(512);
      std::iota(pos.begin(), pos.end(), int32_t(t0));
      c.stage(pos.data(), 512);
      for (int l = 0; l < 3; ++l)
        c.attend(l, s, r.q.data(), kQDim, pos.data(), r.k.data(), r.v.data(), kKVDim, 512,
                 out.data(), kQDim);
      c.commit(512);
    }
    EXPECT_EQ(c.ring_slots(), 192u);
    return std::pair{c.bytes() - c.size() * sizeof(int32_t),
                     c.allocated_bytes() - c.capacity() * sizeof(int32_t)};
  };
  const auto [b4, a4] = after(4096);
  const auto [b32, a32] = after(32768);
  EXPECT_EQ(b4, 3 * 128 * row);
  EXPECT_EQ(b32, b4);
  EXPECT_EQ(a32, a4);
  EXPECT_EQ(a4, 192 * (3 * row + sizeof(int32_t)));
}

}  // namespace
}  // namespace accel
