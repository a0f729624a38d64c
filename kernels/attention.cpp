// Causal GQA attention (attention.h): a blocked online-softmax kernel with two layouts that give
// the same bits, and the double reference. Must not split one (query, head) across threads or make
// any operation order depend on the batch; see "Why the bits do not depend on the batch" below.
//
// Why the bits do not depend on the batch. Keys are visited in blocks of kBlock aligned to index 0
// of the kv arrays. For one (query row, head) every quantity is a fixed scalar sequence:
//   score  acc = fma(q[d], k[d], acc) for d = 0..D-1 from acc = 0;  t = acc * (scale * log2 e)
//   block  mb = max of t over visible keys; a block without visible keys changes nothing
//          mn = max(m, mb); alpha = mb > m ? exp2(m - mn) : 1
//          p_j = visible ? exp2(t_j - mn) : 0;  ls = ((0 + p_0) + p_1) + ... in key order
//          l = l * alpha + ls;  o = o * alpha, then o = fma(p_j, v_j, o) over visible j in order
//   end    out = o / l (zeros if no key was visible)
// A masked key adds +0 to ls (exact for ls >= +0) and is skipped in o. Both layouts below evaluate
// exactly these sequences with elementwise SIMD operations (a lane never mixes with another), so
// the layout, the tile a row lands in, and the thread that runs it do not change the result.
//  - Row-lane layout (prefill, many rows): a tile of queries x the heads of one kv group; Q is
//    transposed once per tile so SIMD lanes run over rows and K elements are broadcast, giving a
//    register-blocked GEMM-like micro-kernel with no horizontal reductions and no K transposes.
//  - Key-lane layout (decode, few rows): lanes run over the keys of a block; each K block is
//    transposed in registers so the score stays the sequential-in-d chain above.
// Hand-written intrinsics are used for speed and because they pin the operation order (the build
// also passes -ffp-contract=off so the compiler cannot fuse the scalar parts differently).
#include "kernels/attention.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <vector>

#include <immintrin.h>

#include "kernels/check.h"
#include "kernels/fp16.h"
#include "kernels/simd.h"
#include "kernels/threading.h"

// GCC 12 flags the unspecified-value operand inside its own AVX-512 intrinsics (GCC bug 105593).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

namespace accel {

namespace {

using namespace simd;

constexpr int kBlock = 64;     // keys per online-softmax block (fixed: part of the numerics)
constexpr int kTileRows = 48;  // target rows (query x head) per row-lane tile
constexpr float kLog2e = 1.4426950408889634f;

#if defined(__AVX512F__)
constexpr int kQkKeys = 8;  // row-lane score kernel: keys x row-vectors (<= 3) accumulators
constexpr int kPvRows = 6;  // P.V kernel: rows x 4 vectors of head_dim
constexpr int kKlRows = 6;  // key-lane score kernel: rows x (kBlock / W) key vectors
constexpr int kKlVecs = 4;
#else
constexpr int kQkKeys = 4;
constexpr int kPvRows = 2;
constexpr int kKlRows = 3;
constexpr int kKlVecs = 4;
#endif
constexpr int kPvVecs = 4;

struct Problem {
  const AttentionShape* s;
  const float* q;
  size_t ldq;
  const int32_t* q_pos;
  size_t n_q;
  const void* k;  // rows of `fmt`, stride ldkv elements
  const void* v;
  size_t ldkv;
  KVFormat fmt;
  const int32_t* kv_pos;
  size_t n_kv;
  float* out;
  size_t ldo;
  int G, D;
  float c;                       // scale * log2(e): scores live in the log2 domain (log2(e) when
                                 // soft-capping, which applies the scale itself)
  int window;                    // AttentionShape::window
  const float* sinks;            // AttentionShape::sinks
  float scale, softcap;          // AttentionShape::scale, softcap
  std::vector<int32_t> blk_min;  // min / max position of each key block
  std::vector<int32_t> blk_max;
};

// ---- P.V: o_r = o_r * alpha_r + sum_j p_r[j] v_j over visible j, key order, per row ----------

// NR rows that see every key of the block (no check) or, CHECK, one row whose keys are tested.
template <int NR, int NV, bool CHECK>
void pv_chunk(const float* const* P, size_t pstride, float* const* O, const float* alpha,
              const float* vb, size_t ldkv, int nb, int d0, vmask tail, const int32_t* kpos,
              int32_t qpos, int32_t qlo) {
  // Unrolled so that GCC keeps acc in registers (a partially unrolled loop spills it per key).
  vf acc[NR][NV];
#pragma GCC unroll 8
  for (int r = 0; r < NR; ++r) {
    const vf a = set1(alpha[r]);  // o * 1 is exact: rows with alpha == 1 are unchanged
#pragma GCC unroll 4
    for (int u = 0; u < NV; ++u)
      acc[r][u] = mul(u < NV - 1 ? load(O[r] + d0 + u * W) : load_n(O[r] + d0 + u * W, tail), a);
  }
  const float* p[NR];
#pragma GCC unroll 8
  for (int r = 0; r < NR; ++r) p[r] = P[r];
  for (int j = 0; j < nb; ++j) {
    if (CHECK && (kpos[j] > qpos || kpos[j] < qlo)) continue;
    const float* vr = vb + size_t(j) * ldkv + d0;
    vf vv[NV];
#pragma GCC unroll 4
    for (int u = 0; u < NV; ++u) vv[u] = u < NV - 1 ? load(vr + u * W) : load_n(vr + u * W, tail);
#pragma GCC unroll 8
    for (int r = 0; r < NR; ++r) {
      const vf pj = set1(p[r][size_t(j) * pstride]);
#pragma GCC unroll 4
      for (int u = 0; u < NV; ++u) acc[r][u] = fma(pj, vv[u], acc[r][u]);
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < NR; ++r) {
#pragma GCC unroll 4
    for (int u = 0; u < NV - 1; ++u) store(O[r] + d0 + u * W, acc[r][u]);
    store_n(O[r] + d0 + (NV - 1) * W, acc[r][NV - 1], tail);
  }
}

template <int NR, bool CHECK>
void pv_rows(const float* const* P, size_t pstride, float* const* O, const float* alpha,
             const float* vb, size_t ldkv, int nb, int D, const int32_t* kpos, int32_t qpos,
             int32_t qlo) {
  for (int d0 = 0; d0 < D; d0 += kPvVecs * W) {
    const int dl = std::min(kPvVecs * W, D - d0), nv = (dl + W - 1) / W;
    const vmask tail = first(dl - (nv - 1) * W);
    switch (nv) {
      case 1:
        pv_chunk<NR, 1, CHECK>(P, pstride, O, alpha, vb, ldkv, nb, d0, tail, kpos, qpos, qlo);
        break;
      case 2:
        pv_chunk<NR, 2, CHECK>(P, pstride, O, alpha, vb, ldkv, nb, d0, tail, kpos, qpos, qlo);
        break;
      case 3:
        pv_chunk<NR, 3, CHECK>(P, pstride, O, alpha, vb, ldkv, nb, d0, tail, kpos, qpos, qlo);
        break;
      default:
        pv_chunk<NR, 4, CHECK>(P, pstride, O, alpha, vb, ldkv, nb, d0, tail, kpos, qpos, qlo);
    }
  }
}

// Rows of one tile for one key block: rows seeing every key go through the multi-row kernel (each
// V row loaded once serves them all), rows seeing some keys go one by one with a per-key test.
// p(r) is row r's first probability, stride pstride between keys; o(r) its accumulator.
struct PvRow {
  const float* p;
  float* o;
  float alpha;
  int32_t pos;
  int32_t lo;  // lowest visible key position (attention_window_lo)
};
void pv_block(const Problem& pr, const PvRow* rows, int n_rows, size_t pstride, const float* vb,
              size_t ldv, int b, int nb) {
  const float* P[kPvRows];
  float* O[kPvRows];
  float A[kPvRows];
  int n = 0;
  auto flush = [&] {
    switch (n) {
#define ACCEL_PV_CASE(k)                                                   \
  case k:                                                                  \
    pv_rows<k, false>(P, pstride, O, A, vb, ldv, nb, pr.D, nullptr, 0, 0); \
    break;
      ACCEL_PV_CASE(1)
      ACCEL_PV_CASE(2)
#if defined(__AVX512F__)
      ACCEL_PV_CASE(3)
      ACCEL_PV_CASE(4)
      ACCEL_PV_CASE(5)
      ACCEL_PV_CASE(6)
#endif
#undef ACCEL_PV_CASE
      default:
        break;
    }
    n = 0;
  };
  const int32_t* kpos = pr.kv_pos + size_t(b) * kBlock;
  for (int i = 0; i < n_rows; ++i) {
    const PvRow& r = rows[i];
    // no visible key: the block is skipped for this row
    if (pr.blk_min[b] > r.pos || pr.blk_max[b] < r.lo) continue;
    if (pr.blk_max[b] <= r.pos && pr.blk_min[b] >= r.lo) {
      P[n] = r.p;
      O[n] = r.o;
      A[n] = r.alpha;
      if (++n == kPvRows) flush();
    } else {
      pv_rows<1, true>(&r.p, pstride, &r.o, &r.alpha, vb, ldv, nb, pr.D, kpos, r.pos, r.lo);
    }
  }
  flush();
}

// ---- key/value rows as f32
// -----------------------------------------------------------------------

// n halves to floats. Widening is exact, so the hardware and scalar paths give the same bits.
void widen_f16(const uint16_t* src, float* dst, int n) {
  int i = 0;
#if defined(__AVX512F__)
  for (; i + 16 <= n; i += 16)
    _mm512_storeu_ps(
        dst + i, _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + i))));
#elif defined(__F16C__)
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(dst + i,
                     _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i))));
#endif
  for (; i < n; ++i) dst[i] = fp16_to_f32(src[i]);
}

struct F32Rows {
  const float* p;
  size_t ld;
};

// Rows [j0, j0 + nb) of the head slice at element offset koff of `base` (pr.k or pr.v) as f32:
// f32 storage is read in place, f16 storage is widened into buf one block at a time.
F32Rows head_rows(const Problem& pr, const void* base, size_t j0, int nb, size_t koff,
                  std::vector<float>& buf) {
  if (pr.fmt == KVFormat::F32)
    return {static_cast<const float*>(base) + j0 * pr.ldkv + koff, pr.ldkv};
  const uint16_t* h = static_cast<const uint16_t*>(base) + j0 * pr.ldkv + koff;
  buf.resize(size_t(nb) * size_t(pr.D));
  for (int j = 0; j < nb; ++j)
    widen_f16(h + size_t(j) * pr.ldkv, buf.data() + size_t(j) * pr.D, pr.D);
  return {buf.data(), size_t(pr.D)};
}

size_t kv_element_bytes(KVFormat f) {
  return f == KVFormat::F16 ? 2 : 4;
}

// Soft-capping of n raw scores q.k in place: s = cap * tanh(s * scale / cap), one element at a time
// in the same scalar operations whichever layout calls it (the scale then leaves pr.c).
void softcap_scores(const Problem& pr, float* s, size_t n) {
  for (size_t i = 0; i < n; ++i) s[i] = pr.softcap * std::tanh(s[i] * pr.scale / pr.softcap);
}

// Writes one (query, head) row: out = o / l; with a sink logit t (log2 domain) the sink joins the
// denominator: M = max(m, t), out = (o * 2^(m - M)) / (l * 2^(m - M) + 2^(t - M)). Zeros when no
// key was visible (all weight on the sink, whose value is zero). Both layouts end here.
void finish_row(const Problem& pr, int head, float m, float l, const float* acc, float* o) {
  const int D = pr.D;
  if (!(l > 0.f)) {
    for (int d0 = 0; d0 < D; d0 += W) store_n(o + d0, zero(), first(std::min(W, D - d0)));
    return;
  }
  if (!pr.sinks) {
    const vf lv = set1(l);
    for (int d0 = 0; d0 < D; d0 += W) {
      const vmask mk = first(std::min(W, D - d0));
      store_n(o + d0, div(load_n(acc + d0, mk), lv), mk);
    }
    return;
  }
  const float t = pr.sinks[head] * kLog2e, M = std::max(m, t);
  const float w = lane0(exp2(set1(m - M)));
  const vf wv = set1(w), den = set1(l * w + lane0(exp2(set1(t - M))));
  for (int d0 = 0; d0 < D; d0 += W) {
    const vmask mk = first(std::min(W, D - d0));
    store_n(o + d0, div(mul(load_n(acc + d0, mk), wv), den), mk);
  }
}

// ---- row-lane layout (prefill) ------------------------------------------------------------------

// S[j * Rp + r] = sum_d Qt[d * Rp + r] * k_j[d] for keys kp[0..NK) and RV row vectors.
template <int RV, int NK>
void qk_rowlane(const float* Qt, size_t Rp, const float* const* kp, int D, float* S) {
  vf acc[NK][RV];
#pragma GCC unroll 8
  for (int j = 0; j < NK; ++j)
#pragma GCC unroll 4
    for (int u = 0; u < RV; ++u) acc[j][u] = zero();
  for (int d = 0; d < D; ++d) {
    vf qv[RV];
#pragma GCC unroll 4
    for (int u = 0; u < RV; ++u) qv[u] = load(Qt + size_t(d) * Rp + u * W);
#pragma GCC unroll 8
    for (int j = 0; j < NK; ++j) {
      const vf kb = set1(kp[j][d]);
#pragma GCC unroll 4
      for (int u = 0; u < RV; ++u) acc[j][u] = fma(qv[u], kb, acc[j][u]);
    }
  }
  for (int j = 0; j < NK; ++j)
    for (int u = 0; u < RV; ++u) store(S + size_t(j) * Rp + u * W, acc[j][u]);
}

template <int RV>
void qk_rowlane_block(const float* Qt, size_t Rp, const float* kb, size_t ldkv, int nb, int D,
                      float* S) {
  const float* kp[kQkKeys];
  int j = 0;
  for (; j + kQkKeys <= nb; j += kQkKeys) {
    for (int t = 0; t < kQkKeys; ++t) kp[t] = kb + size_t(j + t) * ldkv;
    qk_rowlane<RV, kQkKeys>(Qt, Rp, kp, D, S + size_t(j) * Rp);
  }
  for (; j < nb; ++j) {
    kp[0] = kb + size_t(j) * ldkv;
    qk_rowlane<RV, 1>(Qt, Rp, kp, D, S + size_t(j) * Rp);
  }
}

struct Scratch {
  std::vector<float> qt, s, o, m, l, alpha;
  std::vector<float> kf, vf;  // one block of widened K / V rows (f16 storage only)
  std::vector<int32_t> pos, lo;
  std::vector<PvRow> rows;
};

// One tile: queries [i0, i0 + nq) x heads of kv group g.
void tile_rowlane(const Problem& pr, int g, size_t i0, int nq, Scratch& sc) {
  const int G = pr.G, D = pr.D, R = nq * G;
  const int RV = (R + W - 1) / W;
  const size_t Rp = size_t(RV) * W;
  sc.qt.assign(size_t(D) * Rp, 0.f);
  sc.s.resize(size_t(kBlock) * Rp);
  sc.o.assign(size_t(R) * D, 0.f);
  sc.m.assign(Rp, -INFINITY);
  sc.l.assign(Rp, 0.f);
  sc.alpha.assign(Rp, 1.f);
  sc.pos.assign(Rp, INT32_MIN);  // padding lanes: results are computed and discarded
  sc.lo.assign(Rp, INT32_MIN);
  int32_t pmax = INT32_MIN, lomin = INT32_MAX;
  for (int r = 0; r < R; ++r) {
    const size_t i = i0 + r / G;
    const float* qr = pr.q + i * pr.ldq + size_t(g * G + r % G) * D;
    for (int d = 0; d < D; ++d) sc.qt[size_t(d) * Rp + r] = qr[d];
    sc.pos[r] = pr.q_pos[i];
    sc.lo[r] = attention_window_lo(sc.pos[r], pr.window);
    pmax = std::max(pmax, sc.pos[r]);
    lomin = std::min(lomin, sc.lo[r]);
  }
  sc.rows.resize(R);
  for (int r = 0; r < R; ++r)
    sc.rows[r] = {sc.s.data() + r, sc.o.data() + size_t(r) * D, 1.f, sc.pos[r], sc.lo[r]};

  const size_t koff = size_t(g) * D;
  const int n_blocks = int(pr.blk_min.size());
  const vf c = set1(pr.c), ninf = set1(-INFINITY);
  for (int b = 0; b < n_blocks; ++b) {
    if (pr.blk_min[b] > pmax || pr.blk_max[b] < lomin) continue;
    const size_t j0 = size_t(b) * kBlock;
    const int nb = int(std::min<size_t>(kBlock, pr.n_kv - j0));
    const F32Rows kr = head_rows(pr, pr.k, j0, nb, koff, sc.kf);
    const float* kb = kr.p;
    float* S = sc.s.data();
    for (int u0 = 0; u0 < RV; u0 += 3) {
      const float* Qt = sc.qt.data() + u0 * W;
      float* Su = S + u0 * W;
      switch (std::min(3, RV - u0)) {
        case 1:
          qk_rowlane_block<1>(Qt, Rp, kb, kr.ld, nb, D, Su);
          break;
        case 2:
          qk_rowlane_block<2>(Qt, Rp, kb, kr.ld, nb, D, Su);
          break;
        default:
          qk_rowlane_block<3>(Qt, Rp, kb, kr.ld, nb, D, Su);
      }
    }
    if (pr.softcap != 0.f) softcap_scores(pr, S, size_t(nb) * Rp);
    // Online softmax, lanes over rows; S becomes P in place.
    const int32_t* kpos = pr.kv_pos + j0;
    for (int u = 0; u < RV; ++u) {
      const vi qp = loadi(sc.pos.data() + u * W), ql = loadi(sc.lo.data() + u * W);
      const vf mo = load(sc.m.data() + u * W);
      vf mx = ninf;
      for (int j = 0; j < nb; ++j) {
        float* sj = S + size_t(j) * Rp + u * W;
        const vf t = mul(load(sj), c);
        store(sj, t);
        const vi kp = set1i(kpos[j]);
        mx = sel(and_m(le_i(kp, qp), le_i(ql, kp)), max(mx, t), mx);
      }
      const vf mn = max(mo, mx);
      const vf alpha = sel(gt(mx, mo), exp2(sub(mo, mn)), set1(1.f));
      vf ls = zero();
      for (int j = 0; j < nb; ++j) {
        float* sj = S + size_t(j) * Rp + u * W;
        const vi kp = set1i(kpos[j]);
        const vf p = sel(and_m(le_i(kp, qp), le_i(ql, kp)), exp2(sub(load(sj), mn)), zero());
        store(sj, p);
        ls = add(ls, p);
      }
      store(sc.l.data() + u * W, add(mul(load(sc.l.data() + u * W), alpha), ls));
      store(sc.m.data() + u * W, mn);
      store(sc.alpha.data() + u * W, alpha);
    }
    for (int r = 0; r < R; ++r) sc.rows[r].alpha = sc.alpha[r];
    const F32Rows vr = head_rows(pr, pr.v, j0, nb, koff, sc.vf);
    pv_block(pr, sc.rows.data(), R, Rp, vr.p, vr.ld, b, nb);
  }
  for (int r = 0; r < R; ++r) {
    const int head = g * G + r % G;
    finish_row(pr, head, sc.m[r], sc.l[r], sc.o.data() + size_t(r) * D,
               pr.out + (i0 + r / G) * pr.ldo + size_t(head) * D);
  }
}

// ---- key-lane layout (decode) -------------------------------------------------------------------

// Kt[d * kBlock + j] = k_j[d] for j < nb; zero for nb <= j < round_up(nb, W).
void transpose_keys(const float* kb, size_t ldkv, int nb, int D, float* Kt) {
  const int jf = nb / W * W, df = D / W * W, jp = (nb + W - 1) / W * W;
  for (int j = 0; j < jf; j += W)
    for (int d = 0; d < df; d += W)
      transpose_tile(kb + size_t(j) * ldkv + d, ldkv, Kt + d * kBlock + j, kBlock);
  for (int j = 0; j < jf; ++j)
    for (int d = df; d < D; ++d) Kt[d * kBlock + j] = kb[size_t(j) * ldkv + d];
  for (int j = jf; j < jp; ++j)
    for (int d = 0; d < D; ++d) Kt[d * kBlock + j] = j < nb ? kb[size_t(j) * ldkv + d] : 0.f;
}

// S[r * kBlock + j] for NR rows (query pointers qr) and NKV key vectors starting at key j0v * W.
template <int NR, int NKV>
void qk_keylane(const float* Kt, const float* const* qr, int D, float* S) {
  vf acc[NR][NKV];
  const float* q[NR];
#pragma GCC unroll 8
  for (int r = 0; r < NR; ++r) {
    q[r] = qr[r];
#pragma GCC unroll 4
    for (int u = 0; u < NKV; ++u) acc[r][u] = zero();
  }
  for (int d = 0; d < D; ++d) {
    vf kv[NKV];
#pragma GCC unroll 4
    for (int u = 0; u < NKV; ++u) kv[u] = load(Kt + d * kBlock + u * W);
#pragma GCC unroll 8
    for (int r = 0; r < NR; ++r) {
      const vf qb = set1(q[r][d]);
#pragma GCC unroll 4
      for (int u = 0; u < NKV; ++u) acc[r][u] = fma(qb, kv[u], acc[r][u]);
    }
  }
  for (int r = 0; r < NR; ++r)
    for (int u = 0; u < NKV; ++u) store(S + r * kBlock + u * W, acc[r][u]);
}

template <int NR>
void qk_keylane_rows(const float* Kt, const float* const* qr, int D, int nkv, float* S) {
  for (int u0 = 0; u0 < nkv; u0 += kKlVecs) {
    const float* K = Kt + u0 * W;
    float* Su = S + u0 * W;
    switch (std::min(kKlVecs, nkv - u0)) {
      case 1:
        qk_keylane<NR, 1>(K, qr, D, Su);
        break;
      case 2:
        qk_keylane<NR, 2>(K, qr, D, Su);
        break;
      case 3:
        qk_keylane<NR, 3>(K, qr, D, Su);
        break;
      default:
        qk_keylane<NR, 4>(K, qr, D, Su);
    }
  }
}

void qk_keylane_all(const float* Kt, const float* const* qr, int R, int D, int nkv, float* S) {
  for (int r0 = 0; r0 < R; r0 += kKlRows) {
    const float* const* q = qr + r0;
    float* Sr = S + size_t(r0) * kBlock;
    switch (std::min(kKlRows, R - r0)) {
      case 1:
        qk_keylane_rows<1>(Kt, q, D, nkv, Sr);
        break;
      case 2:
        qk_keylane_rows<2>(Kt, q, D, nkv, Sr);
        break;
#if defined(__AVX512F__)
      case 3:
        qk_keylane_rows<3>(Kt, q, D, nkv, Sr);
        break;
      case 4:
        qk_keylane_rows<4>(Kt, q, D, nkv, Sr);
        break;
      case 5:
        qk_keylane_rows<5>(Kt, q, D, nkv, Sr);
        break;
      default:
        qk_keylane_rows<6>(Kt, q, D, nkv, Sr);
#else
      default:
        qk_keylane_rows<3>(Kt, q, D, nkv, Sr);
#endif
    }
  }
}

// All rows of queries [i0, i0 + nq) x the query heads of kv heads [g0, g0 + ng), lanes over keys.
// The kv heads of an item are walked together block by block so that the item reads whole
// stretches of each K/V row: on the test machine one 256-byte head slice per 1 KiB row streams
// at a fifth of the bandwidth of the full rows.
void tile_keylane(const Problem& pr, int g0, int ng, size_t i0, int nq, Scratch& sc) {
  const int G = pr.G, D = pr.D, Rh = nq * G, R = Rh * ng;
  sc.qt.resize(size_t(D) * kBlock);  // K block of one head, transposed
  sc.s.resize(size_t(R) * kBlock);
  sc.o.assign(size_t(R) * D, 0.f);
  sc.m.assign(R, -INFINITY);
  sc.l.assign(R, 0.f);
  sc.rows.resize(R);
  std::vector<const float*> qr(R);
  int32_t pmax = INT32_MIN, lomin = INT32_MAX;
  for (int r = 0; r < R; ++r) {
    const int g = g0 + r / Rh, rr = r % Rh;
    const size_t i = i0 + rr / G;
    qr[r] = pr.q + i * pr.ldq + size_t(g * G + rr % G) * D;
    const int32_t lo = attention_window_lo(pr.q_pos[i], pr.window);
    sc.rows[r] = {sc.s.data() + size_t(r) * kBlock, sc.o.data() + size_t(r) * D, 1.f, pr.q_pos[i],
                  lo};
    pmax = std::max(pmax, pr.q_pos[i]);
    lomin = std::min(lomin, lo);
  }
  const int n_blocks = int(pr.blk_min.size());
  const vf c = set1(pr.c), ninf = set1(-INFINITY);
  for (int b = 0; b < n_blocks; ++b) {
    if (pr.blk_min[b] > pmax || pr.blk_max[b] < lomin) continue;
    const size_t j0 = size_t(b) * kBlock;
    const int nb = int(std::min<size_t>(kBlock, pr.n_kv - j0)), nkv = (nb + W - 1) / W;
    const int32_t* kpos = pr.kv_pos + j0;
    if (b + 1 < n_blocks) {  // the next block's K/V slices: decode is a pure stream
      const size_t j1 = j0 + kBlock, n1 = std::min<size_t>(kBlock, pr.n_kv - j1);
      const size_t eb = kv_element_bytes(pr.fmt), bytes = size_t(ng) * D * eb;
      for (size_t j = 0; j < n1; ++j) {
        const size_t at = ((j1 + j) * pr.ldkv + size_t(g0) * D) * eb;
        const char* kr = static_cast<const char*>(pr.k) + at;
        const char* vr = static_cast<const char*>(pr.v) + at;
        for (size_t o = 0; o < bytes; o += 64) {
          _mm_prefetch(kr + o, _MM_HINT_T1);
          _mm_prefetch(vr + o, _MM_HINT_T1);
        }
      }
    }
    for (int gi = 0; gi < ng; ++gi) {
      const size_t koff = size_t(g0 + gi) * D;
      const int r0 = gi * Rh;
      const F32Rows kr = head_rows(pr, pr.k, j0, nb, koff, sc.kf);
      transpose_keys(kr.p, kr.ld, nb, D, sc.qt.data());
      qk_keylane_all(sc.qt.data(), qr.data() + r0, Rh, D, nkv, sc.s.data() + size_t(r0) * kBlock);
      for (int r = r0; r < r0 + Rh; ++r) {
        PvRow& row = sc.rows[r];
        row.alpha = 1.f;
        if (pr.blk_min[b] > row.pos || pr.blk_max[b] < row.lo) continue;
        float* sr = sc.s.data() + size_t(r) * kBlock;
        if (pr.softcap != 0.f) softcap_scores(pr, sr, size_t(nkv) * W);
        const vi qp = set1i(row.pos), ql = set1i(row.lo);
        vf mxv = ninf;
        for (int u = 0; u < nkv; ++u) {
          const vmask valid = first(std::min(W, nb - u * W));
          const vi kp = loadi_n(kpos + u * W, valid);
          const vmask vis = and_m(and_m(le_i(kp, qp), le_i(ql, kp)), valid);
          const vf t = mul(load(sr + u * W), c);
          store(sr + u * W, t);
          mxv = sel(vis, max(mxv, t), mxv);
        }
        const float mx = hmax(mxv), mo = sc.m[r];
        const float mn = std::max(mo, mx);
        const float alpha = mx > mo ? lane0(exp2(set1(mo - mn))) : 1.f;
        const vf mnv = set1(mn);
        for (int u = 0; u < nkv; ++u) {
          const vmask valid = first(std::min(W, nb - u * W));
          const vi kp = loadi_n(kpos + u * W, valid);
          const vmask vis = and_m(and_m(le_i(kp, qp), le_i(ql, kp)), valid);
          store(sr + u * W, sel(vis, exp2(sub(load(sr + u * W), mnv)), zero()));
        }
        float ls = 0.f;  // key order, as the row-lane layout sums it
        for (int j = 0; j < nb; ++j) ls += sr[j];
        sc.l[r] = sc.l[r] * alpha + ls;
        sc.m[r] = mn;
        row.alpha = alpha;
      }
      const F32Rows vr = head_rows(pr, pr.v, j0, nb, koff, sc.vf);
      pv_block(pr, sc.rows.data() + r0, Rh, 1, vr.p, vr.ld, b, nb);
    }
  }
  for (int r = 0; r < R; ++r) {
    const int g = g0 + r / Rh, rr = r % Rh;
    const int head = g * G + rr % G;
    finish_row(pr, head, sc.m[r], sc.l[r], sc.o.data() + size_t(r) * D,
               pr.out + (i0 + rr / G) * pr.ldo + size_t(head) * D);
  }
}

// Work of one attention call in parallel_for's flop-like units: QK and PV are 2 multiply-adds
// per (query head, key, dimension) = 4 units; an upper bound for a causal prefill (about half).
double attention_work(const AttentionShape& s, size_t n_q, size_t n_kv) {
  return 4.0 * double(n_q) * double(n_kv) * double(s.n_heads) * double(s.head_dim);
}

// Rows that overlap would be read or written without any fault: wrong numbers, no crash.
void check_strides(const AttentionShape& s, size_t n_q, size_t ldq, size_t ldo, size_t n_kv,
                   size_t ldkv) {
  const size_t qw = size_t(s.n_heads) * size_t(s.head_dim);
  const size_t kvw = size_t(s.n_kv_heads) * size_t(s.head_dim);
  ACCEL_CHECK(n_q == 1 || (ldq >= qw && ldo >= qw),
              "%zu query rows of %zu floats: strides ldq %zu / ldo %zu are shorter", n_q, qw, ldq,
              ldo);
  ACCEL_CHECK(n_kv <= 1 || ldkv >= kvw, "%zu kv rows of %zu elements: stride %zu is shorter", n_kv,
              kvw, ldkv);
}

}  // namespace

int32_t attention_window_lo(int32_t q_pos, int window) {
  if (window <= 0) return INT32_MIN;
  return int32_t(std::max<int64_t>(INT32_MIN, int64_t(q_pos) - int64_t(window) + 1));
}

void check_mask_options(const AttentionShape& s) {
  ACCEL_CHECK(s.window >= 0, "sliding window %d is negative", s.window);
  ACCEL_CHECK(std::isfinite(s.softcap) && s.softcap >= 0.f,
              "attention soft-cap %g must be finite and >= 0", double(s.softcap));
}

void attention_causal(const AttentionShape& s, const float* q, size_t ldq, const int32_t* q_pos,
                      size_t n_q, const float* k, const float* v, size_t ldkv,
                      const int32_t* kv_pos, size_t n_kv, float* out, size_t ldo) {
  attention_causal(s, q, ldq, q_pos, n_q, KVRows{k, v, ldkv, KVFormat::F32}, kv_pos, n_kv, out,
                   ldo);
}

void attention_causal(const AttentionShape& s, const float* q, size_t ldq, const int32_t* q_pos,
                      size_t n_q, const KVRows& kv, const int32_t* kv_pos, size_t n_kv, float* out,
                      size_t ldo) {
  ACCEL_CHECK(s.n_kv_heads > 0 && s.n_heads % s.n_kv_heads == 0 && s.head_dim > 0,
              "shape: %d heads, %d kv heads, head_dim %d", s.n_heads, s.n_kv_heads, s.head_dim);
  check_mask_options(s);
  if (n_q == 0) return;
  check_strides(s, n_q, ldq, ldo, n_kv, kv.ld);
  Problem pr{&s,         q,
             ldq,        q_pos,
             n_q,        kv.k,
             kv.v,       kv.ld,
             kv.format,  kv_pos,
             n_kv,       out,
             ldo,        s.n_heads / s.n_kv_heads,
             s.head_dim, s.softcap != 0.f ? kLog2e : s.scale * kLog2e,
             s.window,   s.sinks,
             s.scale,    s.softcap,
             {},         {}};
  const size_t n_blocks = (n_kv + kBlock - 1) / kBlock;
  pr.blk_min.assign(n_blocks, INT32_MAX);
  pr.blk_max.assign(n_blocks, INT32_MIN);
  for (size_t j = 0; j < n_kv; ++j) {
    pr.blk_min[j / kBlock] = std::min(pr.blk_min[j / kBlock], kv_pos[j]);
    pr.blk_max[j / kBlock] = std::max(pr.blk_max[j / kBlock], kv_pos[j]);
  }
  // Layout choice is for speed only: both give the same bits (see the file comment).
  const int n_kvh = s.n_kv_heads;
  if (n_q * size_t(pr.G) >= size_t(W)) {
    const size_t tq = size_t(std::max(1, kTileRows / pr.G));
    const size_t n_tiles = (n_q + tq - 1) / tq;
    const long n_items = long(n_tiles) * n_kvh;
    std::vector<Scratch> scratch(static_cast<size_t>(parallel_slots()));
    parallel_for(size_t(n_items), attention_work(s, n_q, n_kv), [&](size_t j, int slot) {
      // Later query tiles see more keys in a causal prefill: hand them out first.
      const size_t it = size_t(n_items) - 1 - j;
      const size_t i0 = it / size_t(n_kvh) * tq;
      tile_rowlane(pr, int(it % size_t(n_kvh)), i0, int(std::min(tq, n_q - i0)),
                   scratch[size_t(slot)]);
    });
  } else {
    // Few rows (decode): one item per thread, each a contiguous range of kv heads.
    const int n_items = std::min(n_kvh, num_threads());
    parallel_for(size_t(n_items), attention_work(s, n_q, n_kv), [&](size_t it, int) {
      Scratch sc;
      const int g0 = int(it) * n_kvh / n_items, g1 = (int(it) + 1) * n_kvh / n_items;
      tile_keylane(pr, g0, g1 - g0, 0, int(n_q), sc);
    });
  }
}

void attention_reference(const AttentionShape& s, const float* q, size_t ldq, const int32_t* q_pos,
                         size_t n_q, const float* k, const float* v, size_t ldkv,
                         const int32_t* kv_pos, size_t n_kv, double* out, size_t ldo) {
  const int group = s.n_heads / s.n_kv_heads, D = s.head_dim;
  std::vector<double> sc(n_kv);
  for (size_t i = 0; i < n_q; ++i)
    for (int h = 0; h < s.n_heads; ++h) {
      const size_t kvo = size_t(h / group) * D;
      double m = -INFINITY;
      bool any = false;
      for (size_t j = 0; j < n_kv; ++j) {
        if (!attention_visible(kv_pos[j], q_pos[i], s.window)) continue;
        double acc = 0;
        for (int d = 0; d < D; ++d) acc += double(q[i * ldq + h * D + d]) * k[j * ldkv + kvo + d];
        sc[j] = acc * s.scale;
        if (s.softcap != 0.f) sc[j] = s.softcap * std::tanh(sc[j] / s.softcap);
        m = std::max(m, sc[j]);
        any = true;
      }
      double l = 0;
      double* o = out + i * ldo + size_t(h) * D;
      for (int d = 0; d < D; ++d) o[d] = 0;
      if (!any) continue;  // no visible key: zeros (with a sink, all weight is on the sink)
      if (s.sinks) {       // the sink is one more logit whose value row is zero
        m = std::max(m, double(s.sinks[h]));
        l += std::exp(double(s.sinks[h]) - m);
      }
      for (size_t j = 0; j < n_kv; ++j) {
        if (!attention_visible(kv_pos[j], q_pos[i], s.window)) continue;
        const double p = std::exp(sc[j] - m);
        l += p;
        for (int d = 0; d < D; ++d) o[d] += p * v[j * ldkv + kvo + d];
      }
      if (l > 0)
        for (int d = 0; d < D; ++d) o[d] /= l;
    }
}

}  // namespace accel
