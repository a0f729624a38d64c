// Block-sparse causal GQA attention (block_sparse_attention.h): a row-lane online-softmax kernel
// over per-(segment, kv head) key lists, and the double reference.
//
// Each work item is a tile of one segment's queries x the query heads of one kv head (as the dense
// kernel's row-lane layout: Q transposed once per tile so SIMD lanes run over rows). The item's key
// list (listed blocks, then the dense range) is walked in steps of kStep entries; a step's keys are
// gathered by pointer (f32 rows in place, f16 rows widened into a step buffer), so the score and
// P.V micro-kernels read scattered rows exactly as the dense kernel reads a contiguous block. Per
// (row, head) and step, the operations are attention.cpp's per-block sequence:
//   score  acc = fma(q[d], k[d], acc), d = 0..D-1 from 0;  t = acc * (scale * log2 e)
//   step   mb = max of t over visible keys; mn = max(m, mb); alpha = mb > m ? exp2(m - mn) : 1
//          p_j = visible ? exp2(t_j - mn) : 0; ls = ((0 + p_0) + p_1) + ...; l = l * alpha + ls
//          o = o * alpha, then o = fma(p_j, v_j, o) over visible j in list order
//   end    out = o / l (zeros if no key was visible)
// A row that sees every key of a step takes the unchecked multi-row P.V path, a row that sees some
// takes the checked one-row path (masked keys skipped, not added as 0 * v), a row that sees none
// is left alone: the same split as the dense kernel, so equal lists give equal bits.
#include "kernels/block_sparse_attention.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include <immintrin.h>

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

constexpr int kStep = 64;      // list entries per online-softmax step (attention.cpp's kBlock)
constexpr int kTileRows = 48;  // target rows (query x head) per tile
constexpr float kLog2e = 1.4426950408889634f;

#if defined(__AVX512F__)
constexpr int kQkKeys = 8;  // score kernel: keys x row-vectors (<= 3) accumulators
constexpr int kPvRows = 6;  // P.V kernel: rows x 4 vectors of head_dim
#else
constexpr int kQkKeys = 4;
constexpr int kPvRows = 2;
#endif
constexpr int kPvVecs = 4;

struct Problem {
  const AttentionShape* s;
  size_t block;
  const float* q;
  size_t ldq;
  const int32_t* q_pos;
  KVRows kv;
  const int32_t* kv_pos;
  float* out;
  size_t ldo;
  int G, D;
  float c;  // scale * log2(e): scores live in the log2 domain
};

// Query rows [i0, i0 + nq) of one segment x the query heads of kv head g.
struct Item {
  const SparseSegment* seg;
  size_t i0;
  int nq;
  int g;
};

struct PvRow {
  const float* p;  // first probability; stride pstride between keys
  float* o;        // accumulator [D]
  float alpha;
  int32_t pos;
};

struct Scratch {
  std::vector<float> qt, s, o, m, l, alpha;
  std::vector<int32_t> pos;
  std::vector<PvRow> rows;
  std::vector<size_t> keys;   // the item's key list (row indices into kv)
  std::vector<float> kf, vf;  // one step of widened K / V rows (f16 storage only)
};

// ---- score: S[j * Rp + r] = sum_d Qt[d * Rp + r] * k_j[d] -------------------------------------

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
void qk_step(const float* Qt, size_t Rp, const float* const* kp, int nb, int D, float* S) {
  int j = 0;
  for (; j + kQkKeys <= nb; j += kQkKeys) qk_rowlane<RV, kQkKeys>(Qt, Rp, kp + j, D, S + j * Rp);
  for (; j < nb; ++j) qk_rowlane<RV, 1>(Qt, Rp, kp + j, D, S + j * Rp);
}

// ---- P.V: o_r = o_r * alpha_r + sum_j p_r[j] v_j over visible j, list order, per row ----------

template <int NR, int NV, bool CHECK>
void pv_chunk(const float* const* P, size_t pstride, float* const* O, const float* alpha,
              const float* const* vp, int nb, int d0, vmask tail, const int32_t* kpos,
              int32_t qpos) {
  vf acc[NR][NV];
#pragma GCC unroll 8
  for (int r = 0; r < NR; ++r) {
    const vf a = set1(alpha[r]);
#pragma GCC unroll 4
    for (int u = 0; u < NV; ++u)
      acc[r][u] = mul(u < NV - 1 ? load(O[r] + d0 + u * W) : load_n(O[r] + d0 + u * W, tail), a);
  }
  const float* p[NR];
#pragma GCC unroll 8
  for (int r = 0; r < NR; ++r) p[r] = P[r];
  for (int j = 0; j < nb; ++j) {
    if (CHECK && kpos[j] > qpos) continue;
    const float* vr = vp[j] + d0;
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
             const float* const* vp, int nb, int D, const int32_t* kpos, int32_t qpos) {
  for (int d0 = 0; d0 < D; d0 += kPvVecs * W) {
    const int dl = std::min(kPvVecs * W, D - d0), nv = (dl + W - 1) / W;
    const vmask tail = first(dl - (nv - 1) * W);
    switch (nv) {
      case 1:
        pv_chunk<NR, 1, CHECK>(P, pstride, O, alpha, vp, nb, d0, tail, kpos, qpos);
        break;
      case 2:
        pv_chunk<NR, 2, CHECK>(P, pstride, O, alpha, vp, nb, d0, tail, kpos, qpos);
        break;
      case 3:
        pv_chunk<NR, 3, CHECK>(P, pstride, O, alpha, vp, nb, d0, tail, kpos, qpos);
        break;
      default:
        pv_chunk<NR, 4, CHECK>(P, pstride, O, alpha, vp, nb, d0, tail, kpos, qpos);
    }
  }
}

// Rows that see every key of the step go through the multi-row kernel (each V row loaded once
// serves them all); rows that see some go one by one with a per-key test; rows that see none are
// skipped (their alpha is 1 and nothing is added).
void pv_step(const PvRow* rows, int n_rows, size_t pstride, const float* const* vp, int nb, int D,
             const int32_t* kpos, int32_t smin, int32_t smax) {
  const float* P[kPvRows];
  float* O[kPvRows];
  float A[kPvRows];
  int n = 0;
  auto flush = [&] {
    switch (n) {
#define ACCEL_PV_CASE(k)                                        \
  case k:                                                       \
    pv_rows<k, false>(P, pstride, O, A, vp, nb, D, nullptr, 0); \
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
  for (int i = 0; i < n_rows; ++i) {
    const PvRow& r = rows[i];
    if (smin > r.pos) continue;
    if (smax <= r.pos) {
      P[n] = r.p;
      O[n] = r.o;
      A[n] = r.alpha;
      if (++n == kPvRows) flush();
    } else {
      pv_rows<1, true>(&r.p, pstride, &r.o, &r.alpha, vp, nb, D, kpos, r.pos);
    }
  }
  flush();
}

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

// Pointers to the head slice (element offset koff) of the rows keys[0..nb) of `base` (kv.k or
// kv.v) as f32: f32 rows in place, f16 rows widened into buf.
void gather_rows(const Problem& pr, const void* base, const size_t* keys, int nb, size_t koff,
                 std::vector<float>& buf, const float** ptr) {
  if (pr.kv.format == KVFormat::F32) {
    const float* b = static_cast<const float*>(base);
    for (int j = 0; j < nb; ++j) ptr[j] = b + keys[j] * pr.kv.ld + koff;
    return;
  }
  const uint16_t* h = static_cast<const uint16_t*>(base);
  buf.resize(size_t(kStep) * size_t(pr.D));
  for (int j = 0; j < nb; ++j) {
    float* dst = buf.data() + size_t(j) * size_t(pr.D);
    widen_f16(h + keys[j] * pr.kv.ld + koff, dst, pr.D);
    ptr[j] = dst;
  }
}

// The key list of kv head g of a segment: its blocks' rows in order, then the dense range.
void key_list(const SparseSegment& sg, size_t block, int g, std::vector<size_t>& keys) {
  keys.clear();
  const int32_t* bl = sg.blocks + size_t(g) * sg.n_blocks;
  for (size_t i = 0; i < sg.n_blocks; ++i)
    for (size_t t = 0; t < block; ++t) keys.push_back(size_t(bl[i]) * block + t);
  for (size_t j = sg.own_begin; j < sg.own_end; ++j) keys.push_back(j);
}

void tile(const Problem& pr, const Item& it, Scratch& sc) {
  const int G = pr.G, D = pr.D, R = it.nq * G, g = it.g;
  const int RV = (R + W - 1) / W;
  const size_t Rp = size_t(RV) * W;
  sc.qt.assign(size_t(D) * Rp, 0.f);
  sc.s.resize(size_t(kStep) * Rp);
  sc.o.assign(size_t(R) * D, 0.f);
  sc.m.assign(Rp, -INFINITY);
  sc.l.assign(Rp, 0.f);
  sc.alpha.assign(Rp, 1.f);
  sc.pos.assign(Rp, INT32_MIN);  // padding lanes: results are computed and discarded
  int32_t pmax = INT32_MIN;
  for (int r = 0; r < R; ++r) {
    const size_t i = it.i0 + size_t(r / G);
    const float* qr = pr.q + i * pr.ldq + size_t(g * G + r % G) * D;
    for (int d = 0; d < D; ++d) sc.qt[size_t(d) * Rp + r] = qr[d];
    sc.pos[r] = pr.q_pos[i];
    pmax = std::max(pmax, sc.pos[r]);
  }
  sc.rows.resize(R);
  for (int r = 0; r < R; ++r)
    sc.rows[r] = {sc.s.data() + r, sc.o.data() + size_t(r) * D, 1.f, sc.pos[r]};

  key_list(*it.seg, pr.block, g, sc.keys);
  const size_t koff = size_t(g) * D;
  const vf c = set1(pr.c), ninf = set1(-INFINITY);
  int32_t kpos[kStep];
  const float* kp[kStep];
  const float* vp[kStep];
  for (size_t j0 = 0; j0 < sc.keys.size(); j0 += kStep) {
    const int nb = int(std::min<size_t>(kStep, sc.keys.size() - j0));
    const size_t* keys = sc.keys.data() + j0;
    int32_t smin = INT32_MAX, smax = INT32_MIN;
    for (int j = 0; j < nb; ++j) {
      kpos[j] = pr.kv_pos[keys[j]];
      smin = std::min(smin, kpos[j]);
      smax = std::max(smax, kpos[j]);
    }
    if (smin > pmax) continue;  // no row of the tile sees a key of this step
    gather_rows(pr, pr.kv.k, keys, nb, koff, sc.kf, kp);
    float* S = sc.s.data();
    for (int u0 = 0; u0 < RV; u0 += 3) {
      const float* Qt = sc.qt.data() + u0 * W;
      float* Su = S + u0 * W;
      switch (std::min(3, RV - u0)) {
        case 1:
          qk_step<1>(Qt, Rp, kp, nb, D, Su);
          break;
        case 2:
          qk_step<2>(Qt, Rp, kp, nb, D, Su);
          break;
        default:
          qk_step<3>(Qt, Rp, kp, nb, D, Su);
      }
    }
    // Online softmax, lanes over rows; S becomes P in place.
    for (int u = 0; u < RV; ++u) {
      const vi qp = loadi(sc.pos.data() + u * W);
      const vf mo = load(sc.m.data() + u * W);
      vf mx = ninf;
      for (int j = 0; j < nb; ++j) {
        float* sj = S + size_t(j) * Rp + u * W;
        const vf t = mul(load(sj), c);
        store(sj, t);
        mx = sel(le_i(set1i(kpos[j]), qp), max(mx, t), mx);
      }
      const vf mn = max(mo, mx);
      const vf alpha = sel(gt(mx, mo), exp2(sub(mo, mn)), set1(1.f));
      vf ls = zero();
      for (int j = 0; j < nb; ++j) {
        float* sj = S + size_t(j) * Rp + u * W;
        const vf p = sel(le_i(set1i(kpos[j]), qp), exp2(sub(load(sj), mn)), zero());
        store(sj, p);
        ls = add(ls, p);
      }
      store(sc.l.data() + u * W, add(mul(load(sc.l.data() + u * W), alpha), ls));
      store(sc.m.data() + u * W, mn);
      store(sc.alpha.data() + u * W, alpha);
    }
    for (int r = 0; r < R; ++r) sc.rows[r].alpha = sc.alpha[r];
    gather_rows(pr, pr.kv.v, keys, nb, koff, sc.vf, vp);
    pv_step(sc.rows.data(), R, Rp, vp, nb, D, kpos, smin, smax);
  }
  for (int r = 0; r < R; ++r) {
    float* o = pr.out + (it.i0 + size_t(r / G)) * pr.ldo + size_t(g * G + r % G) * D;
    const float* acc = sc.o.data() + size_t(r) * D;
    const float l = sc.l[r];
    const vf lv = set1(l);
    for (int d0 = 0; d0 < D; d0 += W) {
      const vmask m = first(std::min(W, D - d0));
      store_n(o + d0, l > 0.f ? div(load_n(acc + d0, m), lv) : zero(), m);
    }
  }
}

[[noreturn]] void fail(size_t seg, const std::string& what) {
  throw std::invalid_argument("[block_sparse_attention] segment " + std::to_string(seg) + ": " +
                              what);
}

void check(const AttentionShape& s, size_t block, size_t n_q, size_t n_kv,
           std::span<const SparseSegment> segments) {
  if (s.n_kv_heads <= 0 || s.n_heads <= 0 || s.n_heads % s.n_kv_heads != 0 || s.head_dim <= 0)
    throw std::invalid_argument("[block_sparse_attention] bad attention shape");
  if (block == 0) throw std::invalid_argument("[block_sparse_attention] block size 0");
  // CritiPrefill prunes full-attention layers only (methods.md); sliding-window, sink and
  // soft-capped layers attend densely, so this kernel does not implement their masks.
  if (s.window != 0 || s.sinks || s.softcap != 0.f)
    throw std::invalid_argument(
        "[block_sparse_attention] sliding window, sinks and soft-capping are not supported "
        "(full-attention layers only)");
  for (size_t i = 0; i < segments.size(); ++i) {
    const SparseSegment& sg = segments[i];
    if (sg.q_begin > sg.q_end || sg.q_end > n_q)
      fail(i, "query rows [" + std::to_string(sg.q_begin) + ", " + std::to_string(sg.q_end) +
                  ") outside [0, " + std::to_string(n_q) + ")");
    if (sg.own_begin > sg.own_end || sg.own_end > n_kv)
      fail(i, "dense key rows [" + std::to_string(sg.own_begin) + ", " +
                  std::to_string(sg.own_end) + ") outside [0, " + std::to_string(n_kv) + ")");
    if (sg.n_blocks > 0 && !sg.blocks) fail(i, "null block list");
    for (int g = 0; g < s.n_kv_heads; ++g)
      for (size_t b = 0; b < sg.n_blocks; ++b) {
        const int32_t x = sg.blocks[size_t(g) * sg.n_blocks + b];
        const std::string at = "kv head " + std::to_string(g) + ", block " + std::to_string(x);
        if (x < 0 || (size_t(x) + 1) * block > sg.own_begin)
          fail(i, at + " does not end at or before key row " + std::to_string(sg.own_begin));
        if (b > 0 && x <= sg.blocks[size_t(g) * sg.n_blocks + b - 1])
          fail(i, at + " is not after the previous one (lists must be strictly ascending)");
      }
  }
}

}  // namespace

void attention_block_sparse(const AttentionShape& s, size_t block, const float* q, size_t ldq,
                            const int32_t* q_pos, size_t n_q, const KVRows& kv,
                            const int32_t* kv_pos, size_t n_kv,
                            std::span<const SparseSegment> segments, float* out, size_t ldo) {
  check(s, block, n_q, n_kv, segments);
  const int G = s.n_heads / s.n_kv_heads;
  const Problem pr{&s, block, q, ldq, q_pos, kv, kv_pos, out, ldo, G, s.head_dim, s.scale * kLog2e};
  const size_t tq = size_t(std::max(1, kTileRows / G));
  std::vector<Item> items;
  double work = 0;  // parallel_for's flop-like units: QK and PV, 2 multiply-adds per element
  for (const SparseSegment& sg : segments) {
    const double keys = double(sg.n_blocks * block + (sg.own_end - sg.own_begin));
    work += 4.0 * double(sg.q_end - sg.q_begin) * keys * s.n_heads * s.head_dim;
    for (size_t i0 = sg.q_begin; i0 < sg.q_end; i0 += tq)
      for (int g = 0; g < s.n_kv_heads; ++g)
        items.push_back({&sg, i0, int(std::min(tq, sg.q_end - i0)), g});
  }
  if (items.empty()) return;
  std::vector<Scratch> scratch(static_cast<size_t>(parallel_slots()));
  parallel_for(items.size(), work,
               [&](size_t j, int slot) { tile(pr, items[j], scratch[size_t(slot)]); });
}

void attention_block_sparse_reference(const AttentionShape& s, size_t block, const float* q,
                                      size_t ldq, const int32_t* q_pos, size_t n_q, const float* k,
                                      const float* v, size_t ldkv, const int32_t* kv_pos,
                                      size_t n_kv, std::span<const SparseSegment> segments,
                                      double* out, size_t ldo) {
  check(s, block, n_q, n_kv, segments);
  const int G = s.n_heads / s.n_kv_heads, D = s.head_dim;
  std::vector<size_t> keys;
  std::vector<double> sc;
  for (const SparseSegment& sg : segments)
    for (int h = 0; h < s.n_heads; ++h) {
      // The head's keys, written out here rather than with the kernel's key_list.
      keys.clear();
      for (size_t b = 0; b < sg.n_blocks; ++b) {
        const size_t first = size_t(sg.blocks[size_t(h / G) * sg.n_blocks + b]) * block;
        for (size_t j = first; j < first + block; ++j) keys.push_back(j);
      }
      for (size_t j = sg.own_begin; j < sg.own_end; ++j) keys.push_back(j);
      sc.resize(keys.size());
      const size_t kvo = size_t(h / G) * D;
      for (size_t i = sg.q_begin; i < sg.q_end; ++i) {
        double m = -INFINITY;
        for (size_t j = 0; j < keys.size(); ++j) {
          if (kv_pos[keys[j]] > q_pos[i]) continue;
          double acc = 0;
          for (int d = 0; d < D; ++d)
            acc += double(q[i * ldq + size_t(h) * D + d]) * k[keys[j] * ldkv + kvo + d];
          sc[j] = acc * s.scale;
          m = std::max(m, sc[j]);
        }
        double l = 0;
        double* o = out + i * ldo + size_t(h) * D;
        for (int d = 0; d < D; ++d) o[d] = 0;
        for (size_t j = 0; j < keys.size(); ++j) {
          if (kv_pos[keys[j]] > q_pos[i]) continue;
          const double p = std::exp(sc[j] - m);
          l += p;
          for (int d = 0; d < D; ++d) o[d] += p * v[keys[j] * ldkv + kvo + d];
        }
        if (l > 0)
          for (int d = 0; d < D; ++d) o[d] /= l;
      }
    }
}

}  // namespace accel
