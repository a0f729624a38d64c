// The GEMM panel layout of k-quant weights (q4_K, q5_K, q6_K) and their integer-dot tile kernel,
// for gemm.cpp only: packs one ggml super-block into column c of an NR-column panel, and computes
// R rows x one vector of W columns over the whole of K from q8_K activations
// (quantize_activations_q8_K). Knows nothing of row blocking, threads or the f32 micro-kernel.
//
// Why integer dot products (as ggml's vec_dot_q*_K_q8_K): decoding 4-6 bit codes to floats costs
// ~7 vector operations per 16 weights, which kept decode at half the machine's read bandwidth;
// u8 x s8 dot products (AVX-512 VNNI / AVX-VNNI vpdpbusd, else vpmaddubsw + vpmaddwd) take one
// per 4 x W multiply-adds on the packed codes. Every output uses this path whatever M, so a token's
// result is the same in a prefill chunk and in a decode step (ARCHITECTURE.md invariant 1).
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "kernels/decode_prefetch.h"
#include "kernels/dtype.h"
#include "kernels/kquant.h"
#include "kernels/simd.h"

namespace accel::kq {

// Per super-block of 256 K rows, a panel of NR columns holds (column n at stride NR so a vector
// load takes consecutive columns; code bytes in groups of 4 K rows so a 32-bit lane holds 4
// consecutive rows of one column, the operand shape of a dot product of 4 bytes):
//   Q4_K  uint16 d[NR], dmin[NR]; uint8 sc[8][NR], m[8][NR] (6-bit codes unpacked);
//         uint8 qs[32][NR][4]: ggml's qs rows (row 32g + l = sub-block 2g's element l in the low
//         nibble, 2g+1's in the high one), row r at [r / 4][n][r % 4]
//   Q5_K  as Q4_K, then uint8 qh[8][NR][4] (ggml's qh rows: bit s of row l = sub-block s's
//         element l's fifth bit)
//   Q6_K  uint16 d[NR]; int8 sc[16][NR]; uint8 ql[32][NR][4]; uint8 qh[16][NR][4] (ggml's rows)
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

// Row r (of `rows` code rows) of column c in a 4-row-grouped region.
template <int NR>
constexpr size_t grouped(size_t r, size_t c) {
  return (r / 4 * NR + c) * 4 + r % 4;
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
    for (size_t l = 0; l < 128; ++l) sb[18 * NR + grouped<NR>(l, c)] = b.ql[l];
    for (size_t l = 0; l < 64; ++l) sb[146 * NR + grouped<NR>(l, c)] = b.qh[l];
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
  for (size_t l = 0; l < 128; ++l) sb[20 * NR + grouped<NR>(l, c)] = qs[l];
  if (t == DType::Q5_K) {
    const uint8_t* qh = blk + offsetof(BlockQ5_K, qh);
    for (size_t l = 0; l < 32; ++l) sb[148 * NR + grouped<NR>(l, c)] = qh[l];
  }
}

// One row's q8_K activations (quantize_activations_q8_K): codes, per-256 scales, per-16 sums.
struct ActRow {
  const int8_t* q;
  const float* d;
  const int32_t* sums16;
};

// The integer operations of the kernel at the vector width of simd.h. GCC 12 warns about a
// self-initialised variable inside the intrinsics once inlined (bug 105593, as in simd.h).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
namespace iv {
#if defined(__AVX512F__)
using vi = __m512i;
inline vi zero() {
  return _mm512_setzero_si512();
}
inline vi load(const uint8_t* p) {
  return _mm512_loadu_si512(p);
}
inline vi bytes(int b) {
  return _mm512_set1_epi8(char(b));
}
inline vi and_(vi a, vi b) {
  return _mm512_and_si512(a, b);
}
inline vi or_(vi a, vi b) {
  return _mm512_or_si512(a, b);
}
inline vi xor_(vi a, vi b) {
  return _mm512_xor_si512(a, b);
}
// Per 16-bit lane, by a count that need not be a compile-time constant; callers mask each byte.
inline vi srl16(vi a, int n) {
  return _mm512_srl_epi16(a, _mm_cvtsi32_si128(n));
}
inline vi sll16(vi a, int n) {
  return _mm512_sll_epi16(a, _mm_cvtsi32_si128(n));
}
inline vi bcast4(const int8_t* p) {  // 4 bytes into every 32-bit lane
  int32_t v;
  std::memcpy(&v, p, 4);
  return _mm512_set1_epi32(v);
}
// acc + sum of the 4 products u8(w) * s8(x) per 32-bit lane; exact (|sum| < 2^17 here).
inline vi dot4(vi acc, vi w, vi x) {
#if defined(__AVX512VNNI__)
  return simd::dpbusd(acc, w, x);
#else  // pairs never saturate: 63 * 127 * 2 < 2^15
  return _mm512_add_epi32(acc, _mm512_madd_epi16(_mm512_maddubs_epi16(w, x), _mm512_set1_epi16(1)));
#endif
}
inline vi u8_to_i32(const uint8_t* p) {
  return _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}
inline vi i8_to_i32(const uint8_t* p) {
  return _mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}
inline vi mul32(vi a, vi b) {
  return _mm512_mullo_epi32(a, b);
}
inline vi add32(vi a, vi b) {
  return _mm512_add_epi32(a, b);
}
inline vi set32(int32_t x) {
  return _mm512_set1_epi32(x);
}
inline simd::vf to_f(vi x) {
  return _mm512_cvtepi32_ps(x);
}
#else
using vi = __m256i;
inline vi zero() {
  return _mm256_setzero_si256();
}
inline vi load(const uint8_t* p) {
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
}
inline vi bytes(int b) {
  return _mm256_set1_epi8(char(b));
}
inline vi and_(vi a, vi b) {
  return _mm256_and_si256(a, b);
}
inline vi or_(vi a, vi b) {
  return _mm256_or_si256(a, b);
}
inline vi xor_(vi a, vi b) {
  return _mm256_xor_si256(a, b);
}
inline vi srl16(vi a, int n) {
  return _mm256_srl_epi16(a, _mm_cvtsi32_si128(n));
}
inline vi sll16(vi a, int n) {
  return _mm256_sll_epi16(a, _mm_cvtsi32_si128(n));
}
inline vi bcast4(const int8_t* p) {
  int32_t v;
  std::memcpy(&v, p, 4);
  return _mm256_set1_epi32(v);
}
inline vi dot4(vi acc, vi w, vi x) {
#if defined(__AVXVNNI__)
  return _mm256_dpbusd_avx_epi32(acc, w, x);
#else
  return _mm256_add_epi32(acc, _mm256_madd_epi16(_mm256_maddubs_epi16(w, x), _mm256_set1_epi16(1)));
#endif
}
inline vi u8_to_i32(const uint8_t* p) {
  return _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)));
}
inline vi i8_to_i32(const uint8_t* p) {
  return _mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)));
}
inline vi mul32(vi a, vi b) {
  return _mm256_mullo_epi32(a, b);
}
inline vi add32(vi a, vi b) {
  return _mm256_add_epi32(a, b);
}
inline vi set32(int32_t x) {
  return _mm256_set1_epi32(x);
}
inline simd::vf to_f(vi x) {
  return _mm256_cvtepi32_ps(x);
}
#endif
// Bit `from` of every byte moved to bit `to` (and the bits beside it by the same distance): a
// 16-bit shift; after the caller's per-byte mask no bit has crossed a byte, as 0 <= from, to < 8.
inline vi move_bits(vi a, int from, int to) {
  return from <= to ? sll16(a, to - from) : srl16(a, from - to);
}

// Without VNNI, dot4 is three instructions: vpmaddubsw (pair sums in 16-bit lanes), vpmaddwd by
// ones (widen) and an add. Where the codes are small the pair sums of several steps fit a 16-bit
// lane, so a caller may add them there (dot4_16) and widen once, multiplying by a per-lane int16
// scale in the same instruction (madd16_by), as ggml's AVX2 q4_K kernel does: two instructions
// per step instead of three, and no 32-bit multiply. Exact while every 16-bit lane stays within
// [-2^15, 2^15): the caller bounds its steps. With VNNI, dot4 is already one instruction.
#if defined(__AVX512F__) ? defined(__AVX512VNNI__) : defined(__AVXVNNI__)
inline constexpr bool kNarrowSums = false;
#else
inline constexpr bool kNarrowSums = true;
#endif
#if defined(__AVX512F__)
inline vi dot4_16(vi acc16, vi w, vi x) {
  return _mm512_add_epi16(acc16, _mm512_maddubs_epi16(w, x));
}
inline vi madd16_by(vi acc32, vi sums16, vi scale_pairs) {
  return _mm512_add_epi32(acc32, _mm512_madd_epi16(sums16, scale_pairs));
}
inline vi i16_pairs(vi v) {  // lane n's value (in int16 range) in both of its 16-bit halves
  return _mm512_or_si512(_mm512_and_si512(v, _mm512_set1_epi32(0xFFFF)), _mm512_slli_epi32(v, 16));
}
#else
inline vi dot4_16(vi acc16, vi w, vi x) {
  return _mm256_add_epi16(acc16, _mm256_maddubs_epi16(w, x));
}
inline vi madd16_by(vi acc32, vi sums16, vi scale_pairs) {
  return _mm256_add_epi32(acc32, _mm256_madd_epi16(sums16, scale_pairs));
}
inline vi i16_pairs(vi v) {
  return _mm256_or_si256(_mm256_and_si256(v, _mm256_set1_epi32(0xFFFF)), _mm256_slli_epi32(v, 16));
}
#endif
}  // namespace iv

// The codes of sub-blocks 2g (low nibbles) and 2g + 1 (high) of super-block b, with q5_K's fifth
// bits, for the W columns at `col`: byte row 32g + 4t .. 32g + 4t + 3.
template <int NR, DType T>
inline __attribute__((always_inline)) void q45_codes(const uint8_t* qs, const uint8_t* qh, int g,
                                                     int t, size_t col, iv::vi& lo, iv::vi& hi) {
  const iv::vi w = iv::load(qs + grouped<NR>(32 * size_t(g) + 4 * size_t(t), col));
  lo = iv::and_(w, iv::bytes(0x0F));
  hi = iv::and_(iv::srl16(w, 4), iv::bytes(0x0F));
  if constexpr (T == DType::Q5_K) {  // fifth bits: bits 2g and 2g + 1 of qh row l
    const iv::vi h = iv::load(qh + grouped<NR>(4 * size_t(t), col));
    lo = iv::or_(lo, iv::and_(iv::move_bits(h, 2 * g, 4), iv::bytes(0x10)));
    hi = iv::or_(hi, iv::and_(iv::move_bits(h, 2 * g + 1, 4), iv::bytes(0x10)));
  }
}

// A[r] += sc[2g] * (sum_l code * xq over sub-block 2g) + sc[2g+1] * (the same over 2g + 1), with
// the dot products in 32-bit lanes (dot4).
template <int NR, DType T, int R>
inline __attribute__((always_inline)) void sub_block_pair(const uint8_t* qs, const uint8_t* qh,
                                                          size_t b, int g, size_t col,
                                                          const uint8_t* sc, const ActRow (&x)[R],
                                                          iv::vi (&A)[R]) {
  // With one row, two partial sums per sub-block halve the dot products' dependency chain
  // (integer adds: exact, so the result is the same).
  constexpr int C = R == 1 ? 2 : 1;
  iv::vi slo[C][R], shi[C][R];
  for (int c = 0; c < C; ++c)
    for (int r = 0; r < R; ++r) slo[c][r] = shi[c][r] = iv::zero();
  for (int t = 0; t < 8; ++t) {
    iv::vi lo, hi;
    q45_codes<NR, T>(qs, qh, g, t, col, lo, hi);
    for (int r = 0; r < R; ++r) {
      const int8_t* xq = x[r].q + b * 256 + 64 * g + 4 * t;
      slo[t % C][r] = iv::dot4(slo[t % C][r], lo, iv::bcast4(xq));
      shi[t % C][r] = iv::dot4(shi[t % C][r], hi, iv::bcast4(xq + 32));
    }
  }
  const iv::vi sc0 = iv::u8_to_i32(sc), sc1 = iv::u8_to_i32(sc + NR);
  for (int r = 0; r < R; ++r) {
    iv::vi lo_sum = slo[0][r], hi_sum = shi[0][r];
    for (int c = 1; c < C; ++c) lo_sum = iv::add32(lo_sum, slo[c][r]);
    for (int c = 1; c < C; ++c) hi_sum = iv::add32(hi_sum, shi[c][r]);
    A[r] = iv::add32(A[r], iv::add32(iv::mul32(sc0, lo_sum), iv::mul32(sc1, hi_sum)));
  }
}

// The same integers with the pair sums kept in 16-bit lanes (iv::dot4_16) for kSpan steps, then
// widened and scaled at once (iv::madd16_by). A step adds at most 2 * 15 * 127 = 3,810 per lane
// for q4_K (8 steps: 30,480) and 2 * 31 * 127 = 7,874 for q5_K (4 steps: 31,496), below 2^15:
// exact (q8_K codes lie in [-127, 127]).
template <int NR, DType T, int R>
inline __attribute__((always_inline)) void sub_block_pair_narrow(const uint8_t* qs,
                                                                 const uint8_t* qh, size_t b, int g,
                                                                 size_t col, const uint8_t* sc,
                                                                 const ActRow (&x)[R],
                                                                 iv::vi (&A)[R]) {
  constexpr int kSpan = T == DType::Q4_K ? 8 : 4;
  const iv::vi sc0 = iv::i16_pairs(iv::u8_to_i32(sc)), sc1 = iv::i16_pairs(iv::u8_to_i32(sc + NR));
  iv::vi slo[R], shi[R];
  for (int r = 0; r < R; ++r) slo[r] = shi[r] = iv::zero();
  for (int t = 0; t < 8; ++t) {
    iv::vi lo, hi;
    q45_codes<NR, T>(qs, qh, g, t, col, lo, hi);
    for (int r = 0; r < R; ++r) {
      const int8_t* xq = x[r].q + b * 256 + 64 * g + 4 * t;
      slo[r] = iv::dot4_16(slo[r], lo, iv::bcast4(xq));
      shi[r] = iv::dot4_16(shi[r], hi, iv::bcast4(xq + 32));
    }
    if ((t + 1) % kSpan == 0)
      for (int r = 0; r < R; ++r) {
        A[r] = iv::madd16_by(iv::madd16_by(A[r], slo[r], sc0), shi[r], sc1);
        slo[r] = shi[r] = iv::zero();
      }
  }
}

// Row group t (K rows 4t .. 4t+3) of q6_K sub-block 4h + p for the W columns at `col`: the codes
// 0..63, ggml's q before its - 32.
// P is a template parameter so that the shifts are immediates and, with the row-group loops
// unrolled, every address is a constant offset (bench_kquant q6_K M = 256, one thread, Zen 3,
// 2026-11-28: the runtime-p form kept the loops rolled, with index arithmetic and a variable
// shift per step).
template <int NR, int P>
inline __attribute__((always_inline)) iv::vi q6_codes(const uint8_t* ql, const uint8_t* qh, int h,
                                                      int t, size_t col) {
  const size_t ql_row = 64 * size_t(h) + (P & 1) * 32, qh_row = 32 * size_t(h);
  const iv::vi lo =
      iv::and_(iv::srl16(iv::load(ql + grouped<NR>(ql_row + 4 * size_t(t), col)), (P >> 1) * 4),
               iv::bytes(0x0F));
  const iv::vi hi =  // bits 2P, 2P + 1 of qh row l -> code bits 4, 5
      iv::and_(iv::move_bits(iv::load(qh + grouped<NR>(qh_row + 4 * size_t(t), col)), 2 * P, 4),
               iv::bytes(0x30));
  return iv::or_(lo, hi);
}

// A[r] += sc[g] * (sum_l code * xq - 32 * xsum16[g]) over the two halves g of sub-block 4h + p,
// with the dot products in 32-bit lanes (dot4).
template <int NR, int R, int p>
inline __attribute__((always_inline)) void q6_sub_block(const uint8_t* ql, const uint8_t* qh,
                                                        size_t b, int h, size_t col,
                                                        const uint8_t* sc, const ActRow (&x)[R],
                                                        iv::vi (&A)[R]) {
  iv::vi s0[R], s1[R];
  for (int r = 0; r < R; ++r) s0[r] = s1[r] = iv::zero();
#pragma GCC unroll 8
  for (int t = 0; t < 8; ++t) {  // rows 4t .. 4t+3 of the sub-block
    const iv::vi code = q6_codes<NR, p>(ql, qh, h, t, col);
    for (int r = 0; r < R; ++r) {
      const iv::vi xv = iv::bcast4(x[r].q + b * 256 + 128 * h + 32 * p + 4 * t);
      (t < 4 ? s0[r] : s1[r]) = iv::dot4(t < 4 ? s0[r] : s1[r], code, xv);
    }
  }
  const iv::vi sc0 = iv::i8_to_i32(sc), sc1 = iv::i8_to_i32(sc + NR);
  for (int r = 0; r < R; ++r) {
    const int32_t* xs = x[r].sums16 + b * 16 + 8 * h + 2 * p;
    A[r] = iv::add32(A[r], iv::mul32(sc0, iv::add32(s0[r], iv::set32(-32 * xs[0]))));
    A[r] = iv::add32(A[r], iv::mul32(sc1, iv::add32(s1[r], iv::set32(-32 * xs[1]))));
  }
}

// The same integers with two steps' pair sums in 16-bit lanes (at most 2 * 2 * 63 * 127 = 32,004,
// below 2^15: exact), scaled as they widen (iv::madd16_by); the -32 * xsum16 terms are added
// apart, scaled by the same int8 scales.
template <int NR, int R, int p>
inline __attribute__((always_inline)) void q6_sub_block_narrow(const uint8_t* ql, const uint8_t* qh,
                                                               size_t b, int h, size_t col,
                                                               const uint8_t* sc,
                                                               const ActRow (&x)[R],
                                                               iv::vi (&A)[R]) {
  const iv::vi sc0 = iv::i8_to_i32(sc), sc1 = iv::i8_to_i32(sc + NR);
  const iv::vi sc0p = iv::i16_pairs(sc0), sc1p = iv::i16_pairs(sc1);
  iv::vi s16[R];
#pragma GCC unroll 8
  for (int t = 0; t < 8; ++t) {
    const iv::vi code = q6_codes<NR, p>(ql, qh, h, t, col);
    for (int r = 0; r < R; ++r) {
      const iv::vi xv = iv::bcast4(x[r].q + b * 256 + 128 * h + 32 * p + 4 * t);
      s16[r] = iv::dot4_16(t % 2 ? s16[r] : iv::zero(), code, xv);
    }
    if (t % 2)
      for (int r = 0; r < R; ++r) A[r] = iv::madd16_by(A[r], s16[r], t < 4 ? sc0p : sc1p);
  }
  for (int r = 0; r < R; ++r) {
    const int32_t* xs = x[r].sums16 + b * 16 + 8 * h + 2 * p;
    A[r] = iv::add32(A[r], iv::add32(iv::mul32(sc0, iv::set32(-32 * xs[0])),
                                     iv::mul32(sc1, iv::set32(-32 * xs[1]))));
  }
}

// The per-output arithmetic, in every lane (column n) and row r, per super-block b:
//   q4_K/q5_K: A = sum_s sc[s] * (sum_l code * xq), B = sum_s m[s] * xsum32[s]     (exact int32)
//              acc = fma(dx_b * d, float(A), acc);  acc = fma(-(dx_b * dmin), float(B), acc)
//   q6_K:      A = sum_g sc[g] * (sum_l code * xq - 32 * xsum16[g])                   (exact int32)
//              acc = fma(dx_b * d, float(A), acc)
// with acc starting at 0 and super-blocks in K order; `bias` (if any) is added once at the end.
// |A| stays below 2^31: q4/q5 8 * 63 * (32 * 31 * 127), q6 16 * 128 * (16 * 63 * 127 + 32 * 2032).
// The same sequence for every R, so a row's results do not depend on the rows beside it.
// One super-block b for the W columns at `col` of the panel: the step above.
template <int NR, DType T, int R>
inline __attribute__((always_inline)) void sb_step(const uint8_t* panel, size_t b, size_t col,
                                                   const ActRow (&x)[R], simd::vf (&acc)[R]) {
  {
    const uint8_t* sb = panel + b * sb_bytes<NR>(T);
    const uint16_t* d16 = reinterpret_cast<const uint16_t*>(sb);
    iv::vi A[R];
    for (int r = 0; r < R; ++r) A[r] = iv::zero();
    if constexpr (T == DType::Q6_K) {
      const uint8_t* ql = sb + 18 * NR;
      const uint8_t* qh = sb + 146 * NR;
      for (int h = 0; h < 2; ++h) {
        // sub-block 4h + p: K rows 128h + 32p + l, l < 32
        const auto sub = [&]<int p>() {
          const uint8_t* sc = sb + 2 * NR + (8 * h + 2 * p) * NR + col;
          if constexpr (iv::kNarrowSums)
            q6_sub_block_narrow<NR, R, p>(ql, qh, b, h, col, sc, x, A);
          else
            q6_sub_block<NR, R, p>(ql, qh, b, h, col, sc, x, A);
        };
        sub.template operator()<0>();
        sub.template operator()<1>();
        sub.template operator()<2>();
        sub.template operator()<3>();
      }
      const simd::vf d = simd::from_f16(d16 + col);
      for (int r = 0; r < R; ++r)
        acc[r] = simd::fma(simd::mul(simd::set1(x[r].d[b]), d), iv::to_f(A[r]), acc[r]);
    } else {
      const uint8_t* qs = sb + 20 * NR;
      const uint8_t* qh = sb + 148 * NR;
      iv::vi Bm[R];
      for (int r = 0; r < R; ++r) Bm[r] = iv::zero();
      for (int g = 0; g < 4; ++g) {  // sub-blocks 2g (low nibbles) and 2g + 1 (high)
        const uint8_t* sc = sb + 4 * NR + 2 * g * NR + col;
        const uint8_t* mn = sb + 12 * NR + 2 * g * NR + col;
        if constexpr (iv::kNarrowSums)
          sub_block_pair_narrow<NR, T, R>(qs, qh, b, g, col, sc, x, A);
        else
          sub_block_pair<NR, T, R>(qs, qh, b, g, col, sc, x, A);
        const iv::vi m0 = iv::u8_to_i32(mn), m1 = iv::u8_to_i32(mn + NR);
        for (int r = 0; r < R; ++r) {
          const int32_t* xs = x[r].sums16 + b * 16 + 4 * g;
          Bm[r] = iv::add32(Bm[r], iv::add32(iv::mul32(m0, iv::set32(xs[0] + xs[1])),
                                             iv::mul32(m1, iv::set32(xs[2] + xs[3]))));
        }
      }
      const simd::vf d = simd::from_f16(d16 + col), dmin = simd::from_f16(d16 + NR + col);
      for (int r = 0; r < R; ++r) {
        const simd::vf dx = simd::set1(x[r].d[b]);
        acc[r] = simd::fma(simd::mul(dx, d), iv::to_f(A[r]), acc[r]);
        acc[r] = simd::fma(simd::sub(simd::zero(), simd::mul(dx, dmin)), iv::to_f(Bm[r]), acc[r]);
      }
    }
  }
}

// Decode's software prefetch: the super-block `ahead` bytes past sb (decode_prefetch.h's distance
// times the super-block's size), spread over the 32 steps of sb_step_row's code loop (a few 64-byte
// lines per step). Without it the decode loop stalled on the first touch of each line: on AMD Zen 5
// the hardware prefetchers did not keep ahead of the panel's order (bench_kquant q4_K 4096 x 4096,
// M = 1, one thread, interleaved medians: 0.578 ms without, 0.209 / 0.158 / 0.219 ms with 1 / 2 / 4
// super-blocks ahead in a first version; this one, 0.601 -> 0.139 ms in a later run). The distance
// is chosen per CPU kind (decode_prefetch.cpp's table). The address is formed as an integer: past
// the last super-blocks it points beyond the panel, where a prefetch is a harmless hint but pointer
// arithmetic would be undefined. ahead 0 asks for nothing.
template <int NR, DType T>
inline __attribute__((always_inline)) void prefetch_ahead(const uint8_t* sb, size_t ahead,
                                                          int step) {
  constexpr size_t kBytes = sb_bytes<NR>(T), kLines = (kBytes + 63) / 64;
  constexpr size_t kPerStep = (kLines + 31) / 32;
  if (ahead == 0) return;
  const size_t first = size_t(step) * kPerStep;
  const uintptr_t base = reinterpret_cast<uintptr_t>(sb) + ahead;
  for (size_t l = first; l < first + kPerStep && l < kLines; ++l)
    __builtin_prefetch(reinterpret_cast<const void*>(base + 64 * l), 0, 3);
}

// The 32-element block formats' decode prefetch (mxfp4_panel.h, q8_0_panel.h): all of the block
// `ahead` bytes past `blk` (decode_prefetch.h's distance times the block's size), asked for at
// once (formed as an integer, as above). ahead 0 asks for nothing.
template <size_t BlockBytes>
inline __attribute__((always_inline)) void prefetch_block_ahead(const uint8_t* blk, size_t ahead) {
  constexpr size_t kLines = (BlockBytes + 63) / 64;
  if (ahead == 0) return;
  const uintptr_t next = reinterpret_cast<uintptr_t>(blk) + ahead;
  for (size_t l = 0; l < kLines; ++l)
    __builtin_prefetch(reinterpret_cast<const void*>(next + 64 * l), 0, 3);
}

// One row against all NJ column vectors of super-block b (decode): the same per-lane arithmetic as
// sb_step (integer sums are exact, so their order is free; the float steps are the same), but the
// vectors are the innermost loop, so the super-block is read in address order, each 4-row group
// of all NJ vectors (NJ * 64 bytes) at once, and every activation broadcast serves NJ vectors.
// sb_step's order (one vector's 64 bytes out of every NJ * 64, then the next vector's) streamed
// Q4_K_M decode's weights at 11.0 GB/s on one thread; this order with q6_K's shared loads below,
// 11.6 (20.6 -> 21.2 on two; bench_engine BM_DecodeQ4KM, medians of 4 interleaved runs).
template <int NR, DType T, int NJ>
inline __attribute__((always_inline)) void sb_step_row(const uint8_t* panel, size_t b, size_t col0,
                                                       const ActRow& x, size_t ahead,
                                                       simd::vf (&acc)[NJ]) {
  constexpr size_t W = simd::W;
  const auto col = [&](int jj) { return col0 + W * size_t(jj); };
  const uint8_t* sb = panel + b * sb_bytes<NR>(T);
  const uint16_t* d16 = reinterpret_cast<const uint16_t*>(sb);
  iv::vi A[NJ];
  for (int jj = 0; jj < NJ; ++jj) A[jj] = iv::zero();
  if constexpr (T == DType::Q6_K) {
    // Sub-blocks 4h + q and 4h + q + 2 share their ql rows (low and high nibble) and every
    // sub-block of a half h shares the qh rows: each is loaded once per pair, not per sub-block.
    // Per 16 K rows (half u of a sub-block) one scale: the sums are kept per (pair, half).
    const uint8_t* ql = sb + 18 * NR;
    const uint8_t* qh = sb + 146 * NR;
    for (int h = 0; h < 2; ++h)
      for (int q = 0; q < 2; ++q)
        for (int u = 0; u < 2; ++u) {  // K rows 128h + 32p + 16u + l, p in {q, q + 2}, l < 16
          iv::vi sa[NJ], sb2[NJ];
          for (int jj = 0; jj < NJ; ++jj) sa[jj] = sb2[jj] = iv::zero();
          for (int t = 4 * u; t < 4 * u + 4; ++t) {
            prefetch_ahead<NR, T>(sb, ahead, ((h * 2 + q) * 2 + u) * 4 + (t - 4 * u));
            const int8_t* xq = x.q + b * 256 + 128 * h + 32 * q + 4 * t;
            const iv::vi xa = iv::bcast4(xq), xb = iv::bcast4(xq + 64);
            const uint8_t* lrow = ql + grouped<NR>(64 * size_t(h) + 32 * size_t(q) + 4 * t, col0);
            const uint8_t* hrow = qh + grouped<NR>(32 * size_t(h) + 4 * t, col0);
            for (int jj = 0; jj < NJ; ++jj) {
              const iv::vi l = iv::load(lrow + 4 * W * jj), hb = iv::load(hrow + 4 * W * jj);
              const iv::vi ca = iv::or_(iv::and_(l, iv::bytes(0x0F)),
                                        iv::and_(iv::move_bits(hb, 2 * q, 4), iv::bytes(0x30)));
              const iv::vi cb = iv::or_(iv::and_(iv::srl16(l, 4), iv::bytes(0x0F)),
                                        iv::and_(iv::move_bits(hb, 2 * q + 4, 4), iv::bytes(0x30)));
              sa[jj] = iv::dot4(sa[jj], ca, xa);
              sb2[jj] = iv::dot4(sb2[jj], cb, xb);
            }
          }
          const int ga = 8 * h + 2 * q + u,
                    gb = ga + 4;  // scale / sum index of each sub-block half
          const int32_t* xs = x.sums16 + b * 16;
          const iv::vi ma = iv::set32(-32 * xs[ga]), mb = iv::set32(-32 * xs[gb]);
          for (int jj = 0; jj < NJ; ++jj) {
            const uint8_t* sc = sb + 2 * NR + col(jj);
            A[jj] = iv::add32(A[jj], iv::mul32(iv::i8_to_i32(sc + ga * NR), iv::add32(sa[jj], ma)));
            A[jj] =
                iv::add32(A[jj], iv::mul32(iv::i8_to_i32(sc + gb * NR), iv::add32(sb2[jj], mb)));
          }
        }
    const simd::vf dx = simd::set1(x.d[b]);
    for (int jj = 0; jj < NJ; ++jj)
      acc[jj] = simd::fma(simd::mul(dx, simd::from_f16(d16 + col(jj))), iv::to_f(A[jj]), acc[jj]);
  } else {
    const uint8_t* qs = sb + 20 * NR;
    const uint8_t* qh = sb + 148 * NR;
    iv::vi Bm[NJ];
    for (int jj = 0; jj < NJ; ++jj) Bm[jj] = iv::zero();
    for (int g = 0; g < 4; ++g) {  // sub-blocks 2g (low nibbles) and 2g + 1 (high)
      iv::vi slo[NJ], shi[NJ];
      for (int jj = 0; jj < NJ; ++jj) slo[jj] = shi[jj] = iv::zero();
      for (int t = 0; t < 8; ++t) {
        prefetch_ahead<NR, T>(sb, ahead, 8 * g + t);
        const int8_t* xq = x.q + b * 256 + 64 * g + 4 * t;
        const iv::vi xlo = iv::bcast4(xq), xhi = iv::bcast4(xq + 32);
        for (int jj = 0; jj < NJ; ++jj) {  // vector jj's bytes sit 4 W jj on (kq::grouped)
          iv::vi lo, hi;
          q45_codes<NR, T>(qs, qh, g, t, col(jj), lo, hi);
          slo[jj] = iv::dot4(slo[jj], lo, xlo);
          shi[jj] = iv::dot4(shi[jj], hi, xhi);
        }
      }
      const int32_t* xs = x.sums16 + b * 16 + 4 * g;
      const iv::vi x01 = iv::set32(xs[0] + xs[1]), x23 = iv::set32(xs[2] + xs[3]);
      for (int jj = 0; jj < NJ; ++jj) {
        const uint8_t* sc = sb + 4 * NR + 2 * g * NR + col(jj);
        const uint8_t* mn = sb + 12 * NR + 2 * g * NR + col(jj);
        A[jj] = iv::add32(A[jj], iv::add32(iv::mul32(iv::u8_to_i32(sc), slo[jj]),
                                           iv::mul32(iv::u8_to_i32(sc + NR), shi[jj])));
        Bm[jj] = iv::add32(Bm[jj], iv::add32(iv::mul32(iv::u8_to_i32(mn), x01),
                                             iv::mul32(iv::u8_to_i32(mn + NR), x23)));
      }
    }
    const simd::vf dx = simd::set1(x.d[b]);
    for (int jj = 0; jj < NJ; ++jj) {
      const simd::vf d = simd::from_f16(d16 + col(jj)), dmin = simd::from_f16(d16 + NR + col(jj));
      acc[jj] = simd::fma(simd::mul(dx, d), iv::to_f(A[jj]), acc[jj]);
      acc[jj] = simd::fma(simd::sub(simd::zero(), simd::mul(dx, dmin)), iv::to_f(Bm[jj]), acc[jj]);
    }
  }
}

// R rows x NJ column vectors starting at vector j0, over every super-block: acc[jj][r]. With one
// row and several vectors (decode) each super-block is read in address order (sb_step_row), so
// the panel streams front to back; with NJ = 1 (more rows: the accumulators need the registers)
// the panel is read once per vector, the repeats from L2. The per-lane sequence is the same for
// any R and NJ.
template <int NR, DType T, int R, int NJ>
void dot_tile(const uint8_t* panel, size_t n_sb, int j0, const ActRow (&x)[R],
              simd::vf (&acc)[NJ][R]) {
  for (int jj = 0; jj < NJ; ++jj)
    for (int r = 0; r < R; ++r) acc[jj][r] = simd::zero();
  if constexpr (R == 1 && NJ > 1) {  // decode: the whole panel, streamed in address order
    const size_t ahead = decode_prefetch().kquant_superblocks * sb_bytes<NR>(T);
    simd::vf a[NJ];
    for (int jj = 0; jj < NJ; ++jj) a[jj] = simd::zero();
    for (size_t b = 0; b < n_sb; ++b)
      sb_step_row<NR, T, NJ>(panel, b, size_t(j0) * simd::W, x[0], ahead, a);
    for (int jj = 0; jj < NJ; ++jj) acc[jj][0] = a[jj];
    return;
  }
  for (size_t b = 0; b < n_sb; ++b)
    for (int jj = 0; jj < NJ; ++jj)
      sb_step<NR, T, R>(panel, b, size_t(j0 + jj) * simd::W, x, acc[jj]);
}
#pragma GCC diagnostic pop

}  // namespace accel::kq
