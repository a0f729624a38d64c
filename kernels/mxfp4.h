// ggml's MXFP4 block format (OCP microscaling FP4, as GPT-OSS files ship their experts): 32
// elements = one E8M0 power-of-two scale and 32 E2M1 codes. Owns the block layout, the scale
// conversion and the row conversions, each following ggml-quants.c operation for operation so
// files from llama.cpp read bit-exactly and files we write load there. Knows nothing about
// matrices.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace accel {

constexpr size_t kQK_MXFP4 = 32;

// qs[j] holds element j in its low nibble and element j+16 in its high nibble (as q4_0).
struct BlockMXFP4 {
  uint8_t e;  // E8M0: a biased exponent, no sign or mantissa
  uint8_t qs[16];
};
static_assert(sizeof(BlockMXFP4) == 17);

// The E2M1 values doubled, so they are integers: code c means kMxfp4Values[c] / 2. Bit 3 is the
// sign (so codes 0 and 8 are both zero); ggml's kvalues_mxfp4.
inline constexpr int8_t kMxfp4Values[16] = {0, 1,  2,  3,  4,  6,  8,  12,
                                            0, -1, -2, -3, -4, -6, -8, -12};

// Half the E8M0 scale, 2^(e-128), as ggml's GGML_E8M0_TO_FP32_HALF builds it from bits: the
// subnormals 2^-128 and 2^-127 for e = 0 and 1, else exponent field e-1. e = 255 gives 2^127
// (ggml's conversion does not special-case the E8M0 NaN code either).
inline float e8m0_to_f32_half(uint8_t e) {
  const uint32_t bits = e < 2 ? 0x00200000u << e : uint32_t(e - 1) << 23;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

// n elements (a multiple of 32): element = float(kMxfp4Values[code]) * e8m0_to_f32_half(e).
void dequantize_row_mxfp4(const BlockMXFP4* x, float* y, size_t n);

// n floats (a multiple of 32) -> blocks, as ggml's quantize_row_mxfp4_ref: e = floor(log2(amax))
// - 2 + 127 (0 when amax is 0), then per element the code whose value is nearest (first on ties).
// Where ggml's float->uint8 conversion is undefined (amax below 2^-125 or at least 2^128, or not
// finite) e is clamped to [0, 254]; ggml has no defined result there to match.
void quantize_row_mxfp4(const float* x, BlockMXFP4* y, size_t n);

// Activations for the GEMM's MXFP4 and q8_0 integer dot products, quantized as ggml's x86
// quantize_row_q8_0 does them (llama.cpp multiplies both weight types by q8_0 activations, and
// matching its rounding is what makes the engine's logits agree with it): per 32 elements amax =
// max |x|, d = fp16(amax / 127) (returned as its float value), q = x * (127 / amax) rounded to
// nearest even, so |q| <= 127. amax = 0, or so small that 127 / amax overflows (d is then 0 too),
// gives d = 0 and zero codes; a non-finite element gives d = NaN and zero codes, so the outputs
// that use it are NaN. sums32[b] = the sum of block b's codes. n is a
// multiple of 32.
void quantize_activations_q8_0(const float* x, size_t n, int8_t* q, float* d, int32_t* sums32);

}  // namespace accel
