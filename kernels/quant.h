// Block formats of ggml's q8_0, q4_0 and q5_0, and row conversions between every DType and float
// (the k-quant block formats live in kquant.h). Quantizers follow ggml's reference algorithms
// exactly (so files we write load elsewhere); nothing here knows about matrices or models.
#pragma once
#include <cstddef>
#include <cstdint>

#include "kernels/dtype.h"

namespace accel {

// q8_0: 32 values = d * qs[i]; d is fp16.
struct BlockQ8_0 {
  uint16_t d;
  int8_t qs[32];
};
// q4_0: 32 values = d * (nibble - 8); qs[j] holds element j in its low nibble and element j+16 in
// its high nibble (ggml's split-halves order).
struct BlockQ4_0 {
  uint16_t d;
  uint8_t qs[16];
};
// q5_0: 32 values = d * (code - 16), code = nibble | fifth bit << 4; qs as q4_0's, qh bit j the
// fifth bit of element j (little-endian 32 bits).
struct BlockQ5_0 {
  uint16_t d;
  uint8_t qh[4];
  uint8_t qs[16];
};
static_assert(sizeof(BlockQ8_0) == 34 && sizeof(BlockQ4_0) == 18 && sizeof(BlockQ5_0) == 22);

// The q8_0 block holding exactly the values of a q5_0 block: the same fp16 scale, codes - 16 as
// int8. So a q5_0 weight computes as q8_0 with the products ggml's q5_0 x q8_0 dot gives (the same
// integer sums, the same scale product).
BlockQ8_0 q5_0_as_q8_0(const BlockQ5_0& b);

// Converts `n` elements of type `t` at `src` to float. n must be a multiple of the block size.
void dequantize_row(DType t, const void* src, float* dst, size_t n);
// Converts `n` floats to type `t` (f16/bf16 round to nearest even; q8_0/q4_0/q5_0/mxfp4 as ggml's
// reference quantize_row_*_ref; k-quants by kquant.h's simple quantizer). n must be a multiple of
// the block size.
void quantize_row(DType t, const float* src, void* dst, size_t n);

}  // namespace accel
