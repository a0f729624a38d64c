// Fused attention on a KIVI cache (attention_kivi.h). Must not make any operation's order depend on
// the batch, the thread count or which thread runs a chunk (the numerics are the fixed sequence in
// the header), and must not hold more than one block's tiles per thread: no cache-sized scratch.
//
// Design. One work item is (query row, kv head, chunk) for decode-sized batches (split-K, then a
// merge pass) or (query row, kv head) for larger ones (the item runs its chunks in order and merges
// each as it finishes); both evaluate the same per-chunk sequence and the same merge, so they give
// the same bits. All G query heads of a kv group share each block's decoded codes (once per block;
// the AVX-512 scores decode a key row once per pass of up to 8 heads).
// Keys: per-channel codes make q . k̂ = sum_e (q_e s_e) c_et + sum_e q_e m_e, so a block costs one
// multiply per (head, channel) for q ⊙ s, one FMA chain for the bias, and then G FMA chains over
// the codes, lanes over keys, never dequantized. Values: per-token records, dequantized exactly.
// Tile positions follow the pack order (code_at) rather than token / element order, whatever the
// vector width; outputs are put back in element order. The AVX2 build decodes a block's key codes
// into a 32 x D float tile and its values into a 32 x D tile in L1. The AVX-512 build decodes each
// code row in registers where it is used (the scores; P.V in one pass when it holds the group's
// heads, else one value group for up to 8 heads at a time), the same values in the same
// operations, so the same bits, without the tiles' stores and loads: 1.45x faster at the small
// shape, 32K keys; 0.84-0.99x the time at the seed shape (Zen 5, 2026-11-29). Both widths run the
// tests.
#include "kernels/attention_kivi.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include <immintrin.h>

#include "kernels/attention_block.h"
#include "kernels/check.h"
#include "kernels/kv_quant_kivi.h"
#include "kernels/simd.h"
#include "kernels/threading.h"

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif

namespace accel {

namespace {

using namespace simd;

using namespace attention_block;  // kBlk keys per block (one key block), kBV score vectors
static_assert(kBlk == kKiviGroup);
constexpr int kMaxD = 256;
constexpr int kMaxG = 64;      // query heads per kv head (the heads' pointer arrays)
constexpr size_t kPartO = 16;  // a partial: m at [0], l at [1], o[D] from [kPartO]
constexpr float kLog2e = 1.4426950408889634f;

#if defined(__AVX512F__)
constexpr int kScoreHeads = 8;  // 8 heads x 2 key vectors of accumulators
#else
// 3 heads x 4 key vectors: 12 independent FMA chains cover the FMA latency (G = 3, the small
// family's, took a 2-head and a 1-head pass with 8 and 4); code rows are FMA memory operands.
constexpr int kScoreHeads = 3;
#endif

// An fp16 at p, exactly (F16C; fp16_to_f32's value).
inline float half_at(const uint8_t* p) {
  uint16_t h;
  std::memcpy(&h, p, 2);
  return _cvtsh_ss(h);
}

// Code index held at tile position p (p = 8 r + lane) of a decoded group: decode32's order.
int code_at(int bits, int p) {
  const int r = p / 8, lane = p % 8;
  return bits == 4 ? r / 2 * 16 + 2 * lane + r % 2 : 4 * lane + r;
}

// One group's 32 codes into dst[0..32) in tile order: codes as exact floats, or (kDequant) their
// values c * s + m with kivi_dequant's two roundings.
template <bool kDequant>
inline void decode32(const uint8_t* codes, int bits, float s, float m, float* dst) {
  const __m256 sv = _mm256_set1_ps(s), mv = _mm256_set1_ps(m);
  auto put = [&](float* at, __m256i c) {
    __m256 x = _mm256_cvtepi32_ps(c);
    if constexpr (kDequant) x = _mm256_add_ps(_mm256_mul_ps(x, sv), mv);
    _mm256_storeu_ps(at, x);
  };
  if (bits == 4) {
    const __m256i low = _mm256_set1_epi32(15);
    for (int h = 0; h < 2; ++h) {
      const __m256i b =
          _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(codes + 8 * h)));
      put(dst + 16 * h, _mm256_and_si256(b, low));
      put(dst + 16 * h + 8, _mm256_srli_epi32(b, 4));
    }
  } else {
    const __m256i b =
        _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(codes)));
    const __m256i low = _mm256_set1_epi32(3);
    put(dst, _mm256_and_si256(b, low));
    put(dst + 8, _mm256_and_si256(_mm256_srli_epi32(b, 2), low));
    put(dst + 16, _mm256_and_si256(_mm256_srli_epi32(b, 4), low));
    put(dst + 24, _mm256_srli_epi32(b, 6));
  }
}

// A group's packed codes split into their bit fields, one code per byte: f[k] holds field k of
// each byte (code (8 / bits) * i + k of byte i): f[0], f[1] over 16 bytes for 4 bits, f[0..3]
// over 8 bytes for 2 bits. Shared by the two decodes below, which only order the bytes.
inline void code_fields(const uint8_t* codes, int bits, __m128i* f) {
  if (bits == 4) {
    const __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i*>(codes));
    const __m128i m = _mm_set1_epi8(15);
    f[0] = _mm_and_si128(c, m);
    f[1] = _mm_and_si128(_mm_srli_epi16(c, 4), m);
  } else {
    const __m128i c = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(codes));
    const __m128i m = _mm_set1_epi8(3);
    f[0] = _mm_and_si128(c, m);
    f[1] = _mm_and_si128(_mm_srli_epi16(c, 2), m);
    f[2] = _mm_and_si128(_mm_srli_epi16(c, 4), m);
    f[3] = _mm_and_si128(_mm_srli_epi16(c, 6), m);
  }
}

// One group's 32 codes as kivi_dequant's values (c * s + m, two roundings) in code order: dst[i]
// is code i. The prefill path's decode (kivi_dequantize_view); decode32 keeps the pack order
// instead because the fused kernel only needs a fixed permutation.
inline void dequant32_in_order(const uint8_t* codes, int bits, float s, float m, float* dst) {
  __m128i f[4], lo, hi;  // codes 0..15 and 16..31 as bytes
  code_fields(codes, bits, f);
  if (bits == 4) {
    lo = _mm_unpacklo_epi8(f[0], f[1]);
    hi = _mm_unpackhi_epi8(f[0], f[1]);
  } else {
    const __m128i c01 = _mm_unpacklo_epi8(f[0], f[1]), c23 = _mm_unpacklo_epi8(f[2], f[3]);
    lo = _mm_unpacklo_epi16(c01, c23);
    hi = _mm_unpackhi_epi16(c01, c23);
  }
  const __m256 sv = _mm256_set1_ps(s), mv = _mm256_set1_ps(m);
  auto put = [&](float* at, __m128i bytes) {
    const __m256 x = _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(bytes));
    _mm256_storeu_ps(at, _mm256_add_ps(_mm256_mul_ps(x, sv), mv));
  };
  put(dst, lo);
  put(dst + 8, _mm_srli_si128(lo, 8));
  put(dst + 16, hi);
  put(dst + 24, _mm_srli_si128(hi, 8));
}

struct Problem {
  const float* q;
  size_t ldq;
  const int32_t* q_pos;
  KiviKV kv;
  const int32_t* kv_pos;
  size_t n_kv;
  float* out;
  size_t ldo;
  int D, G, Hkv;
  size_t kbb, vrb, cb;  // key block, value record and group code bytes
  size_t n_chunks;
  float c;  // scale * log2(e)
  int window;
  const float* sinks;
  int perm[kBlk];  // code_at(bits, p)
};

size_t part_stride(const Problem& pr) {
  return size_t(pr.D) + kPartO;
}

// Per-slot tiles: the block's key codes (or f32 keys) [D][32] and values [32][D], both in tile
// order, q ⊙ s per head, the block's probabilities, and the chunk partials.
struct Scratch {
  std::vector<float> kt, vt, qs, p, alpha, bias, part, acc;
  int fitted_D = 0, fitted_G = 0;
  void fit(const Problem& pr) {
    if (fitted_D == pr.D && fitted_G == pr.G) return;
    fitted_D = pr.D;
    fitted_G = pr.G;
    const size_t D = size_t(pr.D), G = size_t(pr.G);
    kt.assign(D * kBlk, 0.f);
    vt.assign(kBlk * D, 0.f);
    qs.assign(G * D, 0.f);
    p.assign(G * kBlk, 0.f);
    alpha.assign(G, 0.f);
    bias.assign(G, 0.f);
    part.assign(G * part_stride(pr), 0.f);
    acc.assign(G * part_stride(pr), 0.f);
  }
};

// The scratch and split-K partials of a calling thread, kept across its calls (decode calls once
// per layer and token; attention_quant.cpp's Workspace says what a fresh allocation cost). Every
// partial is written before it is read, and every Scratch is refitted to the call's shape.
struct Workspace {
  std::vector<Scratch> scratch;  // per parallel slot
  std::vector<float> parts;      // split-K: every item's partial
};

Workspace& workspace() {
  thread_local Workspace w;
  return w;
}

// Scores of HN heads against the key tile, lanes over tile positions: one FMA chain over e per
// key, then + bias (quantized blocks).
template <int HN>
void block_scores(const float* const* qv, const float* bias, const float* kt, int D,
                  vf (*sc)[kBV]) {
  // Local accumulators: written through sc inside the loop they were stored every iteration.
  vf acc[HN][kBV];
  for (int h = 0; h < HN; ++h)
    for (int r = 0; r < kBV; ++r) acc[h][r] = zero();
  for (int e = 0; e < D; ++e) {
    vf x[kBV];
    for (int r = 0; r < kBV; ++r) x[r] = load(kt + size_t(e) * kBlk + r * W);
    for (int h = 0; h < HN; ++h) {
      const vf qe = bcast(qv[h] + e);
      for (int r = 0; r < kBV; ++r) acc[h][r] = fma(qe, x[r], acc[h][r]);
    }
  }
  for (int h = 0; h < HN; ++h)
    for (int r = 0; r < kBV; ++r) sc[h][r] = bias ? add(acc[h][r], set1(bias[h])) : acc[h][r];
}

template <int HN>
void scores_n(int hn, const float* const* qv, const float* bias, const float* kt, int D,
              vf (*sc)[kBV]) {
  if (hn == HN) return block_scores<HN>(qv, bias, kt, D, sc);
  if constexpr (HN > 1) return scores_n<HN - 1>(hn, qv, bias, kt, D, sc);
}

#if defined(__AVX512F__)
// Channel e's 32 codes as the key tile's row e would hold them (decode32's order): x[0] tile
// positions 0..15, x[1] 16..31, the same exact floats, straight into registers.
template <int BITS>
inline void code_row(const uint8_t* codes, vf* x) {
  __m128i f[4];
  code_fields(codes, BITS, f);
  // Tile positions 0..15 and 16..31 as bytes.
  const __m128i a = _mm_unpacklo_epi64(f[0], f[1]);
  const __m128i b = BITS == 4 ? _mm_unpackhi_epi64(f[0], f[1]) : _mm_unpacklo_epi64(f[2], f[3]);
  x[0] = _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(a));
  x[1] = _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(b));
}

// block_scores with the key tile's rows decoded from the block's codes in registers instead of
// read from the tile: the same operands in the same order, so the same bits, without the tile's
// stores and loads.
template <int HN, int BITS>
void block_scores_codes(const float* const* qv, const float* bias, const uint8_t* codes, int D,
                        vf (*sc)[kBV]) {
  static_assert(kBV == 2, "one code row fills two 16-lane vectors");
  constexpr size_t cb = kivi_codes_bytes(BITS);
  vf acc[HN][kBV];
  for (int h = 0; h < HN; ++h)
    for (int r = 0; r < kBV; ++r) acc[h][r] = zero();
  for (int e = 0; e < D; ++e) {
    vf x[kBV];
    code_row<BITS>(codes + size_t(e) * cb, x);
    for (int h = 0; h < HN; ++h) {
      const vf qe = bcast(qv[h] + e);
      for (int r = 0; r < kBV; ++r) acc[h][r] = fma(qe, x[r], acc[h][r]);
    }
  }
  for (int h = 0; h < HN; ++h)
    for (int r = 0; r < kBV; ++r) sc[h][r] = add(acc[h][r], set1(bias[h]));
}

template <int HN>
void scores_codes_n(int hn, int bits, const float* const* qv, const float* bias,
                    const uint8_t* codes, int D, vf (*sc)[kBV]) {
  if (hn == HN)
    return bits == 4 ? block_scores_codes<HN, 4>(qv, bias, codes, D, sc)
                     : block_scores_codes<HN, 2>(qv, bias, codes, D, sc);
  if constexpr (HN > 1) return scores_codes_n<HN - 1>(hn, bits, qv, bias, codes, D, sc);
}

// Value group gg of a value record (`groups` groups) as the value tile's row would hold it:
// c * s + m with decode32<true>'s two roundings, x[0] tile positions 0..15 of the group, x[1]
// 16..31. Forced inline: GCC 12 kept the 2-bit one out of line, and the one-pass P.V at the small
// shape took 1.6x as long (bench_kv_attention fused_kivi2/small/32768, 2026-11-29).
template <int BITS>
inline __attribute__((always_inline)) void value_group(const uint8_t* rec, int groups, int gg,
                                                       vf* x) {
  constexpr size_t cb = kivi_codes_bytes(BITS);
  const uint8_t* vs = rec + size_t(groups) * cb;
  const uint8_t* vm = vs + 2 * groups;
  code_row<BITS>(rec + size_t(gg) * cb, x);
  const vf sv = set1(half_at(vs + 2 * gg)), mv = set1(half_at(vm + 2 * gg));
  for (int r = 0; r < kBV; ++r) x[r] = add(mul(x[r], sv), mv);
}

// block_pv with each visible tile row decoded from its value record in registers, group by group
// (c * s + m, decode32<true>'s two roundings): per output element the same fma sequence over the
// same values, so the same bits, without the value tile. vrec[t]: tile row t's record.
template <int NV, int HN, int BITS>
void block_pv_codes(float* const* o, const float* alpha, const float* const* p, uint32_t bits,
                    const uint8_t* const* vrec) {
  constexpr int groups = NV * W / kBlk;
  vf ov[HN][NV];
  pv_begin<NV, HN>(o, alpha, ov);
  for (int t = 0; t < kBlk; ++t) {
    if (!(bits >> t & 1u)) continue;
    vf pj[HN];
    for (int h = 0; h < HN; ++h) pj[h] = set1(p[h][t]);
    for (int gg = 0; gg < groups; ++gg) {
      vf x[kBV];
      value_group<BITS>(vrec[t], groups, gg, x);
      for (int r = 0; r < kBV; ++r)
        for (int h = 0; h < HN; ++h) ov[h][gg * kBV + r] = fma(pj[h], x[r], ov[h][gg * kBV + r]);
    }
  }
  pv_end<NV, HN>(o, ov);
}

// block_pv_codes for more heads than one pass holds: value group by value group, up to HN heads
// at a time over the group's kBV vectors, each visible row's group decoded once per pass (the
// value tile's fill decoded it once too, then stored it and loaded it back per pass). Per output
// element the same operations in the same order as block_pv on the tile: the same bits.
template <int HN, int BITS>
void block_pv_codes_sliced(int hn, int groups, float* const* o, const float* alpha,
                           const float* const* p, uint32_t bits, const uint8_t* const* vrec) {
  for (int gg = 0; gg < groups; ++gg) {
    vf ov[HN][kBV];
    for (int h = 0; h < hn; ++h) {
      const vf a = set1(alpha[h]);  // o * 1 is exact
      for (int r = 0; r < kBV; ++r) ov[h][r] = mul(load(o[h] + gg * kBlk + r * W), a);
    }
    for (int t = 0; t < kBlk; ++t) {
      if (!(bits >> t & 1u)) continue;
      vf x[kBV];
      value_group<BITS>(vrec[t], groups, gg, x);
      for (int h = 0; h < hn; ++h) {
        const vf pj = set1(p[h][t]);
        for (int r = 0; r < kBV; ++r) ov[h][r] = fma(pj, x[r], ov[h][r]);
      }
    }
    for (int h = 0; h < hn; ++h)
      for (int r = 0; r < kBV; ++r) store(o[h] + gg * kBlk + r * W, ov[h][r]);
  }
}

// The G heads of a kv group in block_pv_codes_sliced passes of up to kSlicedHeads.
constexpr int kSlicedHeads = 8;  // 8 heads x kBV (2) accumulators
inline void pv_codes_sliced(int G, int D, int bits, float* part, size_t stride, const float* alpha,
                            const float* p, uint32_t tbits, const uint8_t* const* vrec) {
  for (int h0 = 0; h0 < G; h0 += kSlicedHeads) {
    const int hn = std::min(kSlicedHeads, G - h0);
    float* o[kSlicedHeads];
    const float* pp[kSlicedHeads];
    for (int h = 0; h < hn; ++h) {
      o[h] = part + size_t(h0 + h) * stride + kPartO;
      pp[h] = p + size_t(h0 + h) * kBlk;
    }
    if (bits == 4)
      block_pv_codes_sliced<kSlicedHeads, 4>(hn, D / kBlk, o, alpha + h0, pp, tbits, vrec);
    else
      block_pv_codes_sliced<kSlicedHeads, 2>(hn, D / kBlk, o, alpha + h0, pp, tbits, vrec);
  }
}

// The G (<= HN) heads of a kv group in one block_pv_codes pass.
template <int NV, int HN>
void pv_codes_n(int G, int bits, float* part, size_t stride, const float* alpha, const float* p,
                uint32_t tbits, const uint8_t* const* vrec) {
  if (G == HN) {
    float* o[HN];
    const float* pp[HN];
    for (int h = 0; h < HN; ++h) {
      o[h] = part + size_t(h) * stride + kPartO;
      pp[h] = p + size_t(h) * kBlk;
    }
    return bits == 4 ? block_pv_codes<NV, HN, 4>(o, alpha, pp, tbits, vrec)
                     : block_pv_codes<NV, HN, 2>(o, alpha, pp, tbits, vrec);
  }
  if constexpr (HN > 1) return pv_codes_n<NV, HN - 1>(G, bits, part, stride, alpha, p, tbits, vrec);
}
#endif

// Heads per P.V pass: as many as keep HN x NV accumulators (plus a row vector and the p
// broadcasts) within the registers, at most 4.
template <int NV>
constexpr int pv_heads_per_pass() {
#if defined(__AVX512F__)
  return std::clamp(24 / NV, 1, 4);
#else
  return std::clamp(12 / NV, 1, 4);
#endif
}

// Scores, softmax and P.V of one block for the group's G heads. The key tile is read unless kcodes
// (the block's key codes) is given, the value tile unless vrec (each tile row's value record) is;
// the tiles read are filled.
template <int NV>
void block_attend(const Problem& pr, Scratch& sc, const float* const* qv, const float* bias,
                  uint32_t bits, float* part, [[maybe_unused]] const uint8_t* kcodes = nullptr,
                  [[maybe_unused]] const uint8_t* const* vrec = nullptr) {
  constexpr int D = NV * W;
  const size_t stride = part_stride(pr);
  for (int h0 = 0; h0 < pr.G; h0 += kScoreHeads) {
    const int hn = std::min(kScoreHeads, pr.G - h0);
    vf s[kScoreHeads][kBV];
#if defined(__AVX512F__)
    if (kcodes)
      scores_codes_n<kScoreHeads>(hn, pr.kv.bits, qv + h0, bias + h0, kcodes, D, s);
    else
#endif
      scores_n<kScoreHeads>(hn, qv + h0, bias ? bias + h0 : nullptr, sc.kt.data(), D, s);
    softmax_heads_n<kScoreHeads>(hn, s, pr.c, bits, part + size_t(h0) * stride, stride,
                                 &sc.p[size_t(h0) * kBlk], sc.alpha.data() + h0);
  }
#if defined(__AVX512F__)
  if (vrec && pr.G <= pv_heads_per_pass<NV>())
    return pv_codes_n<NV, pv_heads_per_pass<NV>()>(pr.G, pr.kv.bits, part, stride, sc.alpha.data(),
                                                   sc.p.data(), bits, vrec);
  if (vrec)
    return pv_codes_sliced(pr.G, D, pr.kv.bits, part, stride, sc.alpha.data(), sc.p.data(), bits,
                           vrec);
#endif
  pv_heads<NV, pv_heads_per_pass<NV>()>(pr.G, part, stride, kPartO, sc.alpha.data(), sc.p.data(),
                                        bits, sc.vt.data());
}

// The next quantized block's key block and value records, a cache line at a time. Always inlined,
// as attention_quant.cpp's twin: GCC 12 drops calls it did not inline to a function made only of
// prefetches (it counts them as free of side effects).
[[gnu::always_inline]] inline void prefetch_block(const uint8_t* kblock, const uint8_t* vrec,
                                                  const Problem& pr) {
  for (size_t b = 0; b < pr.kbb; b += 64) prefetch(kblock + b);
  for (size_t b = 0; b < size_t(kBlk) * pr.vrb; b += 64) prefetch(vrec + b);
}

// A quantized block (rows j0 .. j0 + 31 of kv head g): code tile, q ⊙ s and bias per head,
// value tile of the visible keys.
template <int NV>
void quant_block(const Problem& pr, Scratch& sc, const float* qrow, int g, size_t j0, uint32_t bits,
                 bool prefetch_next, float* part) {
  constexpr int D = NV * W;
  const size_t blk = kivi_stored_block(pr.kv, j0 / kBlk);
  const uint8_t* k_head = pr.kv.k + size_t(g) * pr.kv.k_head_stride;
  const uint8_t* kb = k_head + blk * pr.kbb;
  const uint8_t* vb = pr.kv.v + size_t(g) * pr.kv.v_head_stride + blk * kBlk * pr.vrb;
  if (prefetch_next) {
    const size_t next = kivi_stored_block(pr.kv, j0 / kBlk + 1);
    prefetch_block(k_head + next * pr.kbb, vb + (next - blk) * kBlk * pr.vrb, pr);
  }
#if defined(__AVX512F__)
  const uint8_t* kcodes = kb;  // the scores decode each code row in registers
#else
  const int bits_k = pr.kv.bits;
  const uint8_t* kcodes = nullptr;
  for (int e = 0; e < D; ++e)
    decode32<false>(kb + size_t(e) * pr.cb, bits_k, 0.f, 0.f, &sc.kt[size_t(e) * kBlk]);
#endif
  const auto* scales = reinterpret_cast<const uint16_t*>(kb + size_t(D) * pr.cb);
  const uint16_t* mins = scales + D;
  const float* qv[kMaxG];
  for (int h = 0; h < pr.G; ++h) {
    const float* qh = qrow + size_t(h) * D;
    float* qs = &sc.qs[size_t(h) * D];
    vf b = zero();
    for (int e = 0; e < D; e += W) {
      const vf x = load(qh + e);
      store(qs + e, mul(x, from_f16(scales + e)));
      b = fma(x, from_f16(mins + e), b);
    }
    sc.bias[size_t(h)] = hsum(b);
    qv[h] = qs;
  }
  uint32_t tbits = bits;
  if (bits != 0xffffffffu) {
    tbits = 0;
    for (int p = 0; p < kBlk; ++p) tbits |= (bits >> pr.perm[p] & 1u) << p;
  }
#if defined(__AVX512F__)
  // Values are decoded in registers where they are used: in one P.V pass when it covers the
  // group (block_pv_codes), else group by group for up to 8 heads (block_pv_codes_sliced).
  const uint8_t* vrec[kBlk];
  for (int p = 0; p < kBlk; ++p) vrec[p] = vb + size_t(pr.perm[p]) * pr.vrb;
  block_attend<NV>(pr, sc, qv, sc.bias.data(), tbits, part, kcodes, vrec);
#else
  const size_t groups = size_t(D / kKiviGroup);
  for (int p = 0; p < kBlk; ++p) {
    if (!(tbits >> p & 1u)) continue;
    const uint8_t* rec = vb + size_t(pr.perm[p]) * pr.vrb;
    const uint8_t* vs = rec + groups * pr.cb;
    const uint8_t* vm = vs + 2 * groups;
    for (size_t gg = 0; gg < groups; ++gg)
      decode32<true>(rec + gg * pr.cb, bits_k, half_at(vs + 2 * gg), half_at(vm + 2 * gg),
                     &sc.vt[size_t(p) * D + gg * kBlk]);
  }
  block_attend<NV>(pr, sc, qv, sc.bias.data(), tbits, part, kcodes);
#endif
}

// A full-precision block (rows j0 .. j0 + nb - 1, all at or past n_quant): keys transposed into
// the tile in token order, values permuted into the value tile's element order.
template <int NV>
void f32_block(const Problem& pr, Scratch& sc, const float* qrow, int g, size_t j0, int nb,
               uint32_t bits, float* part) {
  constexpr int D = NV * W;
  for (int t = 0; t < nb; ++t) {
    if (!(bits >> t & 1u)) continue;
    size_t j = j0 + size_t(t) - pr.kv.n_quant;
    const int seg = j < pr.kv.rows[0].n ? 0 : 1;
    if (seg) j -= pr.kv.rows[0].n;
    const KiviKV::Rows& r = pr.kv.rows[seg];
    const float* kr = r.k + j * r.ld + size_t(g) * D;
    const float* vr = r.v + j * r.ld + size_t(g) * D;
    for (int e = 0; e < D; ++e) sc.kt[size_t(e) * kBlk + size_t(t)] = kr[e];
    float* vt = &sc.vt[size_t(t) * D];
    for (int e = 0; e < D; ++e) vt[e] = vr[e / kBlk * kBlk + pr.perm[e % kBlk]];
  }
  const float* qv[kMaxG];
  for (int h = 0; h < pr.G; ++h) qv[h] = qrow + size_t(h) * D;
  block_attend<NV>(pr, sc, qv, nullptr, bits, part);
}

// Chunk ch of query row i against kv head g into part (G partials).
template <int NV>
void run_chunk_nv(const Problem& pr, size_t i, int g, size_t ch, Scratch& sc, float* part) {
  const size_t stride = part_stride(pr);
  for (int h = 0; h < pr.G; ++h) {
    float* P = part + size_t(h) * stride;
    P[0] = -INFINITY;
    std::fill(P + 1, P + stride, 0.f);
  }
  const int32_t qp = pr.q_pos[i], ql = attention_window_lo(qp, pr.window);
  const float* qrow = pr.q + i * pr.ldq + size_t(g) * size_t(pr.G) * size_t(pr.D);
  const size_t j_end = std::min(pr.n_kv, (ch + 1) * kKiviChunk);
  for (size_t j0 = ch * kKiviChunk; j0 < j_end; j0 += kBlk) {
    const int nb = int(std::min<size_t>(kBlk, j_end - j0));
    const uint32_t bits = visible_bits(pr.kv_pos + j0, nb, qp, ql);
    if (!bits) continue;
    // The next block is prefetched past the chunk's end too: the head's next chunk is usually
    // this thread's next item.
    if (j0 < pr.kv.n_quant)
      quant_block<NV>(pr, sc, qrow, g, j0, bits, j0 + kBlk < pr.kv.n_quant, part);
    else
      f32_block<NV>(pr, sc, qrow, g, j0, nb, bits, part);
  }
}

void run_chunk(const Problem& pr, size_t i, int g, size_t ch, Scratch& sc, float* part) {
  switch (pr.D) {  // head_dim is a multiple of 32 up to 256 (checked on entry)
    case 32:
      return run_chunk_nv<32 / W>(pr, i, g, ch, sc, part);
    case 64:
      return run_chunk_nv<64 / W>(pr, i, g, ch, sc, part);
    case 96:
      return run_chunk_nv<96 / W>(pr, i, g, ch, sc, part);
    case 128:
      return run_chunk_nv<128 / W>(pr, i, g, ch, sc, part);
    case 160:
      return run_chunk_nv<160 / W>(pr, i, g, ch, sc, part);
    case 192:
      return run_chunk_nv<192 / W>(pr, i, g, ch, sc, part);
    case 224:
      return run_chunk_nv<224 / W>(pr, i, g, ch, sc, part);
    case 256:
      return run_chunk_nv<256 / W>(pr, i, g, ch, sc, part);
  }
  ACCEL_FAIL("head_dim %d not instantiated (multiples of 32 up to 256)", pr.D);
}

// acc <- acc merged with one chunk's partial (the online rule of the header); an accumulator with
// l = 0 is empty, a chunk whose l is not positive contributes nothing.
void merge_into(float* acc, const float* part, int D) {
  if (!(part[1] > 0)) return;
  if (!(acc[1] > 0)) {
    std::copy(part, part + kPartO + size_t(D), acc);
    return;
  }
  const float M = std::max(acc[0], part[0]);
  const float a = exp2_scalar(acc[0] - M), b = exp2_scalar(part[0] - M);
  acc[1] = acc[1] * a + part[1] * b;
  const vf av = set1(a), bv = set1(b);
  for (int d = 0; d < D; d += W) {
    float* o = acc + kPartO + d;
    store(o, fma(load(part + kPartO + d), bv, mul(load(o), av)));
  }
  acc[0] = M;
}

// out = o / l in element order (a sink joins the denominator as one more logit); zeros if empty.
void finish(const Problem& pr, size_t i, int head, const float* acc) {
  float* out = pr.out + i * pr.ldo + size_t(head) * size_t(pr.D);
  if (!(acc[1] > 0)) {
    std::fill(out, out + pr.D, 0.f);
    return;
  }
  float l = acc[1], a = 1.f;
  if (pr.sinks) {
    const float t = pr.sinks[head] * kLog2e, M = std::max(acc[0], t);
    a = exp2_scalar(acc[0] - M);
    l = l * a + exp2_scalar(t - M);
  }
  alignas(64) float o[kMaxD];
  const vf av = set1(a), lv = set1(l);
  for (int d = 0; d < pr.D; d += W) store(o + d, div(mul(load(acc + kPartO + d), av), lv));
  for (int k = 0; k < pr.D; ++k) out[k / kBlk * kBlk + pr.perm[k % kBlk]] = o[k];
}

void check_problem(const AttentionShape& s, size_t n_q, size_t ldq, size_t ldo, const KiviKV& kv,
                   size_t n_kv) {
  ACCEL_CHECK(s.n_kv_heads > 0 && s.n_heads > 0 && s.n_heads % s.n_kv_heads == 0,
              "shape: %d heads, %d kv heads", s.n_heads, s.n_kv_heads);
  ACCEL_CHECK(s.head_dim > 0 && s.head_dim % kKiviGroup == 0 && s.head_dim <= kMaxD,
              "head_dim %d is not instantiated (multiples of %d up to %d)", s.head_dim, kKiviGroup,
              kMaxD);
  ACCEL_CHECK(s.n_heads / s.n_kv_heads <= kMaxG, "%d query heads per kv head",
              s.n_heads / s.n_kv_heads);
  ACCEL_CHECK(kv.bits == 2 || kv.bits == 4, "KIVI bits %d (2 or 4)", kv.bits);
  check_mask_options(s);
  ACCEL_CHECK(s.softcap == 0.f, "attention soft-cap %g: the KIVI kernel does not implement it",
              double(s.softcap));
  ACCEL_CHECK(kv.n_quant % kKiviGroup == 0, "%zu quantized rows: not whole blocks of %d",
              kv.n_quant, kKiviGroup);
  ACCEL_CHECK(kv.ring_blocks == 0 ||
                  (kv.first_block < kv.ring_blocks && kv.n_quant / kKiviGroup <= kv.ring_blocks),
              "ring view: first block %zu, %zu quantized rows, %zu stored blocks", kv.first_block,
              kv.n_quant, kv.ring_blocks);
  ACCEL_CHECK(n_kv == kv.n_quant + kv.rows[0].n + kv.rows[1].n,
              "n_kv %zu != %zu quantized + %zu + %zu full-precision rows", n_kv, kv.n_quant,
              kv.rows[0].n, kv.rows[1].n);
  const size_t qw = size_t(s.n_heads) * size_t(s.head_dim);
  const size_t kvw = size_t(s.n_kv_heads) * size_t(s.head_dim);
  ACCEL_CHECK(n_q <= 1 || (ldq >= qw && ldo >= qw),
              "%zu query rows of %zu floats: strides ldq %zu / ldo %zu are shorter", n_q, qw, ldq,
              ldo);
  for (const KiviKV::Rows& r : kv.rows)
    ACCEL_CHECK(r.n <= 1 || r.ld >= kvw, "%zu f32 rows of %zu floats: stride %zu is shorter", r.n,
                kvw, r.ld);
}

}  // namespace

void attention_kivi(const AttentionShape& s, const float* q, size_t ldq, const int32_t* q_pos,
                    size_t n_q, const KiviKV& kv, const int32_t* kv_pos, size_t n_kv, float* out,
                    size_t ldo) {
  check_problem(s, n_q, ldq, ldo, kv, n_kv);
  if (n_q == 0) return;
  Problem pr{};
  pr.q = q;
  pr.ldq = ldq;
  pr.q_pos = q_pos;
  pr.kv = kv;
  pr.kv_pos = kv_pos;
  pr.n_kv = n_kv;
  pr.out = out;
  pr.ldo = ldo;
  pr.D = s.head_dim;
  pr.G = s.n_heads / s.n_kv_heads;
  pr.Hkv = s.n_kv_heads;
  pr.kbb = kivi_key_block_bytes(kv.bits, s.head_dim);
  pr.vrb = kivi_value_record_bytes(kv.bits, s.head_dim);
  pr.cb = kivi_codes_bytes(kv.bits);
  pr.n_chunks = std::max<size_t>(1, (n_kv + kKiviChunk - 1) / kKiviChunk);
  pr.c = s.scale * kLog2e;
  pr.window = s.window;
  pr.sinks = s.sinks;
  for (int p = 0; p < kBlk; ++p) pr.perm[p] = code_at(kv.bits, p);

  const size_t stride = part_stride(pr), G = size_t(pr.G);
  const size_t rows = n_q * size_t(pr.Hkv);
  const double work = 4.0 * double(n_q) * double(n_kv) * s.n_heads * s.head_dim;
  Workspace& ws = workspace();
  if (ws.scratch.size() < size_t(parallel_slots())) ws.scratch.resize(size_t(parallel_slots()));
  std::vector<Scratch>& scratch = ws.scratch;
  if (rows >= size_t(2 * num_threads()) || pr.n_chunks == 1) {
    // Enough (row, kv head) items: each runs its chunks in order, merging each as it ends.
    parallel_for(rows, work, [&](size_t it, int slot) {
      Scratch& sc = scratch[size_t(slot)];
      sc.fit(pr);
      const size_t i = it / size_t(pr.Hkv);
      const int g = int(it % size_t(pr.Hkv));
      for (size_t h = 0; h < G; ++h) sc.acc[h * stride + 1] = 0.f;
      for (size_t ch = 0; ch < pr.n_chunks; ++ch) {
        run_chunk(pr, i, g, ch, sc, sc.part.data());
        for (size_t h = 0; h < G; ++h) merge_into(&sc.acc[h * stride], &sc.part[h * stride], pr.D);
      }
      for (size_t h = 0; h < G; ++h) finish(pr, i, g * pr.G + int(h), &sc.acc[h * stride]);
    });
    return;
  }
  // Split-K: one item per (row, kv head, chunk), then the same merges as a separate pass.
  std::vector<float>& parts = ws.parts;
  if (parts.size() < rows * pr.n_chunks * G * stride) parts.resize(rows * pr.n_chunks * G * stride);
  parallel_for(rows * pr.n_chunks, work, [&](size_t it, int slot) {
    Scratch& sc = scratch[size_t(slot)];
    sc.fit(pr);
    const size_t row = it / pr.n_chunks, ch = it % pr.n_chunks;
    run_chunk(pr, row / size_t(pr.Hkv), int(row % size_t(pr.Hkv)), ch, sc,
              &parts[(row * pr.n_chunks + ch) * G * stride]);
  });
  parallel_for(
      n_q * size_t(s.n_heads), double(n_q) * s.n_heads * pr.n_chunks * pr.D, [&](size_t it, int) {
        const size_t i = it / size_t(s.n_heads);
        const int head = int(it % size_t(s.n_heads));
        const size_t row = i * size_t(pr.Hkv) + size_t(head / pr.G);
        alignas(64) float acc[kPartO + kMaxD];
        acc[1] = 0.f;
        for (size_t ch = 0; ch < pr.n_chunks; ++ch)
          merge_into(acc, &parts[((row * pr.n_chunks + ch) * G + size_t(head % pr.G)) * stride],
                     pr.D);
        finish(pr, i, head, acc);
      });
}

void kivi_dequantize_view(const KiviKV& kv, int head_dim, int n_kv_heads, float* kf, float* vf,
                          size_t ld) {
  ACCEL_CHECK(kv.bits == 2 || kv.bits == 4, "KIVI bits %d (2 or 4)", kv.bits);
  ACCEL_CHECK(head_dim > 0 && head_dim % kKiviGroup == 0 && head_dim <= kMaxD,
              "head_dim %d is not instantiated (multiples of %d up to %d)", head_dim, kKiviGroup,
              kMaxD);
  ACCEL_CHECK(kv.n_quant % kKiviGroup == 0, "%zu quantized rows: not whole blocks of %d",
              kv.n_quant, kKiviGroup);
  ACCEL_CHECK(ld >= size_t(n_kv_heads) * size_t(head_dim), "row stride %zu < %d heads x %d", ld,
              n_kv_heads, head_dim);
  ACCEL_CHECK(kv.ring_blocks == 0 ||
                  (kv.first_block < kv.ring_blocks && kv.n_quant / kKiviGroup <= kv.ring_blocks),
              "ring view: first block %zu, %zu quantized rows, %zu stored blocks", kv.first_block,
              kv.n_quant, kv.ring_blocks);
  const size_t D = size_t(head_dim), cb = kivi_codes_bytes(kv.bits);
  const size_t kbb = kivi_key_block_bytes(kv.bits, head_dim);
  const size_t vrb = kivi_value_record_bytes(kv.bits, head_dim);
  const size_t n_blocks = kv.n_quant / kBlk, groups = D / kBlk;
  // Keys: a block's channels decoded into a [D][32] tile in L1, then transposed into token rows;
  // values: each record straight into its row. Each item writes its own rows: any thread count
  // gives the same bits.
  const double work = 4.0 * double(kv.n_quant) * double(n_kv_heads) * double(D);
  parallel_for(size_t(n_kv_heads) * n_blocks, work, [&](size_t it, int) {
    const size_t g = it / n_blocks, b = it % n_blocks, blk = kivi_stored_block(kv, b);
    alignas(64) float tile[kMaxD * kBlk];
    const uint8_t* kb = kv.k + g * kv.k_head_stride + blk * kbb;
    const uint8_t* ks = kb + D * cb;
    const uint8_t* km = ks + 2 * D;
    for (size_t e = 0; e < D; ++e)
      dequant32_in_order(kb + e * cb, kv.bits, half_at(ks + 2 * e), half_at(km + 2 * e),
                         &tile[e * kBlk]);
    for (size_t t = 0; t < size_t(kBlk); ++t) {
      float* row = kf + (b * kBlk + t) * ld + g * D;
      for (size_t e = 0; e < D; ++e) row[e] = tile[e * kBlk + t];
    }
    for (size_t t = 0; t < size_t(kBlk); ++t) {
      const uint8_t* rec = kv.v + g * kv.v_head_stride + (blk * kBlk + t) * vrb;
      const uint8_t* vs = rec + groups * cb;
      const uint8_t* vm = vs + 2 * groups;
      float* row = vf + (b * kBlk + t) * ld + g * D;
      for (size_t gg = 0; gg < groups; ++gg)
        dequant32_in_order(rec + gg * cb, kv.bits, half_at(vs + 2 * gg), half_at(vm + 2 * gg),
                           row + gg * kBlk);
    }
  });
}

void attention_kivi_dequantized(const AttentionShape& s, const float* q, size_t ldq,
                                const int32_t* q_pos, size_t n_q, const KiviKV& kv,
                                const int32_t* kv_pos, size_t n_kv, float* out, size_t ldo,
                                std::vector<float>& kf, std::vector<float>& vf) {
  ACCEL_CHECK(n_kv == kv.n_quant + kv.rows[0].n + kv.rows[1].n,
              "n_kv %zu != %zu quantized + %zu + %zu full-precision rows", n_kv, kv.n_quant,
              kv.rows[0].n, kv.rows[1].n);
  const size_t kv_dim = size_t(s.n_kv_heads) * size_t(s.head_dim);
  // Grown, never shrunk: a caller that keeps kf / vf across a prefill's chunks zeroes and faults
  // in each page once.
  if (kf.size() < n_kv * kv_dim) kf.resize(n_kv * kv_dim);
  if (vf.size() < n_kv * kv_dim) vf.resize(n_kv * kv_dim);
  kivi_dequantize_view(kv, s.head_dim, s.n_kv_heads, kf.data(), vf.data(), kv_dim);
  size_t at = kv.n_quant;
  for (const KiviKV::Rows& r : kv.rows)
    for (size_t t = 0; t < r.n; ++t, ++at) {
      std::memcpy(&kf[at * kv_dim], r.k + t * r.ld, kv_dim * sizeof(float));
      std::memcpy(&vf[at * kv_dim], r.v + t * r.ld, kv_dim * sizeof(float));
    }
  attention_causal(s, q, ldq, q_pos, n_q, kf.data(), vf.data(), kv_dim, kv_pos, n_kv, out, ldo);
}

}  // namespace accel
