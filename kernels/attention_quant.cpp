// Fused attention over quantized KV records (attention_quant.h). Must not make any operation's
// order depend on the batch, the thread count or which thread runs a chunk: the numerics are the
// fixed sequence described in the header.
//
// Design. One work item is (query row, kv head, chunk) for decode-sized batches (split-K, then a
// separate merge pass) or (query row, kv head) for large batches (the item runs its chunks in
// order and merges them itself); both evaluate the same per-chunk sequence and the same merge, so
// they give the same bits. All query heads of a kv group share each dequantized K/V block (GQA by
// index: nothing is repeated in memory). A block's records are dequantized into a 32 x head_dim
// f32 tile that stays in L1 (16 KB at head_dim 128): the scores then need one horizontal sum per
// key, done for W keys at once by a transpose-add tree. Hand-written with the simd.h layer because
// the reduction order is part of the result and the loop is the whole cost of long-context decode.
#include "kernels/attention_quant.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstring>
#include <vector>

#include <immintrin.h>

#include "kernels/quant.h"
#include "kernels/simd.h"
#include "kernels/threading.h"

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif

namespace accel {

namespace {

using namespace simd;

constexpr int kBlk = 32;       // keys per online-softmax block (part of the numerics)
constexpr int kBV = kBlk / W;  // score vectors per block
constexpr int kMaxD = 256;
constexpr float kLog2e = 1.4426950408889634f;

// Tile position k of an int4 head holds element int4_lane_element(k): dequantizing W bytes gives
// W low nibbles (even elements) then W high nibbles (odd elements).
int int4_lane_element(int k) {
  const int base = k / (2 * W) * (2 * W), r = k % (2 * W);
  return r < W ? base + 2 * r : base + 2 * (r - W) + 1;
}

int lane_element(KVQuant f, int k) {
  return f == KVQuant::Int4 ? int4_lane_element(k) : k;
}

float half_to_float(const uint8_t* p) {
  uint16_t h;
  std::memcpy(&h, p, 2);
  return _cvtsh_ss(h);  // exact, like fp16_to_f32
}

#if defined(__AVX512F__)
inline void nibbles(const uint8_t* p, vf& lo, vf& hi) {
  const __m512i b = _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  lo = _mm512_cvtepi32_ps(_mm512_and_si512(b, _mm512_set1_epi32(15)));
  hi = _mm512_cvtepi32_ps(_mm512_srli_epi32(b, 4));
}
// Lane k of the result = the sum of a[k]'s lanes, by a fixed tree.
inline vf transpose_sum(const vf* a) {
  vf s2[8];
  for (int i = 0; i < 8; ++i)
    s2[i] = _mm512_add_ps(_mm512_unpacklo_ps(a[2 * i], a[2 * i + 1]),
                          _mm512_unpackhi_ps(a[2 * i], a[2 * i + 1]));
  vf s4[4];
  for (int i = 0; i < 4; ++i) {
    const __m512d x = _mm512_castps_pd(s2[2 * i]), y = _mm512_castps_pd(s2[2 * i + 1]);
    s4[i] = _mm512_add_ps(_mm512_castpd_ps(_mm512_unpacklo_pd(x, y)),
                          _mm512_castpd_ps(_mm512_unpackhi_pd(x, y)));
  }
  const vf u0 = _mm512_add_ps(_mm512_shuffle_f32x4(s4[0], s4[1], 0x88),
                              _mm512_shuffle_f32x4(s4[0], s4[1], 0xDD));
  const vf u1 = _mm512_add_ps(_mm512_shuffle_f32x4(s4[2], s4[3], 0x88),
                              _mm512_shuffle_f32x4(s4[2], s4[3], 0xDD));
  return _mm512_add_ps(_mm512_shuffle_f32x4(u0, u1, 0x88), _mm512_shuffle_f32x4(u0, u1, 0xDD));
}
inline float hsum(vf x) {
  return _mm512_reduce_add_ps(x);
}
inline vmask mask_bits(uint32_t bits) {
  return vmask(bits & 0xffffu);
}
#else
inline void nibbles(const uint8_t* p, vf& lo, vf& hi) {
  const __m256i b = _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)));
  lo = _mm256_cvtepi32_ps(_mm256_and_si256(b, _mm256_set1_epi32(15)));
  hi = _mm256_cvtepi32_ps(_mm256_srli_epi32(b, 4));
}
inline vf transpose_sum(const vf* a) {
  vf s2[4];
  for (int i = 0; i < 4; ++i)
    s2[i] = _mm256_add_ps(_mm256_unpacklo_ps(a[2 * i], a[2 * i + 1]),
                          _mm256_unpackhi_ps(a[2 * i], a[2 * i + 1]));
  vf s4[2];
  for (int i = 0; i < 2; ++i) {
    const __m256d x = _mm256_castps_pd(s2[2 * i]), y = _mm256_castps_pd(s2[2 * i + 1]);
    s4[i] = _mm256_add_ps(_mm256_castpd_ps(_mm256_unpacklo_pd(x, y)),
                          _mm256_castpd_ps(_mm256_unpackhi_pd(x, y)));
  }
  return _mm256_add_ps(_mm256_permute2f128_ps(s4[0], s4[1], 0x20),
                       _mm256_permute2f128_ps(s4[0], s4[1], 0x31));
}
inline float hsum(vf x) {
  const __m128 h = _mm_add_ps(_mm256_castps256_ps128(x), _mm256_extractf128_ps(x, 1));
  const __m128 q = _mm_add_ps(h, _mm_movehl_ps(h, h));
  return _mm_cvtss_f32(_mm_add_ss(q, _mm_movehdup_ps(q)));
}
inline vmask mask_bits(uint32_t bits) {
  const __m256i lane = _mm256_setr_epi32(1, 2, 4, 8, 16, 32, 64, 128);
  const __m256i b = _mm256_and_si256(_mm256_set1_epi32(int(bits & 0xffu)), lane);
  return _mm256_castsi256_ps(_mm256_cmpeq_epi32(b, lane));
}
#endif

float exp2_scalar(float x) {
  return lane0(simd::exp2(set1(x)));
}

// One record's values in tile lane order; the values are kv_dequantize_head's, bit for bit.
void dequant_int4(const uint8_t* rec, int D, float* t) {
  const uint8_t* sc = rec + D / 2;
  const uint8_t* zc = sc + 2 * (D / kKVQuantGroup);
  for (int g = 0; g < D / kKVQuantGroup; ++g) {
    const vf s = set1(half_to_float(sc + 2 * g)), z = set1(half_to_float(zc + 2 * g));
    for (int h = 0; h < kKVQuantGroup / (2 * W); ++h) {
      vf lo, hi;
      nibbles(rec + g * (kKVQuantGroup / 2) + h * W, lo, hi);
      float* dst = t + g * kKVQuantGroup + h * 2 * W;
      store(dst, mul(sub(lo, z), s));
      store(dst + W, mul(sub(hi, z), s));
    }
  }
}

void dequant_q8(const uint8_t* rec, int D, float* t) {
  for (int g = 0; g < D / kKVQuantGroup; ++g) {
    const uint8_t* blk = rec + g * sizeof(BlockQ8_0);
    const vf d = set1(half_to_float(blk));
    const int8_t* qs = reinterpret_cast<const int8_t*>(blk + 2);
    for (int h = 0; h < kKVQuantGroup / W; ++h)
      store(t + g * kKVQuantGroup + h * W, mul(from_i8(qs + h * W), d));
  }
}

// The same values in element order (for the dequantize-then-attend path): the lane-order vectors
// interleaved, which moves values without changing them.
void dequant_int4_natural(const uint8_t* rec, int D, float* x) {
  const uint8_t* sc = rec + D / 2;
  const uint8_t* zc = sc + 2 * (D / kKVQuantGroup);
  for (int g = 0; g < D / kKVQuantGroup; ++g) {
    const vf s = set1(half_to_float(sc + 2 * g)), z = set1(half_to_float(zc + 2 * g));
    for (int h = 0; h < kKVQuantGroup / (2 * W); ++h) {
      vf lo, hi;
      nibbles(rec + g * (kKVQuantGroup / 2) + h * W, lo, hi);
      lo = mul(sub(lo, z), s);
      hi = mul(sub(hi, z), s);
      float* dst = x + g * kKVQuantGroup + h * 2 * W;
#if defined(__AVX512F__)
      const __m512i first =
          _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
      const __m512i second =
          _mm512_setr_epi32(8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
      store(dst, _mm512_permutex2var_ps(lo, first, hi));
      store(dst + W, _mm512_permutex2var_ps(lo, second, hi));
#else
      const __m256 a = _mm256_unpacklo_ps(lo, hi), b = _mm256_unpackhi_ps(lo, hi);
      store(dst, _mm256_permute2f128_ps(a, b, 0x20));
      store(dst + W, _mm256_permute2f128_ps(a, b, 0x31));
#endif
    }
  }
}

struct Problem {
  const float* q;
  size_t ldq;
  const int32_t* q_pos;
  size_t n_q;
  QuantKV kv;
  const int32_t* kv_pos;
  size_t n_kv;
  float* out;
  size_t ldo;
  int D, G, Hkv;
  size_t rec;  // record bytes
  size_t chunk, n_chunks;
  float c;  // scale * log2(e)
  void (*dequant)(const uint8_t*, int, float*);
};

// Per-slot scratch: the K and V tiles, the group's queries in lane order, the block's p.
struct Scratch {
  std::vector<float> kt, vt, q, p, alpha;
  void fit(const Problem& pr) {
    kt.assign(size_t(kBlk) * size_t(pr.D), 0.f);
    vt.assign(size_t(kBlk) * size_t(pr.D), 0.f);
    q.resize(size_t(pr.G) * size_t(pr.D));
    p.resize(size_t(pr.G) * kBlk);
    alpha.resize(size_t(pr.G));
  }
};

// A chunk's partial result per query head of the group: [m, l, o[D]] (o in lane order).
size_t part_stride(const Problem& pr) {
  return size_t(pr.D) + 2;
}

template <int NV>
void block_scores(const float* q, const float* kt, vf* sc) {
  constexpr int D = NV * W;
  vf qv[NV];
  for (int v = 0; v < NV; ++v) qv[v] = load(q + v * W);
  for (int r = 0; r < kBV; ++r) {
    vf acc[W];
    for (int k = 0; k < W; ++k) {
      const float* row = kt + size_t(r * W + k) * D;
      vf a = zero();
      for (int v = 0; v < NV; ++v) a = fma(qv[v], load(row + v * W), a);
      acc[k] = a;
    }
    sc[r] = transpose_sum(acc);
  }
}

template <int NV>
void block_pv(float* o, float alpha, const float* p, uint32_t bits, const float* vt) {
  constexpr int D = NV * W;
  vf ov[NV];
  const vf a = set1(alpha);  // o * 1 is exact
  for (int v = 0; v < NV; ++v) ov[v] = mul(load(o + v * W), a);
  for (int t = 0; t < kBlk; ++t) {
    if (!(bits >> t & 1u)) continue;
    const vf pj = set1(p[t]);
    const float* row = vt + size_t(t) * D;
    for (int v = 0; v < NV; ++v) ov[v] = fma(pj, load(row + v * W), ov[v]);
  }
  for (int v = 0; v < NV; ++v) store(o + v * W, ov[v]);
}

// The online-softmax update of one head over one block; returns alpha and writes p.
float block_softmax(const vf* sc, float c, uint32_t bits, float* m, float* l, float* p) {
  vf t[kBV];
  float mb = -INFINITY;
  for (int r = 0; r < kBV; ++r) {
    t[r] = mul(sc[r], set1(c));
    mb = std::max(mb, hmax(sel(mask_bits(bits >> (r * W)), t[r], set1(-INFINITY))));
  }
  const float mn = std::max(*m, mb);
  const float alpha = mb > *m ? exp2_scalar(*m - mn) : 1.f;
  vf ps = zero();
  for (int r = 0; r < kBV; ++r) {
    const vf pr = sel(mask_bits(bits >> (r * W)), simd::exp2(sub(t[r], set1(mn))), zero());
    store(p + r * W, pr);
    ps = add(ps, pr);
  }
  *l = *l * alpha + hsum(ps);
  *m = mn;
  return alpha;
}

template <int NV>
void run_chunk_nv(const Problem& pr, size_t i, int g, size_t ch, Scratch& sc, float* part) {
  const size_t stride = part_stride(pr);
  for (int h = 0; h < pr.G; ++h) {
    float* P = part + size_t(h) * stride;
    P[0] = -INFINITY;
    std::fill(P + 1, P + stride, 0.f);
  }
  const int32_t qp = pr.q_pos[i];
  const uint8_t* kbase = pr.kv.k + size_t(g) * pr.kv.head_stride;
  const uint8_t* vbase = pr.kv.v + size_t(g) * pr.kv.head_stride;
  const size_t j_end = std::min(pr.n_kv, (ch + 1) * pr.chunk);
  for (size_t j0 = ch * pr.chunk; j0 < j_end; j0 += kBlk) {
    const int nb = int(std::min<size_t>(kBlk, j_end - j0));
    uint32_t bits = 0;
    for (int t = 0; t < nb; ++t) bits |= uint32_t(pr.kv_pos[j0 + size_t(t)] <= qp) << t;
    if (!bits) continue;
    for (int t = 0; t < nb; ++t)
      if (bits >> t & 1u)
        pr.dequant(kbase + (j0 + size_t(t)) * pr.rec, pr.D, &sc.kt[size_t(t) * size_t(pr.D)]);
    float* alpha = sc.alpha.data();
    for (int h = 0; h < pr.G; ++h) {
      vf s[kBV];
      block_scores<NV>(&sc.q[size_t(h) * size_t(pr.D)], sc.kt.data(), s);
      float* P = part + size_t(h) * stride;
      alpha[h] = block_softmax(s, pr.c, bits, &P[0], &P[1], &sc.p[size_t(h) * kBlk]);
    }
    for (int t = 0; t < nb; ++t)
      if (bits >> t & 1u)
        pr.dequant(vbase + (j0 + size_t(t)) * pr.rec, pr.D, &sc.vt[size_t(t) * size_t(pr.D)]);
    for (int h = 0; h < pr.G; ++h)
      block_pv<NV>(part + size_t(h) * stride + 2, alpha[h], &sc.p[size_t(h) * kBlk], bits,
                   sc.vt.data());
  }
}

void run_chunk(const Problem& pr, size_t i, int g, size_t ch, Scratch& sc, float* part) {
  switch (pr.D / W) {
    case 2:
      return run_chunk_nv<2>(pr, i, g, ch, sc, part);
    case 4:
      return run_chunk_nv<4>(pr, i, g, ch, sc, part);
    case 6:
      return run_chunk_nv<6>(pr, i, g, ch, sc, part);
    case 8:
      return run_chunk_nv<8>(pr, i, g, ch, sc, part);
    case 12:
      return run_chunk_nv<12>(pr, i, g, ch, sc, part);
    case 16:
      return run_chunk_nv<16>(pr, i, g, ch, sc, part);
    case 20:
      return run_chunk_nv<20>(pr, i, g, ch, sc, part);
    case 24:
      return run_chunk_nv<24>(pr, i, g, ch, sc, part);
    case 28:
      return run_chunk_nv<28>(pr, i, g, ch, sc, part);
    case 32:
      return run_chunk_nv<32>(pr, i, g, ch, sc, part);
  }
  assert(false && "head_dim / W not instantiated");
}

// The group's queries of row i in tile lane order.
void load_queries(const Problem& pr, size_t i, int g, Scratch& sc) {
  for (int h = 0; h < pr.G; ++h) {
    const float* src = pr.q + i * pr.ldq + size_t(g * pr.G + h) * size_t(pr.D);
    float* dst = &sc.q[size_t(h) * size_t(pr.D)];
    for (int k = 0; k < pr.D; ++k) dst[k] = src[lane_element(pr.kv.format, k)];
  }
}

// Merges the chunks of query row i, head g*G + h, in chunk order; `parts` points at chunk 0's
// partial of that head, successive chunks `chunk_stride` floats apart.
void merge(const Problem& pr, size_t i, int head, const float* parts, size_t chunk_stride) {
  float* out = pr.out + i * pr.ldo + size_t(head) * size_t(pr.D);
  float M = -INFINITY;
  for (size_t ch = 0; ch < pr.n_chunks; ++ch) {
    const float* P = parts + ch * chunk_stride;
    if (P[1] > 0) M = std::max(M, P[0]);
  }
  if (M == -INFINITY) {
    std::fill(out, out + pr.D, 0.f);
    return;
  }
  float l = 0, o[kMaxD];
  std::fill(o, o + pr.D, 0.f);
  for (size_t ch = 0; ch < pr.n_chunks; ++ch) {
    const float* P = parts + ch * chunk_stride;
    if (!(P[1] > 0)) continue;  // an empty chunk contributes nothing
    const float w = exp2_scalar(P[0] - M);
    l = l + P[1] * w;
    const vf wv = set1(w);
    for (int d = 0; d < pr.D; d += W) store(o + d, fma(load(P + 2 + d), wv, load(o + d)));
  }
  const vf lv = set1(l);
  for (int d = 0; d < pr.D; d += W) store(o + d, div(load(o + d), lv));
  for (int k = 0; k < pr.D; ++k) out[lane_element(pr.kv.format, k)] = o[k];
}

double quant_attention_work(const AttentionShape& s, size_t n_q, size_t n_kv) {
  return 4.0 * double(n_q) * double(n_kv) * double(s.n_heads) * double(s.head_dim);
}

}  // namespace

void attention_quant(const AttentionShape& s, const float* q, size_t ldq, const int32_t* q_pos,
                     size_t n_q, const QuantKV& kv, const int32_t* kv_pos, size_t n_kv, float* out,
                     size_t ldo, size_t chunk) {
  assert(s.n_kv_heads > 0 && s.n_heads % s.n_kv_heads == 0);
  assert(s.head_dim % kKVQuantGroup == 0 && s.head_dim <= kMaxD);
  assert(chunk > 0 && chunk % kBlk == 0);
  if (n_q == 0) return;
  Problem pr{q,
             ldq,
             q_pos,
             n_q,
             kv,
             kv_pos,
             n_kv,
             out,
             ldo,
             s.head_dim,
             s.n_heads / s.n_kv_heads,
             s.n_kv_heads,
             kv_quant_record_bytes(kv.format, s.head_dim),
             chunk,
             std::max<size_t>(1, (n_kv + chunk - 1) / chunk),
             s.scale * kLog2e,
             kv.format == KVQuant::Int4 ? &dequant_int4 : &dequant_q8};
  const size_t stride = part_stride(pr), G = size_t(pr.G);
  const size_t rows = n_q * size_t(pr.Hkv);
  std::vector<Scratch> scratch(static_cast<size_t>(parallel_slots()));
  const double work = quant_attention_work(s, n_q, n_kv);
  if (rows >= size_t(2 * num_threads()) || pr.n_chunks == 1) {
    // Enough (row, kv head) items: each runs its chunks in order and merges them itself.
    std::vector<std::vector<float>> parts(scratch.size());
    parallel_for(rows, work, [&](size_t it, int slot) {
      Scratch& sc = scratch[size_t(slot)];
      if (sc.kt.empty()) sc.fit(pr);
      std::vector<float>& part = parts[size_t(slot)];
      part.resize(pr.n_chunks * G * stride);
      const size_t i = it / size_t(pr.Hkv);
      const int g = int(it % size_t(pr.Hkv));
      load_queries(pr, i, g, sc);
      for (size_t ch = 0; ch < pr.n_chunks; ++ch)
        run_chunk(pr, i, g, ch, sc, &part[ch * G * stride]);
      for (size_t h = 0; h < G; ++h) merge(pr, i, g * pr.G + int(h), &part[h * stride], G * stride);
    });
    return;
  }
  // Split-K: one item per (row, kv head, chunk), then the merge as a separate pass.
  std::vector<float> part(rows * pr.n_chunks * G * stride);
  parallel_for(rows * pr.n_chunks, work, [&](size_t it, int slot) {
    Scratch& sc = scratch[size_t(slot)];
    if (sc.kt.empty()) sc.fit(pr);
    const size_t row = it / pr.n_chunks, ch = it % pr.n_chunks;
    const size_t i = row / size_t(pr.Hkv);
    const int g = int(row % size_t(pr.Hkv));
    load_queries(pr, i, g, sc);
    run_chunk(pr, i, g, ch, sc, &part[(row * pr.n_chunks + ch) * G * stride]);
  });
  parallel_for(
      n_q * size_t(s.n_heads), double(n_q) * s.n_heads * pr.n_chunks * pr.D, [&](size_t it, int) {
        const size_t i = it / size_t(s.n_heads);
        const int head = int(it % size_t(s.n_heads));
        const size_t row = i * size_t(pr.Hkv) + size_t(head / pr.G);
        merge(pr, i, head, &part[row * pr.n_chunks * G * stride + size_t(head % pr.G) * stride],
              G * stride);
      });
}

void dequantize_kv_rows(const QuantKV& kv, int n_kv_heads, int head_dim, size_t j0, size_t n,
                        float* k_out, float* v_out, size_t ld) {
  assert(head_dim % kKVQuantGroup == 0);
  const size_t rec = kv_quant_record_bytes(kv.format, head_dim);
  const auto dq = kv.format == KVQuant::Int4 ? &dequant_int4_natural : &dequant_q8;
  const double work = double(n) * n_kv_heads * head_dim * 4.0;
  parallel_ranges(n, work, [&](size_t b, size_t e, int) {
    for (size_t j = b; j < e; ++j)
      for (int g = 0; g < n_kv_heads; ++g) {
        const size_t off = size_t(g) * kv.head_stride + (j0 + j) * rec;
        float* ko = k_out + j * ld + size_t(g) * size_t(head_dim);
        float* vo = v_out + j * ld + size_t(g) * size_t(head_dim);
        dq(kv.k + off, head_dim, ko);
        dq(kv.v + off, head_dim, vo);
      }
  });
}

}  // namespace accel
