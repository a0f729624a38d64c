// The int4 cache's P.V with 8-bit probabilities (QuantPV::Int8, attention_quant.h), for
// attention_quant.cpp only: a value block's (kv_quant.h) codes split into nibbles and its scales
// and zeros read in lanes over keys, and per head and value group the weights p * s rounded to u8
// codes and dotted with the int4 codes in exact integers. Must not change an operation or its
// order: these sequences define the kernel's bits (the header of attention_quant.h states them).
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include <immintrin.h>

#include "kernels/attention_block.h"
#include "kernels/kv_quant.h"
#include "kernels/simd.h"

// GCC 12's bug 105593 (see simd.h): its AVX-512 conversion intrinsics warn once inlined here.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

namespace accel::attention_pv8 {

using namespace simd;
using attention_block::from_f16_masked;
using attention_block::hsum;
using attention_block::kBlk;
using attention_block::kBV;
using attention_block::kQuads;  // one 32-bit lane holds a quad's codes

constexpr int kMaxGroups = 8;  // value groups of 32 elements at head_dim 256

// One block's values, shared by the heads of a kv group. codes[g][u][half] holds, at byte 4k + r,
// the low (half 0) or high (half 1) nibble of byte k of group g of key 4u + r's record: lane
// k of a vector over it is the quad of keys 4u..4u+3 of element 2k (+1), so the integer dots land
// in the exact kernel's lane order. ratio is s / sigma (sigma: the block's largest scale of the
// group over visible keys), zero is z; both 0 for a key the query does not see.
struct alignas(64) ValueBlock {
  uint8_t codes[kMaxGroups][kQuads][2][64];
  float ratio[kMaxGroups][kBlk];
  float zero[kMaxGroups][kBlk];
  float sigma[kMaxGroups];
};

// acc + the sums of four u8 x s8 products per 32-bit lane. The products are at most 255 * 15, so
// the 16-bit pair sums of vpmaddubsw cannot saturate and every path gives the same integers.
inline vi dot_u8s8(vi acc, vi u, vi c) {
#if defined(__AVX512F__)
#if defined(__AVX512VNNI__)
  return _mm512_dpbusd_epi32(acc, u, c);
#else
  return _mm512_add_epi32(acc, _mm512_madd_epi16(_mm512_maddubs_epi16(u, c), _mm512_set1_epi16(1)));
#endif
#elif defined(__AVXVNNI__)
  return _mm256_dpbusd_avx_epi32(acc, u, c);
#else
  return _mm256_add_epi32(acc, _mm256_madd_epi16(_mm256_maddubs_epi16(u, c), _mm256_set1_epi16(1)));
#endif
}

inline vi load_bytes(const uint8_t* p) {
#if defined(__AVX512F__)
  return _mm512_load_si512(p);
#else
  return _mm256_load_si256(reinterpret_cast<const __m256i*>(p));
#endif
}

inline vf to_float(vi x) {
#if defined(__AVX512F__)
  return _mm512_cvtepi32_ps(x);
#else
  return _mm256_cvtepi32_ps(x);
#endif
}

// Fills vb from an int4 value block (kv_quant.h) of the keys j0..j0+31; bit t of `bits` marks a key
// the query sees (its parameters are read; the others' ratio and zero are 0, so their codes, which
// may be any bytes past the cache's end, weigh 0). The block already holds each quad's codes
// interleaved as the dots take them: a line is split into its low and high nibbles (the records'
// layout took a byte transposition per four records and two gathers per group and 16 keys, ~30%
// of the pv8 kernel at the seed shape, 2026-11-29).
inline void load_value_block(const uint8_t* vblock, int D, uint32_t bits, ValueBlock& vb) {
  const int groups = D / kKVQuantGroup;
  for (int g = 0; g < groups; ++g)
    for (int u = 0; u < kQuads; ++u) {
      const uint8_t* line = vblock + vblock_line_offset(g, u);
#if defined(__AVX512F__)
      const __m512i x = _mm512_loadu_si512(line);
      const __m512i low4 = _mm512_set1_epi8(15);
      _mm512_store_si512(vb.codes[g][u][0], _mm512_and_si512(x, low4));
      _mm512_store_si512(vb.codes[g][u][1], _mm512_and_si512(_mm512_srli_epi16(x, 4), low4));
#else
      const __m256i low4 = _mm256_set1_epi8(15);
      for (int h = 0; h < 2; ++h) {
        const __m256i x = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(line + 32 * h));
        _mm256_store_si256(reinterpret_cast<__m256i*>(vb.codes[g][u][0] + 32 * h),
                           _mm256_and_si256(x, low4));
        _mm256_store_si256(reinterpret_cast<__m256i*>(vb.codes[g][u][1] + 32 * h),
                           _mm256_and_si256(_mm256_srli_epi16(x, 4), low4));
      }
#endif
    }
  // The parameters: scales [groups][32 keys] then zeros likewise, fp16, lanes over keys.
  const uint16_t* scales = reinterpret_cast<const uint16_t*>(vblock + int4_block_params_offset(D));
  const uint16_t* zeros = scales + size_t(groups) * kBlk;
  for (int g = 0; g < groups; ++g)
    for (int r = 0; r < kBV; ++r) {
      const uint32_t m = bits >> (r * W);
      store(vb.ratio[g] + r * W, from_f16_masked(scales + g * kBlk + r * W, m));
      store(vb.zero[g] + r * W, from_f16_masked(zeros + g * kBlk + r * W, m));
    }
  for (int g = 0; g < groups; ++g) {
    vf m = zero();
    for (int r = 0; r < kBV; ++r) m = max(m, load(vb.ratio[g] + r * W));
    const float sigma = hmax(m);  // scales are >= 0; masked keys read 0
    const vf inv = set1(sigma > 0 ? 1.f / sigma : 0.f);
    for (int r = 0; r < kBV; ++r) store(vb.ratio[g] + r * W, mul(load(vb.ratio[g] + r * W), inv));
    vb.sigma[g] = sigma;
  }
}

// kBV vectors of int32 codes in [0, 255] to 32 bytes in key order.
inline void pack_codes(const vi* u, uint8_t* out) {
#if defined(__AVX512F__)
  for (int r = 0; r < kBV; ++r)
    _mm_store_si128(reinterpret_cast<__m128i*>(out + r * W), _mm512_cvtepi32_epi8(u[r]));
#else
  const __m256i b =
      _mm256_packus_epi16(_mm256_packus_epi32(u[0], u[1]), _mm256_packus_epi32(u[2], u[3]));
  _mm256_store_si256(reinterpret_cast<__m256i*>(out),
                     _mm256_permutevar8x32_epi32(b, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7)));
#endif
}

// Accumulator vectors the integer dots of one pass may hold: half the register file.
#if defined(__AVX512F__)
constexpr int kAccVectors = 16;
#else
constexpr int kAccVectors = 8;
#endif

// One head's o (lane order, NV vectors) = o * alpha + its block's P.V, with p the head's 32
// block probabilities (0 for keys it does not see). Per value group g, with P = max p,
// a = 255 / P and kappa_g = P * sigma_g * (1/255):
//   u_t = nearbyint((p_t * a) * ratio_t) in [0, 255], Z_g = sum_t u_t * z_t (float, lanes over
//   keys, then hsum), I_e = sum_t u_t * c_{t,e} (exact int32),
//   o_e = fma(I_e - Z_g, kappa_g, o_e * alpha),
// so the block adds sum_t (u_t * kappa_g) * (c_{t,e} - z_t): the exact kernel's sum with each
// weight p_t * s_t replaced by u_t * kappa_g.
template <int NV>
void pv8_head(float* o, float alpha, const float* p, const ValueBlock& vb) {
  constexpr int D = NV * W, kGroups = D / kKVQuantGroup, kVG = kKVQuantGroup / W;
  vf pm = zero();
  for (int r = 0; r < kBV; ++r) pm = max(pm, load(p + r * W));
  const float P = hmax(pm);
  const vf av = set1(alpha);
  // Nothing visible, or every weight below 2^-120 of the running maximum (where 255 / P would
  // overflow to inf and 0 * inf make NaN codes): the block adds nothing. What it drops is at most
  // 32 * 2^-120 * max |v| against l >= 1 (the running maximum's own weight), inside the bound.
  if (!(P >= 0x1p-120f)) {
    for (int v = 0; v < NV; ++v) store(o + v * W, mul(load(o + v * W), av));
    return;
  }
  vf pa[kBV];
  for (int r = 0; r < kBV; ++r) pa[r] = mul(load(p + r * W), set1(255.f / P));
  alignas(64) uint8_t ub[kGroups][kBlk];
  float Z[kGroups], kappa[kGroups];
  for (int g = 0; g < kGroups; ++g) {
    vi u[kBV];
    vf zs = zero();
    for (int r = 0; r < kBV; ++r) {
      u[r] = cvt_i(mul(pa[r], load(vb.ratio[g] + r * W)));
      zs = fma(to_float(u[r]), load(vb.zero[g] + r * W), zs);
    }
    pack_codes(u, ub[g]);
    Z[g] = hsum(zs);
    kappa[g] = P * vb.sigma[g] * (1.f / 255.f);
  }
  constexpr int kGP = std::clamp(kAccVectors / kVG, 1, kGroups);  // groups per pass
  for (int g0 = 0; g0 < kGroups; g0 += kGP) {
    const int gn = std::min(kGP, kGroups - g0);
    vi acc[kGP][kVG];
    for (auto& a : acc)
      for (auto& x : a) x = set1i(0);
    for (int u = 0; u < kQuads; ++u)
      for (int gi = 0; gi < gn; ++gi) {
        int32_t quad;
        std::memcpy(&quad, &ub[g0 + gi][4 * u], 4);
        const vi bc = set1i(quad);
        for (int v = 0; v < kVG; ++v)
          acc[gi][v] =
              dot_u8s8(acc[gi][v], bc, load_bytes(vb.codes[g0 + gi][u][v % 2] + (v / 2) * 4 * W));
      }
    for (int gi = 0; gi < gn; ++gi) {
      const vf z = set1(Z[g0 + gi]), k = set1(kappa[g0 + gi]);
      for (int v = 0; v < kVG; ++v) {
        float* dst = o + ((g0 + gi) * kVG + v) * W;
        store(dst, fma(sub(to_float(acc[gi][v]), z), k, mul(load(dst), av)));
      }
    }
  }
}

}  // namespace accel::attention_pv8

#pragma GCC diagnostic pop
