// Block formats of ggml's k-quants q4_K, q5_K and q6_K (super-blocks of 256 elements), their exact
// dequantization, and a straightforward quantizer. Dequantization follows ggml's reference
// formulas operation for operation (so files from llama.cpp read bit-exactly); the quantizer is
// our own simple one, not ggml's importance-weighted search. Knows nothing about matrices.
#pragma once
#include <cstddef>
#include <cstdint>

namespace accel {

constexpr size_t kQK_K = 256;  // elements per k-quant super-block

// q4_K: 8 sub-blocks of 32. Sub-block s has a 6-bit scale sc_s and 6-bit min m_s (packed into
// `scales`, see kquant_scale_min); element i of sub-block s is d*sc_s * q - dmin*m_s with q the
// 4-bit code. qs[32*g + l] holds sub-block 2g's element l (low nibble) and sub-block 2g+1's
// element l (high nibble).
struct BlockQ4_K {
  uint16_t d, dmin;  // fp16 super-block scales of the sub-block scales and mins
  uint8_t scales[12];
  uint8_t qs[128];
};
// q5_K: as q4_K with a fifth bit: bit s of qh[l] is the high bit of sub-block s's element l.
struct BlockQ5_K {
  uint16_t d, dmin;
  uint8_t scales[12];
  uint8_t qh[32];
  uint8_t qs[128];
};
// q6_K: 16 groups of 16 with int8 scales; element e is d*scales[e/16] * (q - 32), q a 6-bit code
// split into a low nibble (ql) and 2 high bits (qh); see dequantize_row_q6_K for the bit order.
struct BlockQ6_K {
  uint8_t ql[128];
  uint8_t qh[64];
  int8_t scales[16];
  uint16_t d;  // fp16, last in the block
};
static_assert(sizeof(BlockQ4_K) == 144 && sizeof(BlockQ5_K) == 176 && sizeof(BlockQ6_K) == 210);

// ggml's get_scale_min_k4: the 6-bit scale and min of sub-block j (0..7) from the 12 packed bytes.
inline void kquant_scale_min(int j, const uint8_t* q, uint8_t& sc, uint8_t& m) {
  if (j < 4) {
    sc = q[j] & 63;
    m = q[j + 4] & 63;
  } else {
    sc = uint8_t((q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4));
    m = uint8_t((q[j + 4] >> 4) | ((q[j - 0] >> 6) << 4));
  }
}

// n elements (a multiple of 256) of blocks at x -> floats at y.
void dequantize_row_q4_K(const BlockQ4_K* x, float* y, size_t n);
void dequantize_row_q5_K(const BlockQ5_K* x, float* y, size_t n);
void dequantize_row_q6_K(const BlockQ6_K* x, float* y, size_t n);

// n floats (a multiple of 256) -> blocks. Min/max (q4_K, q5_K) and absmax (q6_K) per sub-block,
// sub-block parameters rounded to the 6-bit / int8 grid of an fp16 super-block scale, codes
// rounded to nearest against the rounded parameters. Deterministic; finite input expected.
void quantize_row_q4_K(const float* x, BlockQ4_K* y, size_t n);
void quantize_row_q5_K(const float* x, BlockQ5_K* y, size_t n);
void quantize_row_q6_K(const float* x, BlockQ6_K* y, size_t n);

// Activations for the k-quant integer dot products (the GEMM's k-quant path, as ggml's q8_K):
// per 256 elements one float scale d and int8 codes, with x ~ d * q. amax = max |x| over the
// block; iscale = 127 / amax (float); q = x * iscale rounded to nearest even, clamped to
// [-127, 127]; d = 1 / iscale (float). amax = 0 gives d = 0 and zero codes; a non-finite amax
// (Inf or NaN in the block) gives d = NaN and zero codes, so the outputs that use it are NaN.
// sums16[g] = the sum of the codes of elements 16g .. 16g+15. n is a multiple of 256.
void quantize_activations_q8_K(const float* x, size_t n, int8_t* q, float* d, int32_t* sums16);
// The same definition as plain scalar code: what builds without AVX-512 run, and what the tests
// check the vector version against bit for bit.
void quantize_activations_q8_K_reference(const float* x, size_t n, int8_t* q, float* d,
                                         int32_t* sums16);

}  // namespace accel
