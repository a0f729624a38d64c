// The GEMM panel layout of MXFP4 weights and their integer-dot tile kernel, for gemm.cpp only:
// packs one ggml block into column c of an NR-column panel, and computes R rows x NJ vectors of
// W columns over the whole of K from q8_0 activations (quantize_activations_q8_0). Knows nothing
// of row blocking, threads or the f32 micro-kernel.
//
// Why integer dot products on q8_0 activations: llama.cpp multiplies MXFP4 by q8_0 activations
// (ggml_vec_dot_mxfp4_q8_0), so the same codes give the same sums and the engine's logits agree
// with it to float rounding, where exact float activations differ by the activations' rounding
// (~0.5% per GPT-OSS expert output); and u8 x s8 dot products take one instruction per 4 x W
// multiply-adds where float conversion took several per weight. Every output uses this path
// whatever M, so a token's result is the same in a prefill chunk and a decode step (invariant 1).
#pragma once
#include <cstddef>
#include <cstdint>

#include "kernels/kquant_panel.h"
#include "kernels/mxfp4.h"
#include "kernels/simd.h"

namespace accel::mx {

// Per 32-block of K rows, a panel of NR columns holds uint8 e[NR] (E8M0), then the block's 16
// nibble bytes per column, 4-row-grouped like the k-quants' codes (kq::grouped): byte row j holds
// element j in its low nibble and j + 16 in its high one (ggml's order). 17 bytes per 32 elements
// per column, as ggml's blocks.
template <int NR>
constexpr size_t block_bytes() {
  return size_t(NR) * 17;
}

template <int NR>
inline void pack_block(const BlockMXFP4& b, uint8_t* region, size_t c) {
  region[c] = b.e;
  for (size_t j = 0; j < 16; ++j) region[NR + kq::grouped<NR>(j, c)] = b.qs[j];
}

// One row's q8_0 activations: codes, per-32 scales (fp16 values as floats), per-32 code sums.
struct ActRow {
  const int8_t* q;
  const float* d;
  const int32_t* sums32;
};

// The codes' doubled E2M1 values plus 12 (0..24), so they are the unsigned operand of the u8 x s8
// dot product; the 12 * sum(codes) this adds is taken off per block (exact integers).
constexpr int kCodeOffset = 12;

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
inline kq::iv::vi offset_values(kq::iv::vi nibbles) {
#if defined(__AVX512F__)
  const __m512i table = _mm512_broadcast_i32x4(
      _mm_setr_epi8(12, 13, 14, 15, 16, 18, 20, 24, 12, 11, 10, 9, 8, 6, 4, 0));
  return _mm512_shuffle_epi8(table, nibbles);
#else
  const __m256i table = _mm256_broadcastsi128_si256(
      _mm_setr_epi8(12, 13, 14, 15, 16, 18, 20, 24, 12, 11, 10, 9, 8, 6, 4, 0));
  return _mm256_shuffle_epi8(table, nibbles);
#endif
}

// The per-output arithmetic, in every lane (column n) and row r, per block b in K order:
//   A = sum_j (value_j + 12) * xq_j - 12 * sums32[b]          (exact int32: |A| <= 32*12*127)
//   acc = fma(dx_b * e_half, float(A), acc)                     (dx_b * e_half: one rounding)
// acc starts at 0; the bias (if any) is added once by the caller. ggml's vec_dot_mxfp4_q8_0 forms
// the same scale and integer sum per block (its float additions are ordered differently). The
// same sequence for every R and NJ, so a row's results do not depend on the rows beside it.
template <int NR, int R, int NJ>
void dot_tile(const uint8_t* panel, size_t n_blocks, int j0, const ActRow (&x)[R],
              simd::vf (&acc)[NJ][R]) {
  namespace iv = kq::iv;
  constexpr size_t W = simd::W;
  for (int jj = 0; jj < NJ; ++jj)
    for (int r = 0; r < R; ++r) acc[jj][r] = simd::zero();
  const size_t col0 = size_t(j0) * W;
  const size_t ahead = decode_prefetch().blocks * block_bytes<NR>();
  for (size_t b = 0; b < n_blocks; ++b) {
    const uint8_t* blk = panel + b * block_bytes<NR>();
    // Decode streams the panel once, decode_prefetch().blocks ahead. bench_kquant mxfp4 4096 x
    // 4096, M = 1, one thread, Zen 3, interleaved runs (2026-11-27): medians 1.42 ms without, 1.26
    // / 1.05 / 1.09 ms with 4 / 8 / 16 blocks ahead.
    if constexpr (R == 1 && NJ > 1) kq::prefetch_block_ahead<block_bytes<NR>()>(blk, ahead);
    const uint8_t* qs = blk + NR;
    iv::vi s[NJ][R];
    for (int jj = 0; jj < NJ; ++jj)
      for (int r = 0; r < R; ++r) s[jj][r] = iv::zero();
    for (int t = 0; t < 4; ++t) {  // byte rows 4t .. 4t+3: elements 4t.. (low), 16+4t.. (high)
      iv::vi xl[R], xh[R];
      for (int r = 0; r < R; ++r) {
        xl[r] = iv::bcast4(x[r].q + b * 32 + 4 * t);
        xh[r] = iv::bcast4(x[r].q + b * 32 + 16 + 4 * t);
      }
      const uint8_t* row = qs + kq::grouped<NR>(4 * size_t(t), col0);
      for (int jj = 0; jj < NJ; ++jj) {
        const iv::vi w = iv::load(row + 4 * W * jj);
        const iv::vi lo = offset_values(iv::and_(w, iv::bytes(0x0F)));
        const iv::vi hi = offset_values(iv::and_(iv::srl16(w, 4), iv::bytes(0x0F)));
        for (int r = 0; r < R; ++r) {
          s[jj][r] = iv::dot4(s[jj][r], lo, xl[r]);
          s[jj][r] = iv::dot4(s[jj][r], hi, xh[r]);
        }
      }
    }
    for (int jj = 0; jj < NJ; ++jj) {
      const simd::vf e = simd::from_e8m0_half(blk + col0 + W * size_t(jj));
      for (int r = 0; r < R; ++r) {
        const iv::vi a = iv::add32(s[jj][r], iv::set32(-kCodeOffset * x[r].sums32[b]));
        acc[jj][r] = simd::fma(simd::mul(simd::set1(x[r].d[b]), e), iv::to_f(a), acc[jj][r]);
      }
    }
  }
}
#pragma GCC diagnostic pop

}  // namespace accel::mx
