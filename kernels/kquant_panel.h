// The GEMM panel layout of k-quant weights (q4_K, q5_K, q6_K), for gemm.cpp only: packs one ggml
// super-block into column c of an NR-column panel, and dequantizes one 32-row sub-block of a panel
// to exactly the floats dequantize_row() gives (same operations, same order; every product is
// exact, see below). Knows nothing of tiling, threads or the micro-kernel.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "kernels/dtype.h"
#include "kernels/kquant.h"
#include "kernels/simd.h"

namespace accel::kq {

// Per super-block of 256 K rows, a panel of NR columns holds (column n at stride NR, so the kernel
// loads W consecutive columns of one field as a vector):
//   Q4_K  uint16 d[NR], dmin[NR]; uint8 sc[8][NR], m[8][NR] (6-bit codes unpacked);
//         uint8 qs[128][NR] (ggml's byte order: row 32g+l = sub-blocks 2g | 2g+1 << 4, element l)
//   Q5_K  as Q4_K, then uint8 qh[32][NR] (bit s of row l: sub-block s's element l, fifth bit)
//   Q6_K  uint16 d[NR]; int8 sc[16][NR]; uint8 ql[128][NR]; uint8 qh[64][NR] (ggml's order)
// q4_K/q5_K cost 4 bytes more per 256 elements than ggml's (the scales unpacked once here instead
// of per use); q6_K is the same size.
template <int NR>
constexpr size_t sb_bytes(DType t) {
  switch (t) {
    case DType::Q4_K:
      return NR * (4 + 16 + 128);
    case DType::Q5_K:
      return NR * (4 + 16 + 128 + 32);
    case DType::Q6_K:
      return NR * (2 + 16 + 128 + 64);
    default:
      return 0;
  }
}

constexpr bool is_kquant(DType t) {
  return t == DType::Q4_K || t == DType::Q5_K || t == DType::Q6_K;
}

// Copies the ggml block at `blk` (block_bytes of type t; may be unaligned) into column c of the
// super-block region `sb` of a panel.
template <int NR>
inline void pack_block(DType t, const uint8_t* blk, uint8_t* sb, size_t c) {
  if (t == DType::Q6_K) {
    BlockQ6_K b;
    std::memcpy(&b, blk, sizeof b);
    std::memcpy(sb + 2 * c, &b.d, 2);
    for (int g = 0; g < 16; ++g) sb[2 * NR + g * NR + c] = uint8_t(b.scales[g]);
    for (int l = 0; l < 128; ++l) sb[18 * NR + l * NR + c] = b.ql[l];
    for (int l = 0; l < 64; ++l) sb[146 * NR + l * NR + c] = b.qh[l];
    return;
  }
  // q4_K and q5_K share the header and the nibble layout (q5_K adds qh after the nibbles).
  BlockQ5_K b;
  std::memcpy(&b, blk, 4 + 12);
  const uint8_t* qs = blk + (t == DType::Q5_K ? offsetof(BlockQ5_K, qs) : offsetof(BlockQ4_K, qs));
  std::memcpy(sb + 2 * c, &b.d, 2);
  std::memcpy(sb + 2 * NR + 2 * c, &b.dmin, 2);
  for (int s = 0; s < 8; ++s) {
    uint8_t sc, m;
    kquant_scale_min(s, b.scales, sc, m);
    sb[4 * NR + s * NR + c] = sc;
    sb[12 * NR + s * NR + c] = m;
  }
  for (int l = 0; l < 128; ++l) sb[20 * NR + l * NR + c] = qs[l];
  if (t == DType::Q5_K) {
    const uint8_t* qh = blk + offsetof(BlockQ5_K, qh);
    for (int l = 0; l < 32; ++l) sb[148 * NR + l * NR + c] = qh[l];
  }
}

// W consecutive bytes widened to int32 lanes, and the few integer operations the decoders need
// (kept here rather than in simd.h: nothing else uses them). GCC 12 warns about a self-initialised
// variable inside the intrinsics once inlined (bug 105593, as in simd.h); the value is never used.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
namespace isa {
#if defined(__AVX512F__)
using vi = __m512i;
inline vi u8(const uint8_t* p) {
  return _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}
inline vi i8(const uint8_t* p) {
  return _mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}
inline simd::vf to_f(vi x) {
  return _mm512_cvtepi32_ps(x);
}
inline vi bits(vi x, int shift, int mask) {  // (x >> shift) & mask
  return _mm512_and_si512(_mm512_srlv_epi32(x, _mm512_set1_epi32(shift)), _mm512_set1_epi32(mask));
}
inline vi shl4_or(vi lo, vi hi) {  // lo | hi << 4
  return _mm512_or_si512(lo, _mm512_slli_epi32(hi, 4));
}
inline vi sub_i(vi a, int b) {
  return _mm512_sub_epi32(a, _mm512_set1_epi32(b));
}
#else
using vi = __m256i;
inline vi u8(const uint8_t* p) {
  return _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)));
}
inline vi i8(const uint8_t* p) {
  return _mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)));
}
inline simd::vf to_f(vi x) {
  return _mm256_cvtepi32_ps(x);
}
inline vi bits(vi x, int shift, int mask) {
  return _mm256_and_si256(_mm256_srlv_epi32(x, _mm256_set1_epi32(shift)), _mm256_set1_epi32(mask));
}
inline vi shl4_or(vi lo, vi hi) {
  return _mm256_or_si256(lo, _mm256_slli_epi32(hi, 4));
}
inline vi sub_i(vi a, int b) {
  return _mm256_sub_epi32(a, _mm256_set1_epi32(b));
}
#endif
}  // namespace isa

// Decoder of sub-block `sub` (K rows 32*sub .. 32*sub+31) of a panel of type T: row(l, j) is the
// W floats of K row 32*sub + l, columns j*W .. j*W+W-1, exactly as dequantize_row() gives them.
// Why exact: fp16 d (11 significant bits) times a 6-bit scale, times a code of at most 5 bits
// (q4_K/q5_K) fits in 24 bits, as does d (11) x int8 scale (7 + sign) x 6-bit code (q6_K), so
// every product is exact and q4_K/q5_K's final subtraction of the min is the only rounding, as in
// ggml's formulas; the vector code performs the same float operations in the same order anyway.
// The per-column scales are set up once per sub-block (2 vectors per W columns).
template <int NR, DType T>
struct SubDecoder {
  static constexpr int W = simd::W;
  const uint8_t* q;   // nibble rows (q4_K/q5_K qs, q6_K ql) for this sub-block
  const uint8_t* qh;  // high-bit rows (q5_K, q6_K)
  int nib_shift, hi_shift;
  simd::vf a[NR / W], b[NR / W];  // q4_K/q5_K: d*sc and dmin*m; q6_K: d*sc for rows 0-15, 16-31

  SubDecoder(const uint8_t* panel, size_t sub) {
    const uint8_t* sb = panel + sub / 8 * sb_bytes<NR>(T);
    const int s = int(sub % 8);
    const uint16_t* d = reinterpret_cast<const uint16_t*>(sb);
    if constexpr (T == DType::Q6_K) {
      const uint8_t* sc = sb + 2 * NR;
      const int h = s / 4, part = s % 4;  // 128-half; which of ggml's q1..q4 this sub-block is
      q = sb + 18 * NR + (64 * h + (part & 1) * 32) * NR;
      qh = sb + 146 * NR + 32 * h * NR;
      nib_shift = (part >> 1) * 4;
      hi_shift = 2 * part;
      for (int j = 0; j < NR / W; ++j) {  // ggml: y = d * sc[is] * q = (d * sc) * q
        const simd::vf dj = simd::from_f16(d + j * W);
        a[j] = simd::mul(dj, isa::to_f(isa::i8(sc + (8 * h + 2 * part) * NR + j * W)));
        b[j] = simd::mul(dj, isa::to_f(isa::i8(sc + (8 * h + 2 * part + 1) * NR + j * W)));
      }
    } else {
      const uint8_t* sc = sb + 4 * NR + s * NR;
      const uint8_t* mn = sb + 12 * NR + s * NR;
      q = sb + 20 * NR + 32 * (s / 2) * NR;
      qh = sb + 148 * NR;
      nib_shift = (s & 1) * 4;
      hi_shift = s;
      for (int j = 0; j < NR / W; ++j) {  // ggml: d1 = d * sc, m1 = dmin * m
        a[j] = simd::mul(simd::from_f16(d + j * W), isa::to_f(isa::u8(sc + j * W)));
        b[j] = simd::mul(simd::from_f16(d + NR + j * W), isa::to_f(isa::u8(mn + j * W)));
      }
    }
  }

  simd::vf row(int l, int j) const {
    const isa::vi lo = isa::bits(isa::u8(q + l * NR + j * W), nib_shift, 0xF);
    if constexpr (T == DType::Q6_K) {
      const isa::vi hi = isa::bits(isa::u8(qh + l * NR + j * W), hi_shift, 3);
      return simd::mul(l < 16 ? a[j] : b[j], isa::to_f(isa::sub_i(isa::shl4_or(lo, hi), 32)));
    } else if constexpr (T == DType::Q5_K) {  // ggml: y = d1 * (nibble + 16 * bit) - m1
      const isa::vi hi = isa::bits(isa::u8(qh + l * NR + j * W), hi_shift, 1);
      return simd::sub(simd::mul(a[j], isa::to_f(isa::shl4_or(lo, hi))), b[j]);
    } else {  // ggml: y = d1 * nibble - m1
      return simd::sub(simd::mul(a[j], isa::to_f(lo)), b[j]);
    }
  }
};

// Sub-block `sub` of a panel of type T -> out[32][NR] floats (SubDecoder's values).
template <int NR, DType T>
inline void dequant_sub(const uint8_t* panel, size_t sub, float* __restrict out) {
  const SubDecoder<NR, T> dec(panel, sub);
  for (int l = 0; l < 32; ++l)
    for (int j = 0; j < NR / simd::W; ++j) simd::store(out + l * NR + j * simd::W, dec.row(l, j));
}

template <int NR>
inline void dequant_sub(DType t, const uint8_t* panel, size_t sub, float* __restrict out) {
  switch (t) {
    case DType::Q4_K:
      return dequant_sub<NR, DType::Q4_K>(panel, sub, out);
    case DType::Q5_K:
      return dequant_sub<NR, DType::Q5_K>(panel, sub, out);
    default:
      return dequant_sub<NR, DType::Q6_K>(panel, sub, out);
  }
}

}  // namespace accel::kq

#pragma GCC diagnostic pop
