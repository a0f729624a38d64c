// The int4 cache's P.V with 8-bit probabilities (QuantPV::Int8, attention_quant.h), for
// attention_quant.cpp only: a value block's scales and zeros read once in lanes over keys, per
// head and value group the weights p * s rounded to u8 codes, then per value group the integer
// dots of up to kHeadsPerPass heads against the group's int4 codes, split into nibbles in
// registers straight from the block's lines. Must not change an operation or its order: these
// sequences define the kernel's bits (the header of attention_quant.h states them).
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

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

constexpr int kMaxGroups = 8;           // value groups of 32 elements at head_dim 256
constexpr int kVG = kKVQuantGroup / W;  // vectors per value group
#if defined(__AVX512F__)
constexpr int kHeadsPerPass = 8;  // 8 heads x 2 vectors: 16 int32 accumulators
#else
constexpr int kHeadsPerPass = 2;  // 2 heads x 4 vectors: half the 16 ymm registers
#endif

// A block's value parameters, shared by the heads of a kv group: per group, ratio is s / sigma
// (sigma: the block's largest scale of the group over visible keys) and zero is z, both 0 for a
// key the query does not see.
struct alignas(64) BlockParams {
  float ratio[kMaxGroups][kBlk];
  float zero[kMaxGroups][kBlk];
  float sigma[kMaxGroups];
};

// The block weights of a kv group's heads: per value group g and head h the u8 codes in key
// order at u + (g * G + h) * kBlk (a pass's heads adjacent, so that one base addresses them all),
// per head Z and kappa at [h * kMaxGroups + g], and none[h] set when the block adds nothing to
// the head (head_weights).
struct Scratch {
  BlockParams params;
  std::vector<uint8_t> u;
  std::vector<float> Z, kappa;
  std::vector<char> none;
  void fit(int G) {
    if (none.size() >= size_t(G)) return;
    u.resize(size_t(kMaxGroups) * size_t(G) * kBlk);
    Z.resize(size_t(G) * kMaxGroups);
    kappa.resize(size_t(G) * kMaxGroups);
    none.resize(size_t(G));
  }
};

// acc + the sums of four u8 x s8 products per 32-bit lane. The products are at most 255 * 15, so
// the 16-bit pair sums of vpmaddubsw cannot saturate and every path gives the same integers.
inline vi dot_u8s8(vi acc, vi u, vi c) {
#if defined(__AVX512F__)
#if defined(__AVX512VNNI__)
  return simd::dpbusd(acc, u, c);  // the asm form: GCC 12 shuffles the intrinsic's accumulators
#else
  return _mm512_add_epi32(acc, _mm512_madd_epi16(_mm512_maddubs_epi16(u, c), _mm512_set1_epi16(1)));
#endif
#elif defined(__AVXVNNI__)
  return _mm256_dpbusd_avx_epi32(acc, u, c);
#else
  return _mm256_add_epi32(acc, _mm256_madd_epi16(_mm256_maddubs_epi16(u, c), _mm256_set1_epi16(1)));
#endif
}

inline vf to_float(vi x) {
#if defined(__AVX512F__)
  return _mm512_cvtepi32_ps(x);
#else
  return _mm256_cvtepi32_ps(x);
#endif
}

// Element vectors 2c and 2c + 1 of a value group's quad line (byte 4k + r = key 4u + r's record
// byte k of the group, kv_quant.h): the low and the high nibbles of its bytes 4Wc..4Wc+4W-1, so
// lane k of a vector is the quad of keys 4u..4u+3 of one element and the integer dots land in
// the exact kernel's lane order.
inline void line_nibbles(const uint8_t* line, int c, vi& lo, vi& hi) {
#if defined(__AVX512F__)
  const __m512i x = _mm512_loadu_si512(line + 4 * W * c);
  const __m512i low4 = _mm512_set1_epi8(15);
  lo = _mm512_and_si512(x, low4);
  hi = _mm512_and_si512(_mm512_srli_epi16(x, 4), low4);
#else
  const __m256i x = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(line + 4 * W * c));
  const __m256i low4 = _mm256_set1_epi8(15);
  lo = _mm256_and_si256(x, low4);
  hi = _mm256_and_si256(_mm256_srli_epi16(x, 4), low4);
#endif
}

// Reads an int4 value block's (kv_quant.h) parameters for the keys j0..j0+31; bit t of `bits`
// marks a key the query sees (the others' ratio and zero are 0, so their codes, which may be any
// bytes past the cache's end, weigh 0). Always inlined: called out of line (as GCC chose once
// pv8_heads was split in two) the seed shape's 8-bit kernel measured up to 1.08x slower.
[[gnu::always_inline]] inline void load_block_params(const uint8_t* vblock, int D, uint32_t bits,
                                                     BlockParams& bp) {
  const int groups = D / kKVQuantGroup;
  // The parameters: scales [groups][32 keys] then zeros likewise, fp16, lanes over keys.
  const uint16_t* scales = reinterpret_cast<const uint16_t*>(vblock + int4_block_params_offset(D));
  const uint16_t* zeros = scales + size_t(groups) * kBlk;
  for (int g = 0; g < groups; ++g)
    for (int r = 0; r < kBV; ++r) {
      const uint32_t m = bits >> (r * W);
      store(bp.ratio[g] + r * W, from_f16_masked(scales + g * kBlk + r * W, m));
      store(bp.zero[g] + r * W, from_f16_masked(zeros + g * kBlk + r * W, m));
    }
  // sigma_g = max s (scales are >= 0; masked keys read 0), inv_g = sigma_g > 0 ? 1 / sigma_g : 0.
  alignas(64) float inv[kMaxGroups > W ? kMaxGroups : W];
#if defined(__AVX512F__)
  if (groups >= 4) {
    // All groups at once: one reduction and one division for up to eight (the same maxima and the
    // same correctly rounded quotients as one group at a time).
    vf m[kMaxGroups];
    for (int g = 0; g < kMaxGroups; ++g) {
      m[g] = zero();
      for (int r = 0; g < groups && r < kBV; ++r) m[g] = max(m[g], load(bp.ratio[g] + r * W));
    }
    alignas(64) float sig[W] = {};
    attention_block::hmax_heads8(m, sig);
    const vf sv = load(sig);
    store(inv, _mm512_maskz_div_ps(_mm512_cmp_ps_mask(sv, zero(), _CMP_GT_OQ), set1(1.f), sv));
    for (int g = 0; g < groups; ++g) bp.sigma[g] = sig[g];
  } else
#endif
    for (int g = 0; g < groups; ++g) {
      vf m = zero();
      for (int r = 0; r < kBV; ++r) m = max(m, load(bp.ratio[g] + r * W));
      bp.sigma[g] = hmax(m);
      inv[g] = bp.sigma[g] > 0 ? 1.f / bp.sigma[g] : 0.f;
    }
  for (int g = 0; g < groups; ++g)
    for (int r = 0; r < kBV; ++r)
      store(bp.ratio[g] + r * W, mul(load(bp.ratio[g] + r * W), set1(inv[g])));
}

// kBV vectors of int32 codes in [0, 255] to 32 bytes in key order.
inline void pack_codes(const vi* u, uint8_t* out) {
#if defined(__AVX512F__)
  // In registers, then one store: vpmovdb to memory cost ~10% of the kernel on Zen 5 (2026-11-29).
  const __m128i a = _mm512_cvtepi32_epi8(u[0]), b = _mm512_cvtepi32_epi8(u[1]);
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(out),
                      _mm256_inserti128_si256(_mm256_castsi128_si256(a), b, 1));
#else
  const __m256i b =
      _mm256_packus_epi16(_mm256_packus_epi32(u[0], u[1]), _mm256_packus_epi32(u[2], u[3]));
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(out),
                      _mm256_permutevar8x32_epi32(b, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7)));
#endif
}

// Head h's weights from its 32 block probabilities p (0 for keys it does not see). With
// P = max p, a = 255 / P, per value group g:
//   u_t = nearbyint((p_t * a) * ratio_t) in [0, 255], Z_g = sum_t u_t * z_t (float, lanes over
//   keys, then hsum), kappa_g = P * sigma_g * (1/255).
// Nothing visible, or every weight below 2^-120 of the running maximum (where 255 / P would
// overflow to inf and 0 * inf make NaN codes): `none`, the block adds nothing. What it drops is
// at most 32 * 2^-120 * max |v| against l >= 1 (the running maximum's own weight), inside the
// bound.
inline void head_weights(int G, int groups, int h, const float* p, Scratch& s) {
  vf pm = zero();
  for (int r = 0; r < kBV; ++r) pm = max(pm, load(p + r * W));
  const float P = hmax(pm);
  s.none[size_t(h)] = !(P >= 0x1p-120f);
  if (s.none[size_t(h)]) return;
  vf pa[kBV];
  for (int r = 0; r < kBV; ++r) pa[r] = mul(load(p + r * W), set1(255.f / P));
  for (int g = 0; g < groups; ++g) {
    vi u[kBV];
    vf zs = zero();
    for (int r = 0; r < kBV; ++r) {
      u[r] = cvt_i(mul(pa[r], load(s.params.ratio[g] + r * W)));
      zs = fma(to_float(u[r]), load(s.params.zero[g] + r * W), zs);
    }
    pack_codes(u, &s.u[(size_t(g) * size_t(G) + size_t(h)) * kBlk]);
    s.Z[size_t(h) * kMaxGroups + size_t(g)] = hsum(zs);
    s.kappa[size_t(h) * kMaxGroups + size_t(g)] = P * s.params.sigma[g] * (1.f / 255.f);
  }
}

#if defined(__AVX512F__)
// head_weights for the eight heads h0..h0+7 at once: the same operations per head, with the
// maxima and the sums Z reduced eight heads at a time in hsum's tree (reduce_heads8) and 255 / P
// as one vector division. Its bits are head_weights' (tests/kernels/attention_pv8_test.cpp).
inline void head_weights8(int G, int groups, int h0, const float* p, Scratch& s) {
  vf pm[8];
  for (int h = 0; h < 8; ++h) {
    pm[h] = zero();
    for (int r = 0; r < kBV; ++r) pm[h] = max(pm[h], load(p + h * kBlk + r * W));
  }
  alignas(64) float P[16], a[16];
  attention_block::hmax_heads8(pm, P);
  for (int h = 8; h < 16; ++h) P[h] = 1.f;
  store(a, div(set1(255.f), load(P)));  // each lane 255 / P, as the scalar division rounds it
  vf pa[8][kBV];
  for (int h = 0; h < 8; ++h) {
    s.none[size_t(h0 + h)] = !(P[h] >= 0x1p-120f);
    for (int r = 0; r < kBV; ++r) pa[h][r] = mul(load(p + h * kBlk + r * W), set1(a[h]));
  }
  for (int g = 0; g < groups; ++g) {
    vf zs[8];
    for (int h = 0; h < 8; ++h) {
      vi u[kBV];
      zs[h] = zero();
      for (int r = 0; r < kBV; ++r) {
        u[r] = cvt_i(mul(pa[h][r], load(s.params.ratio[g] + r * W)));
        zs[h] = fma(to_float(u[r]), load(s.params.zero[g] + r * W), zs[h]);
      }
      pack_codes(u, &s.u[(size_t(g) * size_t(G) + size_t(h0 + h)) * kBlk]);
    }
    float Z[8];
    attention_block::hsum_heads8(zs, Z);
    for (int h = 0; h < 8; ++h) {
      const size_t hg = size_t(h0 + h) * kMaxGroups + size_t(g);
      s.Z[hg] = Z[h];
      s.kappa[hg] = P[h] * s.params.sigma[g] * (1.f / 255.f);
    }
  }
}
#endif

// Value group g of HN heads h0..h0+HN-1: I_e = sum_t u_t * c_{t,e} (exact int32, so in any
// order), then o_e = fma(I_e - Z_g, kappa_g, o_e * alpha), or o_e = o_e * alpha for a `none`
// head. o[h] points at the head's group (kVG vectors, lane order); u at the first head's codes
// of the group (the others follow, kBlk bytes apart).
template <int HN>
inline void group_pass(float* const* o, const float* alpha, const uint8_t* u, const float* Z,
                       const float* kappa, const char* none, const uint8_t* lines) {
  vi acc[HN][kVG];
  for (auto& a : acc)
    for (auto& x : a) x = set1i(0);
#pragma GCC unroll 8
  for (int q = 0; q < kQuads; ++q) {
    vi c[kVG];
    for (int v = 0; v < kVG; v += 2) line_nibbles(lines + size_t(q) * 64, v / 2, c[v], c[v + 1]);
    for (int h = 0; h < HN; ++h) {
      const vi bc = bcast4(u + h * kBlk + 4 * q);
      for (int v = 0; v < kVG; ++v) acc[h][v] = dot_u8s8(acc[h][v], bc, c[v]);
    }
  }
  for (int h = 0; h < HN; ++h) {
    const vf av = set1(alpha[h]);
    if (none[h]) {
      for (int v = 0; v < kVG; ++v) store(o[h] + v * W, mul(load(o[h] + v * W), av));
      continue;
    }
    const vf z = set1(Z[h * kMaxGroups]), k = set1(kappa[h * kMaxGroups]);
    for (int v = 0; v < kVG; ++v)
      store(o[h] + v * W, fma(sub(to_float(acc[h][v]), z), k, mul(load(o[h] + v * W), av)));
  }
}

template <int HN>
inline void group_pass_n(int hn, float* const* o, const float* alpha, const uint8_t* u,
                         const float* Z, const float* kappa, const char* none,
                         const uint8_t* lines) {
  if (hn == HN) return group_pass<HN>(o, alpha, u, Z, kappa, none, lines);
  if constexpr (HN > 1) return group_pass_n<HN - 1>(hn, o, alpha, u, Z, kappa, none, lines);
}

// The first half of pv8_heads: the block's parameters and the weights of the G heads of a kv group
// (probabilities at p + h * kBlk, 0 for keys the query does not see; bit t of `bits` marks a
// visible key) into s.
inline void pv8_weights(int G, int D, const float* p, uint32_t bits, const uint8_t* vblock,
                        Scratch& s) {
  const int groups = D / kKVQuantGroup;
  s.fit(G);
  load_block_params(vblock, D, bits, s.params);
  int h = 0;
#if defined(__AVX512F__)
  for (; h + 8 <= G; h += 8) head_weights8(G, groups, h, p + size_t(h) * kBlk, s);
#endif
  for (; h < G; ++h) head_weights(G, groups, h, p + size_t(h) * kBlk, s);
}

// The second half: o_h = o_h * alpha_h + the block's 8-bit P.V from pv8_weights' s (partial
// outputs at part + h * stride + o_off, lane order).
inline void pv8_update(int G, int D, float* part, size_t stride, size_t o_off, const float* alpha,
                       const uint8_t* vblock, const Scratch& s) {
  const int groups = D / kKVQuantGroup;
  for (int g = 0; g < groups; ++g)
    for (int h0 = 0; h0 < G; h0 += kHeadsPerPass) {
      const int hn = std::min(kHeadsPerPass, G - h0);
      float* o[kHeadsPerPass];
      for (int i = 0; i < hn; ++i)
        o[i] = part + size_t(h0 + i) * stride + o_off + size_t(g) * kKVQuantGroup;
      const size_t hg = size_t(h0) * kMaxGroups + size_t(g);
      group_pass_n<kHeadsPerPass>(
          hn, o, alpha + h0, &s.u[(size_t(g) * size_t(G) + size_t(h0)) * kBlk], &s.Z[hg],
          &s.kappa[hg], &s.none[size_t(h0)], vblock + vblock_line_offset(g, 0));
    }
}

// o_h = o_h * alpha_h + the block's 8-bit P.V for the G heads of a kv group (pv8_weights, then
// pv8_update): the block adds, per head and group, sum_t (u_t * kappa_g) * (c_{t,e} - z_t), the
// exact kernel's sum with each weight p_t * s_t replaced by u_t * kappa_g. Each head's bits are
// the same however the heads are grouped.
inline void pv8_heads(int G, int D, float* part, size_t stride, size_t o_off, const float* alpha,
                      const float* p, uint32_t bits, const uint8_t* vblock, Scratch& s) {
  pv8_weights(G, D, p, bits, vblock, s);
  pv8_update(G, D, part, stride, o_off, alpha, vblock, s);
}

}  // namespace accel::attention_pv8

#pragma GCC diagnostic pop
