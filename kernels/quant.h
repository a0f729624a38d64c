// Block formats of ggml's q8_0 and q4_0, and row conversions between every DType and float (the
// k-quant block formats live in kquant.h).
// Quantizers follow ggml's reference algorithms exactly (so files we write load elsewhere);
// nothing here knows about matrices or models.
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
static_assert(sizeof(BlockQ8_0) == 34 && sizeof(BlockQ4_0) == 18);

// Converts `n` elements of type `t` at `src` to float. n must be a multiple of the block size.
void dequantize_row(DType t, const void* src, float* dst, size_t n);
// Converts `n` floats to type `t` (f16/bf16 round to nearest even; q8_0/q4_0/mxfp4 as ggml's
// reference quantize_row_*_ref; k-quants by kquant.h's simple quantizer). n must be a multiple of
// the block size.
void quantize_row(DType t, const float* src, void* dst, size_t n);

}  // namespace accel
