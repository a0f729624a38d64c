// The int4 cache's exact P.V (QuantPV::Exact, attention_quant.h), for attention_quant.cpp only: per
// block, head and value group the weights w_t = p_t * s_t, and each key's c - z read straight from
// the value block's lines (kv_quant.h) through a 16-entry table, with no dequantized tile between.
// Must not change an operation or its order: these sequences define the kernel's bits.
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>

#include <immintrin.h>

#include "kernels/attention_block.h"
#include "kernels/kv_quant.h"
#include "kernels/simd.h"

// GCC 12's bug 105593 (see simd.h): its AVX-512 intrinsics warn once inlined here.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

namespace accel::attention_pv_codes {

using namespace simd;
using attention_block::from_f16_masked;
using attention_block::kBlk;
using attention_block::kBV;
using attention_block::kQuads;

constexpr int kVG = kKVQuantGroup / W;  // vectors per value group
#if defined(__AVX512F__)
constexpr int kHeadsPerPass = 8;  // 8 heads x 2 vectors: 16 accumulators
#else
constexpr int kHeadsPerPass = 2;  // 2 heads x 4 vectors of the 16 ymm registers
#endif

// The weights of a block for the G heads of a kv group, from their probabilities p (head h's 32
// at p + h * kBlk, 0 for keys it does not see), and the keys' zeros, from the value block's scales
// s and zeros (read only for visible keys, bit t of `bits`; the others count as 0):
// w[(g * G + h) * kBlk + t] = p_t * s_t, z[g * kBlk + t] = z_t.
inline void block_weights(int G, int D, const float* p, uint32_t bits, const uint8_t* vblock,
                          float* w, float* z) {
  const int groups = D / kKVQuantGroup;
  const auto* scales = reinterpret_cast<const uint16_t*>(vblock + int4_block_params_offset(D));
  const uint16_t* zeros = scales + size_t(groups) * kBlk;
  for (int g = 0; g < groups; ++g) {
    vf s[kBV];
    for (int r = 0; r < kBV; ++r) {
      const uint32_t m = bits >> (r * W);
      s[r] = from_f16_masked(scales + g * kBlk + r * W, m);
      store(z + g * kBlk + r * W, from_f16_masked(zeros + g * kBlk + r * W, m));
    }
    for (int h = 0; h < G; ++h) {
      float* wg = w + (size_t(g) * size_t(G) + size_t(h)) * kBlk;
      for (int r = 0; r < kBV; ++r)
        store(wg + r * W, mul(load(p + size_t(h) * kBlk + r * W), s[r]));
    }
  }
}

// Key 4u + R's values c - z of a value group, unscaled, as kVG float vectors in lane order (low
// nibbles of record bytes 0..W-1, their high nibbles, then the next W bytes' likewise), from the
// group's quad line (byte 4k + R = the key's record byte k) and its zero z. c - z is exact (c an
// integer 0..15, z an fp16 value) unless z is an fp16 subnormal, as in kv_dequantize_head.
template <int R>
inline void key_codes(const uint8_t* line, const float* z, vf* x) {
  for (int c = 0; c < kVG / 2; ++c) {
#if defined(__AVX512F__)
    // vpermps reads the low 4 bits of each index lane: a table of the 16 possible c - z converts
    // a nibble in one operation, with no mask.
    const __m512i l = _mm512_loadu_si512(line + 64 * c);
    const vf lut =
        sub(_mm512_setr_ps(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15), bcast(z));
    x[2 * c] = _mm512_permutexvar_ps(_mm512_srli_epi32(l, 8 * R), lut);
    x[2 * c + 1] = _mm512_permutexvar_ps(_mm512_srli_epi32(l, 8 * R + 4), lut);
#else
    const __m256i l = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(line + 32 * c));
    const __m256i low4 = _mm256_set1_epi32(15);
    const vf zv = bcast(z);
    x[2 * c] = sub(_mm256_cvtepi32_ps(_mm256_and_si256(_mm256_srli_epi32(l, 8 * R), low4)), zv);
    x[2 * c + 1] =
        sub(_mm256_cvtepi32_ps(_mm256_and_si256(_mm256_srli_epi32(l, 8 * R + 4), low4)), zv);
#endif
  }
}

// One key's contribution to HN heads' accumulators of a group: ov[h] += w_h * (c - z).
template <int HN, int R>
inline void add_key(const uint8_t* line, const float* const* w, const float* z, int t,
                    vf (*ov)[kVG]) {
  vf x[kVG];
  key_codes<R>(line, z + t, x);
  for (int h = 0; h < HN; ++h) {
    const vf wv = bcast(w[h] + t);
    for (int v = 0; v < kVG; ++v) ov[h][v] = fma(wv, x[v], ov[h][v]);
  }
}

// Value group g of HN heads: o = o * alpha, then o = fma(w_t, c_t - z_t, o) over the visible keys
// t in key order. o[h] points at the head's group (kVG vectors), w[h] at its 32 weights of the
// group, z at the group's 32 zeros.
template <int HN>
inline void group_pass(float* const* o, const float* alpha, const float* const* w, const float* z,
                       uint32_t bits, const uint8_t* lines) {
  vf ov[HN][kVG];
  for (int h = 0; h < HN; ++h) {
    const vf a = set1(alpha[h]);  // o * 1 is exact
    for (int v = 0; v < kVG; ++v) ov[h][v] = mul(load(o[h] + v * W), a);
  }
  for (int u = 0; u < kQuads; ++u) {
    const uint32_t quad = bits >> (4 * u) & 15u;
    if (!quad) continue;
    const uint8_t* line = lines + size_t(u) * 64;
    if (quad & 1u) add_key<HN, 0>(line, w, z, 4 * u, ov);
    if (quad & 2u) add_key<HN, 1>(line, w, z, 4 * u + 1, ov);
    if (quad & 4u) add_key<HN, 2>(line, w, z, 4 * u + 2, ov);
    if (quad & 8u) add_key<HN, 3>(line, w, z, 4 * u + 3, ov);
  }
  for (int h = 0; h < HN; ++h)
    for (int v = 0; v < kVG; ++v) store(o[h] + v * W, ov[h][v]);
}

template <int HN>
inline void group_pass_n(int hn, float* const* o, const float* alpha, const float* const* w,
                         const float* z, uint32_t bits, const uint8_t* lines) {
  if (hn == HN) return group_pass<HN>(o, alpha, w, z, bits, lines);
  if constexpr (HN > 1) return group_pass_n<HN - 1>(hn, o, alpha, w, z, bits, lines);
}

// o_h = o_h * alpha_h + P_h . V over the block for the G heads of a kv group (partial outputs at
// part + h * stride + o_off, lane order), from block_weights' w and z: per value group, up to
// kHeadsPerPass heads per pass over its lines. Each head's bits are the same however the heads
// are grouped into passes.
inline void pv_heads(int G, int D, float* part, size_t stride, size_t o_off, const float* alpha,
                     const float* w, const float* z, uint32_t bits, const uint8_t* vblock) {
  const int groups = D / kKVQuantGroup;
  for (int g = 0; g < groups; ++g)
    for (int h0 = 0; h0 < G; h0 += kHeadsPerPass) {
      const int hn = std::min(kHeadsPerPass, G - h0);
      float* o[kHeadsPerPass];
      const float* wh[kHeadsPerPass];
      for (int i = 0; i < hn; ++i) {
        o[i] = part + size_t(h0 + i) * stride + o_off + size_t(g) * kKVQuantGroup;
        wh[i] = w + (size_t(g) * size_t(G) + size_t(h0 + i)) * kBlk;
      }
      group_pass_n<kHeadsPerPass>(hn, o, alpha + h0, wh, z + g * kBlk, bits,
                                  vblock + vblock_line_offset(g, 0));
    }
}

}  // namespace accel::attention_pv_codes

#pragma GCC diagnostic pop
