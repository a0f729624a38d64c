// MXFP4 row conversions (see mxfp4.h), written from ggml-quants.c's reference formulas.
#include "kernels/mxfp4.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "kernels/fp16.h"

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

void quantize_activations_q8_0(const float* x, size_t n, int8_t* q, float* d, int32_t* sums32) {
  for (size_t b = 0; b < n / kQK_MXFP4; ++b) {
    const float* xb = x + b * kQK_MXFP4;
    int8_t* qb = q + b * kQK_MXFP4;
    float amax = 0;
    bool finite = true;
    for (size_t i = 0; i < kQK_MXFP4; ++i) {
      finite &= std::isfinite(xb[i]);
      amax = std::max(amax, std::fabs(xb[i]));
    }
    int32_t sum = 0;
    // 127 / amax overflows for amax below ~3.7e-37 (subnormal blocks): ggml's codes are then
    // saturated garbage, here zeros (a float->int8 conversion of inf is undefined); either way the
    // block's d = fp16(amax / 127) is 0, so it adds nothing to any product.
    if (!finite || amax == 0 || !std::isfinite(127.f / amax)) {
      std::memset(qb, 0, kQK_MXFP4);
      d[b] = finite ? 0.f : NAN;
    } else {
      // ggml: d = amax / 127 stored as fp16; the codes use id = 127 / amax, not 1 / d.
      d[b] = fp16_to_f32(f32_to_fp16(amax / 127.f));
      const float id = 127.f / amax;
      for (size_t i = 0; i < kQK_MXFP4; ++i) {
        qb[i] = int8_t(std::nearbyint(xb[i] * id));  // |x * id| <= 127 (up to rounding of id)
        sum += qb[i];
      }
    }
    sums32[b] = sum;
  }
}

}  // namespace accel
