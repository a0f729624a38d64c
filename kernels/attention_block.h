// The per-block pieces shared by the fused quantized-KV decode kernels (attention_quant.cpp,
// attention_kivi.cpp): blocks of 32 keys with SIMD lanes over keys, which of them a query sees, the
// online-softmax update in the exp2 domain and the P.V accumulation of a few heads per pass. For
// those kernels only; must not change any operation or its order (both kernels' bits are defined
// by these sequences).
#pragma once
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>

#include <immintrin.h>

#include "kernels/simd.h"

// GCC 12's bug 105593 (see simd.h): _mm512_reduce_add_ps warns once inlined here.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

namespace accel::attention_block {

using namespace simd;

constexpr int kBlk = 32;          // keys per online-softmax block (part of the numerics)
constexpr int kBV = kBlk / W;     // score vectors per block
constexpr int kQuads = kBlk / 4;  // key quads per block: an int4 value block's line per group

#if defined(__AVX512F__)
// The lanes' sum in a fixed tree: lane i + lane i+8, then +4, +2, +1 (GCC's
// _mm512_reduce_add_ps, spelled out so that hsum_heads8 can follow the same tree).
inline float hsum(vf x) {
  const __m256 t = _mm256_add_ps(_mm512_extractf32x8_ps(x, 1), _mm512_castps512_ps256(x));
  const __m128 u = _mm_add_ps(_mm256_extractf128_ps(t, 1), _mm256_castps256_ps128(t));
  const __m128 v = _mm_add_ps(u, _mm_shuffle_ps(u, u, _MM_SHUFFLE(1, 0, 3, 2)));
  return _mm_cvtss_f32(_mm_add_ss(v, _mm_shuffle_ps(v, v, _MM_SHUFFLE(0, 0, 0, 1))));
}
// Reduces eight vectors at once in hsum's tree for each (op(a, b) and op(b, a) are the same
// float for add and max): out[h] = the reduction of x[h], with 23 operations in place of eight
// chains of eight.
template <class Op>
inline void reduce_heads8(const vf* x, float* out, Op op) {
  vf t[4], y[2];
  for (int k = 0; k < 4; ++k)  // chunks 0-1: x[2k]'s i op (i + 8); chunks 2-3: x[2k + 1]'s
    t[k] = op(_mm512_shuffle_f32x4(x[2 * k], x[2 * k + 1], _MM_SHUFFLE(1, 0, 1, 0)),
              _mm512_shuffle_f32x4(x[2 * k], x[2 * k + 1], _MM_SHUFFLE(3, 2, 3, 2)));
  for (int k = 0; k < 2; ++k)  // chunk j: head 4k + j's i op (i + 4), i < 4
    y[k] = op(_mm512_shuffle_f32x4(t[2 * k], t[2 * k + 1], _MM_SHUFFLE(2, 0, 2, 0)),
              _mm512_shuffle_f32x4(t[2 * k], t[2 * k + 1], _MM_SHUFFLE(3, 1, 3, 1)));
  // chunk j: head j's i op (i + 2) in lanes 0-1, head 4 + j's in lanes 2-3
  const vf v = op(_mm512_shuffle_ps(y[0], y[1], _MM_SHUFFLE(1, 0, 1, 0)),
                  _mm512_shuffle_ps(y[0], y[1], _MM_SHUFFLE(3, 2, 3, 2)));
  alignas(64) float e[16];
  _mm512_store_ps(e, op(v, _mm512_permute_ps(v, _MM_SHUFFLE(2, 3, 0, 1))));
  for (int j = 0; j < 4; ++j) {
    out[j] = e[4 * j];
    out[4 + j] = e[4 * j + 2];
  }
}
inline void hsum_heads8(const vf* x, float* out) {
  reduce_heads8(x, out, [](vf a, vf b) { return _mm512_add_ps(a, b); });
}
inline void hmax_heads8(const vf* x, float* out) {
  reduce_heads8(x, out, [](vf a, vf b) { return _mm512_max_ps(a, b); });
}
inline vmask mask_bits(uint32_t bits) {
  return vmask(bits & 0xffffu);
}
#else
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

#if defined(__AVX512VBMI__)
// Byte 4k + r of a 64-byte register holding four 16-byte rows (row r at bytes 16r..16r+15) is
// row r's byte k after _mm512_permutexvar_epi8 with this index: each 32-bit lane then holds byte k
// of the four rows, the operand shape of vpdpbusd. The int4 kernel's key-block rows (one element
// of 32 keys) are read this way (int4 value blocks are stored in that shape, kv_quant.h).
alignas(64) inline constexpr uint8_t kQuadIndex[64] = {
    0,  16, 32, 48, 1,  17, 33, 49, 2,  18, 34, 50, 3,  19, 35, 51, 4,  20, 36, 52, 5,  21,
    37, 53, 6,  22, 38, 54, 7,  23, 39, 55, 8,  24, 40, 56, 9,  25, 41, 57, 10, 26, 42, 58,
    11, 27, 43, 59, 12, 28, 44, 60, 13, 29, 45, 61, 14, 30, 46, 62, 15, 31, 47, 63};
#endif

// W fp16 values as floats, lane i taken where bit i of `bits` is set and 0 elsewhere (masked-off
// lanes are not read).
inline vf from_f16_masked(const uint16_t* p, uint32_t bits) {
#if defined(__AVX512BW__) && defined(__AVX512VL__)
  return _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(__mmask16(bits & 0xffffu), p));
#else
  alignas(32) uint16_t h[W];
  for (int i = 0; i < W; ++i) h[i] = (bits >> i & 1u) ? p[i] : 0;
#if defined(__AVX512F__)
  return _mm512_cvtph_ps(_mm256_load_si256(reinterpret_cast<const __m256i*>(h)));
#else
  return _mm256_cvtph_ps(_mm_load_si128(reinterpret_cast<const __m128i*>(h)));
#endif
#endif
}

inline float exp2_scalar(float x) {
  return lane0(simd::exp2(set1(x)));
}

// out[h] = hsum(x[h]) (sum) or hmax(x[h]) for HN vectors, eight at a time by reduce_heads8
// where AVX-512 has them (the same bits: the same tree per vector).
template <int HN>
inline void reduce_heads(const vf* x, float* out, bool sum) {
  int h = 0;
#if defined(__AVX512F__)
  for (; h + 8 <= HN; h += 8) sum ? hsum_heads8(x + h, out + h) : hmax_heads8(x + h, out + h);
#endif
  for (; h < HN; ++h) out[h] = sum ? hsum(x[h]) : hmax(x[h]);
}

// The online-softmax update of HN heads over NB consecutive blocks (block b's scores sc[b][h],
// lanes over keys; bit t of bits[b] set for a visible key t). Per block in order and per head,
// with ml[h] pointing at its running (m, l):
//   t = s * c; mb = max of t over visible keys; mn = max(m, mb);
//   alpha = mb > m ? exp2(m - mn) : 1;  p_t = visible ? exp2(t - mn) : 0 (to p[b] + h * kBlk);
//   l = l * alpha + hsum(p);  m = mn;  alpha to alpha[b][h].
// Each head's operations and their order are those of NB one-block updates in a row, for any HN
// and NB; the steps of the heads and blocks are interleaved so that their chains (horizontal
// max, exp2, horizontal sum) overlap: only mn and l pass from one block to the next, and every
// rescale factor comes from one exp2 over the lanes (elementwise, so lane b * HN + h is what
// head h of block b alone would get). Bit-identical to the one-head-at-a-time loop it replaced
// (2026-11-29; tests/kernels/attention_block_test.cpp).
template <int HN, int NB>
inline void block_softmax_blocks(const vf (*const* sc)[kBV], float c, const uint32_t* bits,
                                 float* const* ml, float* const* p, float* const* alpha) {
  static_assert(HN >= 1 && NB >= 1 && HN * NB <= W, "one lane per head and block for alpha");
  vf t[NB * HN][kBV], vmax[NB * HN];
  for (int b = 0; b < NB; ++b)
    for (int r = 0; r < kBV; ++r)
      for (int h = 0; h < HN; ++h) {
        const int i = b * HN + h;
        if (r == 0) vmax[i] = set1(-INFINITY);
        t[i][r] = mul(sc[b][h][r], set1(c));
        vmax[i] = max(vmax[i], sel(mask_bits(bits[b] >> (r * W)), t[i][r], set1(-INFINITY)));
      }
  alignas(64) float d[W] = {};  // lane b * HN + h: the argument of its rescale factor
  float mn[NB * HN], mb[NB * HN];
  bool grew[NB * HN];
  reduce_heads<NB * HN>(vmax, mb, /*sum=*/false);
  for (int h = 0; h < HN; ++h) {
    float m = ml[h][0];
    for (int b = 0; b < NB; ++b) {
      const int i = b * HN + h;
      mn[i] = std::max(m, mb[i]);
      grew[i] = mb[i] > m;
      d[i] = m - mn[i];
      m = mn[i];
    }
  }
  alignas(64) float e[W];
  store(e, simd::exp2(load(d)));
  vf ps[NB * HN];
  for (int b = 0; b < NB; ++b)
    for (int r = 0; r < kBV; ++r)
      for (int h = 0; h < HN; ++h) {
        const int i = b * HN + h;
        if (r == 0) ps[i] = zero();
        const vf pr =
            sel(mask_bits(bits[b] >> (r * W)), simd::exp2(sub(t[i][r], set1(mn[i]))), zero());
        store(p[b] + h * kBlk + r * W, pr);
        ps[i] = add(ps[i], pr);
      }
  float sums[NB * HN];
  reduce_heads<NB * HN>(ps, sums, /*sum=*/true);
  for (int h = 0; h < HN; ++h)
    for (int b = 0; b < NB; ++b) {
      const int i = b * HN + h;
      const float a = grew[i] ? e[i] : 1.f;
      ml[h][1] = ml[h][1] * a + sums[i];
      ml[h][0] = mn[i];
      alpha[b][h] = a;
    }
}

// The update of HN heads over one block: block_softmax_blocks with NB = 1.
template <int HN>
inline void block_softmax_heads(const vf (*sc)[kBV], float c, uint32_t bits, float* const* ml,
                                float* p, float* alpha) {
  const vf(*const scs[1])[kBV] = {sc};
  float* const ps[1] = {p};
  float* const as[1] = {alpha};
  block_softmax_blocks<HN, 1>(scs, c, &bits, ml, ps, as);
}

// block_softmax_heads for the first hn (<= HN) heads of sc: head h's (m, l) at part + h * stride,
// its probabilities at p + h * kBlk, its alpha at alpha[h].
template <int HN>
inline void softmax_heads_n(int hn, const vf (*sc)[kBV], float c, uint32_t bits, float* part,
                            size_t stride, float* p, float* alpha) {
  if (hn == HN) {
    float* ml[HN];
    for (int h = 0; h < HN; ++h) ml[h] = part + size_t(h) * stride;
    return block_softmax_heads<HN>(sc, c, bits, ml, p, alpha);
  }
  if constexpr (HN > 1) return softmax_heads_n<HN - 1>(hn, sc, c, bits, part, stride, p, alpha);
}

// block_softmax_blocks over NB consecutive blocks for the first hn (<= HN) heads: head h's (m, l)
// at part + h * stride, block b's probabilities at p[b] + h * kBlk and its alphas at alpha[b][h].
template <int HN, int NB>
inline void softmax_blocks_n(int hn, const vf (*const* sc)[kBV], float c, const uint32_t* bits,
                             float* part, size_t stride, float* const* p, float* const* alpha) {
  if (hn == HN) {
    float* ml[HN];
    for (int h = 0; h < HN; ++h) ml[h] = part + size_t(h) * stride;
    return block_softmax_blocks<HN, NB>(sc, c, bits, ml, p, alpha);
  }
  if constexpr (HN > 1)
    return softmax_blocks_n<HN - 1, NB>(hn, sc, c, bits, part, stride, p, alpha);
}

// The two ends of a P.V update of HN heads held in registers: ov = o_h * alpha_h, and back.
template <int NV, int HN>
inline void pv_begin(float* const* o, const float* alpha, vf (*ov)[NV]) {
  for (int h = 0; h < HN; ++h) {
    const vf a = set1(alpha[h]);  // o * 1 is exact
    for (int v = 0; v < NV; ++v) ov[h][v] = mul(load(o[h] + v * W), a);
  }
}
template <int NV, int HN>
inline void pv_end(float* const* o, const vf (*ov)[NV]) {
  for (int h = 0; h < HN; ++h)
    for (int v = 0; v < NV; ++v) store(o[h] + v * W, ov[h][v]);
}

// o_h = o_h * alpha_h, then o_h = fma(p_h[t], v_t, o_h) over visible t in order (v_t: row t of
// the value tile vt, NV vectors), for HN heads sharing each row load.
template <int NV, int HN>
void block_pv(float* const* o, const float* alpha, const float* const* p, uint32_t bits,
              const float* vt) {
  constexpr int D = NV * W;
  vf ov[HN][NV];
  pv_begin<NV, HN>(o, alpha, ov);
  for (int t = 0; t < kBlk; ++t) {
    if (!(bits >> t & 1u)) continue;
    const float* row = vt + size_t(t) * D;
    vf pj[HN];
    for (int h = 0; h < HN; ++h) pj[h] = set1(p[h][t]);
    for (int v = 0; v < NV; ++v) {
      const vf x = load(row + v * W);
      for (int h = 0; h < HN; ++h) ov[h][v] = fma(pj[h], x, ov[h][v]);
    }
  }
  pv_end<NV, HN>(o, ov);
}

// The same per-head sequence as block_pv, for HN heads over a slice of SW of the head's NV vectors
// at a time (each output element's operations and their order are block_pv's: o * alpha, then
// one fma per visible key in key order). More heads per loaded row than block_pv affords, so
// each row vector is loaded once per HN heads; the empty asm keeps the compiler from folding the
// load into every head's fma as a memory operand (which made the loop load-bound: HN loads of
// the same vector, 2026-11-28).
template <int NV, int HN, int SW>
void block_pv_sliced(float* const* o, const float* alpha, const float* const* p, uint32_t bits,
                     const float* vt) {
  static_assert(NV % SW == 0, "slices must tile the head");
  constexpr int D = NV * W;
  for (int s0 = 0; s0 < NV; s0 += SW) {
    vf ov[HN][SW];
    for (int h = 0; h < HN; ++h) {
      const vf a = set1(alpha[h]);
      for (int v = 0; v < SW; ++v) ov[h][v] = mul(load(o[h] + (s0 + v) * W), a);
    }
    for (int t = 0; t < kBlk; ++t) {
      if (!(bits >> t & 1u)) continue;
      const float* row = vt + size_t(t) * D + s0 * W;
      vf x[SW];
      for (int v = 0; v < SW; ++v) {
        x[v] = load(row + v * W);
        asm("" : "+v"(x[v]));
      }
      for (int h = 0; h < HN; ++h) {
        const vf pj = set1(p[h][t]);
        for (int v = 0; v < SW; ++v) ov[h][v] = fma(pj, x[v], ov[h][v]);
      }
    }
    for (int h = 0; h < HN; ++h)
      for (int v = 0; v < SW; ++v) store(o[h] + (s0 + v) * W, ov[h][v]);
  }
}

// The last hn (<= HN) heads of a P.V sweep, in one block_pv pass.
template <int NV, int HN>
void block_pv_n(int hn, float* const* o, const float* alpha, const float* const* p, uint32_t bits,
                const float* vt) {
  if (hn == HN) return block_pv<NV, HN>(o, alpha, p, bits, vt);
  if constexpr (HN > 1) return block_pv_n<NV, HN - 1>(hn, o, alpha, p, bits, vt);
}

// o_h = o_h * alpha_h + P_h . V over the block for the G heads of a kv group, whose partial
// outputs start at part + h * stride + o_off and probabilities at p + h * kBlk: with AVX-512 and
// an even NV eight heads at a time over slices of two vectors (block_pv_sliced: 16 accumulators,
// one load of each row vector per 8 heads; 14% faster than block_pv's passes on the seed shape,
// Zen 5, 2026-11-28), the rest HN at a time (block_pv). Each head's bits are block_pv's however
// the heads are grouped.
template <int NV, int HN>
void pv_heads(int G, float* part, size_t stride, size_t o_off, const float* alpha, const float* p,
              uint32_t bits, const float* vt) {
  constexpr int kMax = HN > 8 ? HN : 8;
  float* o[kMax];
  const float* pp[kMax];
  int h = 0;
  auto gather = [&](int n) {
    for (int u = 0; u < n; ++u) {
      o[u] = part + size_t(h + u) * stride + o_off;
      pp[u] = p + size_t(h + u) * kBlk;
    }
  };
#if defined(__AVX512F__)
  if constexpr (NV % 2 == 0)
    for (; h + 8 <= G; h += 8) {
      gather(8);
      block_pv_sliced<NV, 8, 2>(o, alpha + h, pp, bits, vt);
    }
#endif
  for (; h < G; h += HN) {
    const int hn = std::min(HN, G - h);
    gather(hn);
    block_pv_n<NV, HN>(hn, o, alpha + h, pp, bits, vt);
  }
}

// Bit t set when key j0 + t (t < nb <= 32) is visible at query position qp whose lowest visible
// key position is ql (attention_window_lo).
inline uint32_t visible_bits(const int32_t* pos, int nb, int32_t qp, int32_t ql) {
#if defined(__AVX512F__)
  uint32_t bits = 0;
  for (int r = 0; r * 16 < nb; ++r) {
    const __mmask16 m = __mmask16((1u << std::min(16, nb - r * 16)) - 1u);
    const __m512i p = _mm512_maskz_loadu_epi32(m, pos + r * 16);
    const __mmask16 le = _mm512_mask_cmple_epi32_mask(m, p, _mm512_set1_epi32(qp));
    bits |= uint32_t(_mm512_mask_cmpge_epi32_mask(le, p, _mm512_set1_epi32(ql))) << (r * 16);
  }
  return bits;
#else
  uint32_t bits = 0;
  for (int t = 0; t < nb; ++t) bits |= uint32_t(pos[t] <= qp && pos[t] >= ql) << t;
  return bits;
#endif
}

}  // namespace accel::attention_block

#pragma GCC diagnostic pop
