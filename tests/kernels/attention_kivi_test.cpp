// Tests of accel::attention_kivi (fused attention on KIVI key blocks and value records plus f32
// rows): agreement with a double-precision attention over the rows kivi_dequant gives, within a
// tolerance derived from the kernel's stated arithmetic, for kivi2 / kivi4, several head_dim and
// GQA group sizes, empty and partial full-precision tails; bit identity across thread counts;
// adversarial inputs; attention_kivi_dequantized (the prefill path) against the same reference,
// and its kivi_dequantize_view against the scalar dequantization bit for bit. Tests only.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/attention.h"
#include "kernels/attention_kivi.h"
#include "kernels/fp16.h"
#include "kernels/kv_quant_kivi.h"
#include "kernels/threading.h"
#include "tests/support/test_support.h"

namespace accel {
namespace {

constexpr double kU = 0x1p-24;  // float's unit roundoff

std::vector<int32_t> iota_positions(int32_t start, size_t n) {
  std::vector<int32_t> p(n);
  for (size_t j = 0; j < n; ++j) p[j] = start + int32_t(j);
  return p;
}

// A KIVI cache of n_quant quantized rows (head-major key blocks and value records, as the storage
// lays them out) followed by n_res residual and n_new f32 rows, plus every row as the reference
// sees it: quantized rows through kivi_dequantize_*, f32 rows as they are.
struct Cache {
  int bits, hkv, D;
  size_t n_quant, n_res, n_new;
  std::vector<uint8_t> k, v;      // [hkv][blocks][kbb], [hkv][n_quant][vrb]
  std::vector<float> res, fresh;  // f32 rows (k then v), [n][kv_dim] each
  std::vector<float> kref, vref;  // [n_kv][kv_dim]
  std::vector<float> raw_k;       // the unquantized keys (for the tolerance's key bound)
  size_t kv_dim() const { return size_t(hkv) * size_t(D); }
  size_t n_kv() const { return n_quant + n_res + n_new; }
  size_t kbb() const { return kivi_key_block_bytes(bits, D); }
  size_t vrb() const { return kivi_value_record_bytes(bits, D); }
  KiviKV view() const {
    KiviKV kv{bits, k.data(), v.data(), n_quant / 32 * kbb(), n_quant * vrb(), n_quant, 0, 0, {}};
    kv.rows[0] = {res.data(), res.data() + n_res * kv_dim(), kv_dim(), n_res};
    kv.rows[1] = {fresh.data(), fresh.data() + n_new * kv_dim(), kv_dim(), n_new};
    return kv;
  }
};

// Builds the cache from raw rows kraw / vraw [n_kv][kv_dim].
Cache make_cache(int bits, int hkv, int D, size_t n_quant, size_t n_res, size_t n_new,
                 const std::vector<float>& kraw, const std::vector<float>& vraw) {
  Cache c{bits, hkv, D, n_quant, n_res, n_new, {}, {}, {}, {}, kraw, vraw, kraw};
  const size_t kvd = c.kv_dim(), blocks = n_quant / 32;
  c.k.resize(size_t(hkv) * blocks * c.kbb());
  c.v.resize(size_t(hkv) * n_quant * c.vrb());
  for (size_t g = 0; g < size_t(hkv); ++g)
    for (size_t b = 0; b < blocks; ++b) {
      uint8_t* kb = &c.k[(g * blocks + b) * c.kbb()];
      kivi_quantize_key_block(&kraw[b * 32 * kvd + g * size_t(D)], kvd, D, bits, kb);
      kivi_dequantize_key_block(kb, D, bits, 32, &c.kref[b * 32 * kvd + g * size_t(D)], kvd);
      for (size_t t = b * 32; t < b * 32 + 32; ++t) {
        uint8_t* rec = &c.v[(g * n_quant + t) * c.vrb()];
        kivi_quantize_value(&vraw[t * kvd + g * size_t(D)], D, bits, rec);
        kivi_dequantize_value(rec, D, bits, &c.vref[t * kvd + g * size_t(D)]);
      }
    }
  auto rows = [&](size_t from, size_t n, std::vector<float>& out) {
    out.assign(kraw.begin() + long(from * kvd), kraw.begin() + long((from + n) * kvd));
    out.insert(out.end(), vraw.begin() + long(from * kvd), vraw.begin() + long((from + n) * kvd));
  };
  rows(n_quant, n_res, c.res);
  rows(n_quant + n_res, n_new, c.fresh);
  return c;
}

Cache random_cache(int bits, int hkv, int D, size_t n_quant, size_t n_res, size_t n_new,
                   uint64_t seed) {
  const size_t n = (n_quant + n_res + n_new) * size_t(hkv) * size_t(D);
  auto k = test::random_normal(n, seed), v = test::random_normal(n, seed + 1);
  // KIVI's premise: keys have outlier channels (a per-channel offset and scale).
  const auto off = test::random_normal(size_t(hkv) * size_t(D), seed + 2, 2.f);
  for (size_t j = 0; j < n; ++j) {
    const size_t ch = j % (size_t(hkv) * size_t(D));
    k[j] = k[j] * (ch % 7 == 0 ? 3.f : 1.f) + off[ch];
  }
  return make_cache(bits, hkv, D, n_quant, n_res, n_new, k, v);
}

// The derived bound on |fused - reference| for query row i, head h (see the comment at
// FusedMatchesTheDoubleReference).
double tolerance(const Cache& c, const AttentionShape& s, const float* q, size_t n_chunks) {
  double q1 = 0;
  for (int e = 0; e < s.head_dim; ++e) q1 += std::fabs(double(q[e]));
  double kmax = 0, vmax = 0;
  for (float x : c.kref) kmax = std::max(kmax, double(std::fabs(x)));
  for (float x : c.raw_k) kmax = std::max(kmax, double(std::fabs(x)));
  for (float x : c.vref) vmax = std::max(vmax, double(std::fabs(x)));
  const double E = double(s.scale) * (s.head_dim + 8) * kU * 3.0 * q1 * kmax;
  const double eta = E + 8 * kU;
  return vmax * (2.2 * eta + 2.0 * (560.0 + 2.0 * double(n_chunks)) * kU);
}

struct Attended {
  std::vector<float> q, out;
  std::vector<int32_t> q_pos, kv_pos;
};

// n_q query rows: the last n_q of the cache's positions (a causal batch of the new rows).
Attended run_fused(const Cache& c, const AttentionShape& s, size_t n_q, uint64_t seed,
                   float qscale = 1.f) {
  Attended r;
  r.q = test::random_normal(n_q * size_t(s.n_heads) * size_t(s.head_dim), seed, qscale);
  r.kv_pos = iota_positions(0, c.n_kv());
  r.q_pos.assign(r.kv_pos.end() - long(n_q), r.kv_pos.end());
  r.out.assign(r.q.size(), -1.f);
  const size_t ld = size_t(s.n_heads) * size_t(s.head_dim);
  attention_kivi(s, r.q.data(), ld, r.q_pos.data(), n_q, c.view(), r.kv_pos.data(), c.n_kv(),
                 r.out.data(), ld);
  return r;
}

std::vector<double> reference(const Cache& c, const AttentionShape& s, const Attended& r) {
  const size_t n_q = r.q_pos.size(), ld = size_t(s.n_heads) * size_t(s.head_dim);
  std::vector<float> k(c.kref), v(c.vref);
  const size_t kvd = c.kv_dim();
  for (size_t j = c.n_quant; j < c.n_kv(); ++j)  // the f32 tail, from the raw rows
    for (size_t e = 0; e < kvd; ++e) k[j * kvd + e] = c.raw_k[j * kvd + e];
  std::vector<double> out(n_q * ld);
  attention_reference(s, r.q.data(), ld, r.q_pos.data(), n_q, k.data(), v.data(), kvd,
                      r.kv_pos.data(), c.n_kv(), out.data(), ld);
  return out;
}

// Every (row, head) of a run within its own derived tolerance.
void expect_within_bound(const Cache& c, const AttentionShape& s, const Attended& r) {
  const auto want = reference(c, s, r);
  const size_t D = size_t(s.head_dim), n_chunks = (c.n_kv() + kKiviChunk - 1) / kKiviChunk;
  for (size_t i = 0; i < r.q_pos.size(); ++i)
    for (int h = 0; h < s.n_heads; ++h) {
      const size_t o = (i * size_t(s.n_heads) + size_t(h)) * D;
      const double tol = tolerance(c, s, &r.q[o], std::max<size_t>(1, n_chunks));
      EXPECT_TRUE(
          test::near_all(std::span(r.out).subspan(o, D), std::span(want).subspan(o, D), tol, 0))
          << "row " << i << " head " << h << " tol " << tol;
    }
}

AttentionShape shape_of(int hkv, int G, int D) {
  return {hkv * G, hkv, D, float(1.0 / std::sqrt(double(D)))};
}

// Tolerance. The kernel's score for a quantized key is sum_e fl(q_e s_e) c_e (one FMA chain) plus
// bias = sum_e q_e m_e; the reference's is q . k̂_f in double with k̂_f = fl(fl(c s) + m). Against
// exact arithmetic on k̂ = c s + m: the product q_e s_e is off by <= u |q_e s_e|, the D-term chains
// by <= D u sum |terms|, the final add by u; k̂_f is off by <= 2u (|c s| + |m|). With
// |c s| <= |k̂| + |m| and |m|, |k̂| <= K (the largest key magnitude, raw or dequantized), every term
// is <= 3 |q_e| K, so a score (times `scale`) is off by E <= scale (D + 8) u 3 ||q||_1 K, the +8
// also covering the multiply by scale * log2 e and the subtraction of the running max. A logit off
// by E moves its softmax weight by a relative <= e^E - 1; with exp2's ~2e-7 (< 4u) and the alpha
// rescales, each weight is off by a relative eta <= E + 8u, which moves the normalised output by
// <= 2 eta max|v| (taken as 2.2 eta for the second-order term). The sums add their own rounding: o
// is one FMA chain of at most 512 keys per chunk plus 16 block rescales and 2 operations per chunk
// merged, l likewise, each <= (560 + 2 chunks) u relative to sum p |v| <= l max|v|. Hence
//   |fused - reference| <= max|v| (2.2 eta + 2 (560 + 2 chunks) u).
// Values are kivi_dequant's exact floats on both sides. A misplaced code, scale, min, value tile
// row or a wrong key order moves outputs by O(0.1), far above the bound (~1e-3 at D = 128).
TEST(AttentionKivi, FusedMatchesTheDoubleReference) {
  for (int bits : {4, 2})
    for (int D : {32, 64, 128})
      for (int G : {1, 4, 8})
        for (auto [nq, nres] : {std::pair<size_t, size_t>{0, 5}, {96, 0}, {96, 17}, {544, 31}}) {
          SCOPED_TRACE("bits " + std::to_string(bits) + " D " + std::to_string(D) + " G " +
                       std::to_string(G) + " quantized " + std::to_string(nq) + " residual " +
                       std::to_string(nres));
          const int hkv = 2;
          const Cache c = random_cache(bits, hkv, D, nq, nres, 1, uint64_t(bits * 1000 + D + G));
          const AttentionShape s = shape_of(hkv, G, D);
          expect_within_bound(c, s, run_fused(c, s, 1, 7));
        }
}

// A batch of new rows: each query sees the cache and the new rows up to its own position.
TEST(AttentionKivi, BatchRowsAttendCausallyOverTheirOwnRows) {
  for (int bits : {4, 2}) {
    const Cache c = random_cache(bits, 2, 64, 64, 9, 6, 11);
    const AttentionShape s = shape_of(2, 4, 64);
    expect_within_bound(c, s, run_fused(c, s, 6, 12));
  }
}

// Sliding window and sinks (both handled by position and in the merge).
TEST(AttentionKivi, WindowAndSinksFollowTheReference) {
  const Cache c = random_cache(4, 1, 64, 576, 3, 1, 21);
  AttentionShape s = shape_of(1, 4, 64);
  s.window = 300;  // the first quantized blocks fall out of the window
  const std::vector<float> sinks{0.5f, -1.f, 3.f, 8.f};
  s.sinks = sinks.data();
  expect_within_bound(c, s, run_fused(c, s, 1, 22));
}

// The split into chunks, and which thread runs which, never changes a bit: 1, 2 and 3 threads,
// with one kv head (split-K at every count) and two (one item per kv head at 1 thread).
TEST(AttentionKivi, BitIdenticalAcrossThreadCounts) {
  const int t0 = num_threads();
  ScopedParallelBackoff no_backoff(false);
  for (int bits : {4, 2})
    for (int hkv : {1, 2}) {
      const Cache c = random_cache(bits, hkv, 64, 1536, 13, 1, 31 + uint64_t(hkv));
      const AttentionShape s = shape_of(hkv, 3, 64);
      std::vector<std::vector<float>> outs;
      for (int threads : {1, 2, 3}) {
        set_num_threads(threads);
        outs.push_back(run_fused(c, s, 1, 5).out);
      }
      set_num_threads(t0);
      EXPECT_TRUE(test::bit_equal(outs[0], outs[1]));
      EXPECT_TRUE(test::bit_equal(outs[0], outs[2]));
    }
  set_num_threads(t0);
}

// One key far above the rest takes all the weight: the output is its value row.
TEST(AttentionKivi, OneDominantKey) {
  const int D = 64, hkv = 1;
  const size_t n = 200;
  auto k = test::random_normal(n * D, 41, 0.1f), v = test::random_normal(n * D, 42);
  const auto q = test::random_normal(D, 43);
  for (int e = 0; e < D; ++e) k[77 * D + size_t(e)] = q[size_t(e)] > 0 ? 4.f : -4.f;
  for (int bits : {4, 2}) {
    const Cache c = make_cache(bits, hkv, D, 192, 7, 1, k, v);
    const AttentionShape s = shape_of(hkv, 1, D);
    Attended r;
    r.q = q;
    r.kv_pos = iota_positions(0, n);
    r.q_pos = {int32_t(n - 1)};
    r.out.assign(D, 0.f);
    attention_kivi(s, r.q.data(), D, r.q_pos.data(), 1, c.view(), r.kv_pos.data(), n, r.out.data(),
                   D);
    expect_within_bound(c, s, r);
    // Its logit leads by >= 10 (|q|_1 * 4 / 8 against <= |q|_1 * 0.5 / 8): weight > 1 - 2e-4 n.
    EXPECT_TRUE(
        test::near_all(r.out, std::vector<double>(&c.vref[77 * D], &c.vref[78 * D]), 0.1, 0));
  }
}

// A zero query: every visible key has the same logit, the output is the mean of the values.
TEST(AttentionKivi, FlatScoresAverageTheValues) {
  for (int bits : {4, 2}) {
    const Cache c = random_cache(bits, 1, 32, 320, 20, 1, 51);
    const AttentionShape s = shape_of(1, 2, 32);
    const Attended r = run_fused(c, s, 1, 52, 0.f);
    // The reference is then the plain mean of the values; the bound reduces to the sums' rounding.
    expect_within_bound(c, s, r);
  }
}

// Every code at its maximum (each channel's group: one row at the min, the rest at the max) and
// large scales: the exact integer codes 15 / 3 and the fp16 scale and min reach the scores.
TEST(AttentionKivi, MaximalCodes) {
  const int D = 64;
  const size_t n = 97;
  std::vector<float> k(n * D), v(n * D);
  const auto base = test::random_normal(D, 61, 3.f);
  for (size_t j = 0; j < n; ++j)
    for (size_t e = 0; e < size_t(D); ++e) {
      k[j * D + e] = j % 32 == 0 ? base[e] - 20.f : base[e];
      v[j * D + e] = e % 32 == 0 ? -50.f : 50.f;
    }
  for (int bits : {4, 2}) {
    const Cache c = make_cache(bits, 1, D, 96, 0, 1, k, v);
    EXPECT_EQ(kivi_code(&c.k[0], bits, 5), (1 << bits) - 1);
    const AttentionShape s = shape_of(1, 4, D);
    expect_within_bound(c, s, run_fused(c, s, 1, 62));
  }
}

// No visible key (every key after the query): zeros, as attention_causal gives.
TEST(AttentionKivi, NoVisibleKeyGivesZeros) {
  const Cache c = random_cache(4, 1, 32, 64, 3, 1, 71);
  const AttentionShape s = shape_of(1, 2, 32);
  const auto q = test::random_normal(64, 72);
  const auto kv_pos = iota_positions(10, c.n_kv());
  const int32_t qp = 5;
  std::vector<float> out(64, -1.f);
  attention_kivi(s, q.data(), 64, &qp, 1, c.view(), kv_pos.data(), c.n_kv(), out.data(), 64);
  EXPECT_TRUE(test::bit_equal(out, std::vector<float>(64, 0.f)));
}

// The dequantize-then-attend path attends over exactly the reference's rows (f32 kernel
// accuracy: sums of <= 600 O(1) terms, 1e-5), and the fused kernel agrees with it within twice the
// derived bound (each is within the bound of the reference).
TEST(AttentionKivi, DequantizedPathMatchesTheReferenceAndTheFusedKernel) {
  for (int bits : {4, 2}) {
    const Cache c = random_cache(bits, 2, 64, 544, 11, 1, 81);
    const AttentionShape s = shape_of(2, 4, 64);
    const Attended r = run_fused(c, s, 1, 82);
    std::vector<float> out(r.out.size()), kf, vf;
    attention_kivi_dequantized(s, r.q.data(), 512, r.q_pos.data(), 1, c.view(), r.kv_pos.data(),
                               c.n_kv(), out.data(), 512, kf, vf);
    const auto want = reference(c, s, r);
    EXPECT_TRUE(test::near_all(out, want, 1e-5, 0));
    for (int h = 0; h < s.n_heads; ++h) {
      const size_t o = size_t(h) * 64;
      const double tol = 2 * tolerance(c, s, &r.q[o], 2);
      EXPECT_TRUE(test::near_all(
          std::span(r.out).subspan(o, 64),
          std::vector<double>(out.begin() + long(o), out.begin() + long(o + 64)), tol, 0));
    }
  }
}

// c's quantized blocks stored as a ring of `ring` blocks whose view starts at stored block
// `first` (KiviKV::first_block / ring_blocks); the stored blocks the view skips hold 0xff (NaN
// fp16 scales). k / v own the ring's bytes.
KiviKV ring_view(const Cache& c, size_t ring, size_t first, std::vector<uint8_t>& k,
                 std::vector<uint8_t>& v) {
  const size_t kbb = c.kbb(), vrb = c.vrb(), lin = c.n_quant / 32, hkv = size_t(c.hkv);
  k.assign(hkv * ring * kbb, 0xff);
  v.assign(hkv * ring * 32 * vrb, 0xff);
  for (size_t g = 0; g < hkv; ++g)
    for (size_t i = 0; i < lin; ++i) {
      const size_t b = (first + i) % ring;
      std::copy_n(&c.k[(g * lin + i) * kbb], kbb, &k[(g * ring + b) * kbb]);
      std::copy_n(&c.v[(g * c.n_quant + i * 32) * vrb], 32 * vrb, &v[(g * ring + b) * 32 * vrb]);
    }
  KiviKV kv = c.view();
  kv.k = k.data();
  kv.v = v.data();
  kv.k_head_stride = ring * kbb;
  kv.v_head_stride = ring * 32 * vrb;
  kv.first_block = first;
  kv.ring_blocks = ring;
  return kv;
}

// A ring's view (KiviKV::first_block / ring_blocks): the same blocks stored rotated, with the
// stored blocks the view skips filled with 0xff (NaN fp16 scales), give the linear view's bits on
// the fused kernel (decode and a batch) and on the dequantizing path: view block i is read from
// stored block (first + i) % ring_blocks and nothing else is read.
TEST(AttentionKivi, RingViewReadsItsBlocksInViewOrder) {
  for (int bits : {4, 2}) {
    const Cache c = random_cache(bits, 2, 64, 5 * 32, 7, 3, 95);
    std::vector<uint8_t> k, v;
    const KiviKV kv = ring_view(c, 7, 4, k, v);
    const AttentionShape s = shape_of(2, 4, 64);
    for (size_t n_q : {size_t(1), size_t(3)}) {
      const Attended want = run_fused(c, s, n_q, 96);
      std::vector<float> out(want.out.size()), dq(want.out.size()), kf, vf;
      attention_kivi(s, want.q.data(), 512, want.q_pos.data(), n_q, kv, want.kv_pos.data(),
                     c.n_kv(), out.data(), 512);
      EXPECT_TRUE(test::bit_equal(out, want.out)) << "bits " << bits << " rows " << n_q;
      std::vector<float> dq_lin(dq.size());
      attention_kivi_dequantized(s, want.q.data(), 512, want.q_pos.data(), n_q, kv,
                                 want.kv_pos.data(), c.n_kv(), dq.data(), 512, kf, vf);
      attention_kivi_dequantized(s, want.q.data(), 512, want.q_pos.data(), n_q, c.view(),
                                 want.kv_pos.data(), c.n_kv(), dq_lin.data(), 512, kf, vf);
      EXPECT_TRUE(test::bit_equal(dq, dq_lin)) << "bits " << bits << " rows " << n_q;
    }
  }
}

// The prefill path's vectorised, parallel dequantization gives kivi_dequantize_key_block's and
// kivi_dequantize_value's values bit for bit (the same two roundings), at any thread count, and
// reads a ring's blocks in view order. A row stride wider than the heads leaves the gap untouched.
TEST(AttentionKivi, DequantizedViewEqualsTheScalarDequantization) {
  const int t0 = num_threads();
  ScopedParallelBackoff no_backoff(false);
  for (int bits : {4, 2})
    for (int D : {32, 96, 128}) {
      const Cache c = random_cache(bits, 3, D, 4 * 32, 0, 0, 101 + uint64_t(D));
      const size_t kvd = c.kv_dim(), ld = kvd + 5;
      for (int threads : {1, 2, 3}) {
        set_num_threads(threads);
        std::vector<float> kf(c.n_quant * ld, -7.f), vf(c.n_quant * ld, -7.f);
        kivi_dequantize_view(c.view(), D, 3, kf.data(), vf.data(), ld);
        std::vector<float> kc, vc;  // the heads' columns of each row, then the gap's
        size_t gap_written = 0;
        for (size_t r = 0; r < c.n_quant; ++r) {
          kc.insert(kc.end(), &kf[r * ld], &kf[r * ld + kvd]);
          vc.insert(vc.end(), &vf[r * ld], &vf[r * ld + kvd]);
          for (size_t x = kvd; x < ld; ++x)
            gap_written += (kf[r * ld + x] != -7.f) + (vf[r * ld + x] != -7.f);
        }
        EXPECT_TRUE(test::bit_equal(kc, c.kref))
            << "bits " << bits << " D " << D << " threads " << threads;
        EXPECT_TRUE(test::bit_equal(vc, c.vref))
            << "bits " << bits << " D " << D << " threads " << threads;
        EXPECT_EQ(gap_written, 0u);
      }
    }
  set_num_threads(t0);
  // A ring: view block i is stored block (first + i) % ring.
  const Cache c = random_cache(4, 2, 64, 3 * 32, 0, 0, 107);
  const size_t kvd = c.kv_dim();
  std::vector<uint8_t> k, v;
  const KiviKV kv = ring_view(c, 5, 3, k, v);
  std::vector<float> kf(c.n_quant * kvd), vf(c.n_quant * kvd);
  kivi_dequantize_view(kv, 64, 2, kf.data(), vf.data(), kvd);
  EXPECT_TRUE(test::bit_equal(kf, c.kref));
  EXPECT_TRUE(test::bit_equal(vf, c.vref));
}

TEST(AttentionKivi, RefusesBadShapes) {
  const Cache c = random_cache(4, 1, 32, 32, 0, 1, 91);
  const auto q = test::random_normal(32, 92);
  const auto pos = iota_positions(0, c.n_kv());
  std::vector<float> out(32);
  AttentionShape s = shape_of(1, 1, 32);
  KiviKV kv = c.view();
  kv.n_quant = 16;  // not whole blocks
  EXPECT_DEATH(
      attention_kivi(s, q.data(), 32, &pos[32], 1, kv, pos.data(), c.n_kv(), out.data(), 32),
      "whole blocks");
  kv = c.view();
  EXPECT_DEATH(
      attention_kivi(s, q.data(), 32, &pos[32], 1, kv, pos.data(), c.n_kv() + 1, out.data(), 32),
      "full-precision rows");
  s.softcap = 30.f;
  EXPECT_DEATH(
      attention_kivi(s, q.data(), 32, &pos[32], 1, kv, pos.data(), c.n_kv(), out.data(), 32),
      "soft-cap");
}

}  // namespace
}  // namespace accel
