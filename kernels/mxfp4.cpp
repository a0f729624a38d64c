// MXFP4 row conversions (see mxfp4.h), written from ggml-quants.c's reference formulas.
#include "kernels/mxfp4.h"

#include <cmath>

namespace accel {

void dequantize_row_mxfp4(const BlockMXFP4* x, float* y, size_t n) {
  for (size_t b = 0; b < n / kQK_MXFP4; ++b) {
    const float d = e8m0_to_f32_half(x[b].e);
    float* o = y + b * kQK_MXFP4;
    for (int j = 0; j < 16; ++j) {
      o[j] = float(kMxfp4Values[x[b].qs[j] & 0x0F]) * d;
      o[j + 16] = float(kMxfp4Values[x[b].qs[j] >> 4]) * d;
    }
  }
}

namespace {

// ggml's best_index_mxfp4: the first code with the smallest |value*d - x| (float arithmetic).
uint8_t nearest_code(float x, float d) {
  int best = 0;
  float best_err = std::fabs(float(kMxfp4Values[0]) * d - x);
  for (int i = 1; i < 16; ++i) {
    const float err = std::fabs(float(kMxfp4Values[i]) * d - x);
    if (err < best_err) {
      best = i;
      best_err = err;
    }
  }
  return uint8_t(best);
}

uint8_t shared_exponent(float amax) {
  if (!(amax > 0.0f)) return 0;
  const float e = std::floor(std::log2(amax)) - 2 + 127;  // float log2f, as ggml
  if (!(e >= 0.0f)) return 0;
  return e > 254.0f ? 254 : uint8_t(e);
}

}  // namespace

void quantize_row_mxfp4(const float* x, BlockMXFP4* y, size_t n) {
  for (size_t b = 0; b < n / kQK_MXFP4; ++b) {
    const float* v = x + b * kQK_MXFP4;
    float amax = 0.0f;
    for (size_t j = 0; j < kQK_MXFP4; ++j)
      if (amax < std::fabs(v[j])) amax = std::fabs(v[j]);
    y[b].e = shared_exponent(amax);
    const float d = e8m0_to_f32_half(y[b].e);
    for (int j = 0; j < 16; ++j)
      y[b].qs[j] = uint8_t(nearest_code(v[j], d) | nearest_code(v[j + 16], d) << 4);
  }
}

}  // namespace accel
