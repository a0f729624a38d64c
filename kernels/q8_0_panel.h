// The GEMM panel layout of q8_0 weights and their integer-dot tile kernel, for gemm.cpp only:
// packs one ggml block into column c of an NR-column panel, and computes R rows x NJ vectors of
// W columns over the whole of K from q8_0 activations (quantize_activations_q8_0). Knows nothing
// of row blocking, threads or the f32 micro-kernel.
//
// Why integer dot products on q8_0 activations (as ggml's vec_dot_q8_0_q8_0): converting each
// int8 weight to float took four vector operations per W weights, which kept decode below
// llama.cpp's; s8 x s8 dot products take about one per 4 x W multiply-adds. llama.cpp multiplies
// q8_0 weights by q8_0 activations, so the same codes give the same integer sums and the engine's
// logits agree with it to float rounding. Every output uses this path whatever M, so a token's
// result is the same in a prefill chunk and a decode step (ARCHITECTURE.md invariant 1).
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "kernels/kquant_panel.h"
#include "kernels/mxfp4_panel.h"
#include "kernels/quant.h"
#include "kernels/simd.h"

namespace accel::q8 {

// Per 32-block of K rows, a panel of NR columns holds uint16 d[NR] (fp16), then the block's 32
// codes per column, 4-row-grouped like the k-quants' (kq::grouped): a 32-bit lane holds 4
// consecutive K rows of one column. 34 bytes per 32 elements per column, as ggml's blocks.
template <int NR>
constexpr size_t block_bytes() {
  return size_t(NR) * 34;
}

template <int NR>
inline void pack_block(const BlockQ8_0& b, uint8_t* region, size_t c) {
  std::memcpy(region + 2 * c, &b.d, 2);
  for (size_t j = 0; j < 32; ++j) region[2 * NR + kq::grouped<NR>(j, c)] = uint8_t(b.qs[j]);
}

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
// The s8 x s8 products through the u8 x s8 dot product (kq::iv::dot4). With VNNI, whose 32-bit
// accumulation cannot saturate, the weight is offset by 128 into u8 and 128 * sum(x) is taken off
// per block (exact). Without it, vpmaddubsw adds pairs in saturating int16, so the weight's sign
// moves onto x (|w| <= 128 as u8, |x| <= 127: a pair is at most 2 * 128 * 127 < 2^15, exact), as
// ggml's mul_sum_i8_pairs does. Both give the same exact integer per lane.
#if defined(__AVX512F__) ? defined(__AVX512VNNI__) : defined(__AVXVNNI__)
constexpr int kWeightOffset = 128;
inline kq::iv::vi weight_operand(kq::iv::vi w) {
  return kq::iv::xor_(w, kq::iv::bytes(0x80));
}
inline kq::iv::vi x_operand(kq::iv::vi x, kq::iv::vi /*w*/) {
  return x;
}
#else
constexpr int kWeightOffset = 0;
#if defined(__AVX512F__)
inline kq::iv::vi weight_operand(kq::iv::vi w) {
  return _mm512_abs_epi8(w);
}
inline kq::iv::vi x_operand(kq::iv::vi x, kq::iv::vi w) {
  return _mm512_mask_sub_epi8(x, _mm512_movepi8_mask(w), _mm512_setzero_si512(), x);
}
#else
inline kq::iv::vi weight_operand(kq::iv::vi w) {
  return _mm256_abs_epi8(w);  // |-128| wraps to 0x80: 128 as u8
}
inline kq::iv::vi x_operand(kq::iv::vi x, kq::iv::vi w) {
  return _mm256_sign_epi8(x, w);
}
#endif
#endif

// The per-output arithmetic, in every lane (column n) and row r, per block b in K order:
//   A = sum_j w_j * xq_j                                       (exact int32: |A| <= 32*128*127)
//   acc = fma(dx_b * dw, float(A), acc)                        (dx_b * dw: one rounding)
// acc starts at 0; the bias (if any) is added once by the caller. ggml's vec_dot_q8_0_q8_0 forms
// the same scale and integer sum per block (its float additions are ordered differently). The
// same sequence for every R and NJ, so a row's results do not depend on the rows beside it.
template <int NR, int R, int NJ>
void dot_tile(const uint8_t* panel, size_t n_blocks, int j0, const mx::ActRow (&x)[R],
              simd::vf (&acc)[NJ][R]) {
  namespace iv = kq::iv;
  constexpr size_t W = simd::W;
  for (int jj = 0; jj < NJ; ++jj)
    for (int r = 0; r < R; ++r) acc[jj][r] = simd::zero();
  const size_t col0 = size_t(j0) * W;
  const size_t ahead = decode_prefetch().blocks * block_bytes<NR>();
  for (size_t b = 0; b < n_blocks; ++b) {
    const uint8_t* blk = panel + b * block_bytes<NR>();
    // Decode streams the panel once, decode_prefetch().blocks ahead. bench_kquant q8_0 4096 x 4096,
    // M = 1, Zen 3 (no AVX-512), 5 interleaved runs (2026-11-28), medians 1 / 2 threads: 2.21
    // / 1.18 ms at 0 ahead, 2.34 / 1.31 (2), 2.17 / 1.21 (4), 2.11 / 1.18 (8), 2.14 / 1.21 (16):
    // within the noise of each other; 8 as for MXFP4 (decode_prefetch.cpp's table).
    if constexpr (R == 1 && NJ > 1) kq::prefetch_block_ahead<block_bytes<NR>()>(blk, ahead);
    const uint8_t* qs = blk + 2 * NR;
    iv::vi s[NJ][R];
    for (int jj = 0; jj < NJ; ++jj)
      for (int r = 0; r < R; ++r) s[jj][r] = iv::zero();
    for (int t = 0; t < 8; ++t) {  // K rows 4t .. 4t+3
      iv::vi xv[R];
      for (int r = 0; r < R; ++r) xv[r] = iv::bcast4(x[r].q + b * 32 + 4 * t);
      const uint8_t* row = qs + kq::grouped<NR>(4 * size_t(t), col0);
      for (int jj = 0; jj < NJ; ++jj) {
        const iv::vi w = iv::load(row + 4 * W * jj);
        const iv::vi wu = weight_operand(w);
        for (int r = 0; r < R; ++r) s[jj][r] = iv::dot4(s[jj][r], wu, x_operand(xv[r], w));
      }
    }
    for (int jj = 0; jj < NJ; ++jj) {
      const simd::vf dw =
          simd::from_f16(reinterpret_cast<const uint16_t*>(blk) + col0 + W * size_t(jj));
      for (int r = 0; r < R; ++r) {
        iv::vi a = s[jj][r];
        if constexpr (kWeightOffset != 0)
          a = iv::add32(a, iv::set32(-kWeightOffset * x[r].sums32[b]));
        acc[jj][r] = simd::fma(simd::mul(simd::set1(x[r].d[b]), dw), iv::to_f(a), acc[jj][r]);
      }
    }
  }
}
#pragma GCC diagnostic pop

}  // namespace accel::q8
