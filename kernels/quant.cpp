// Row conversions for every DType (see quant.h). Quantizers follow ggml's reference code.
#include "kernels/quant.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "kernels/fp16.h"
#include "kernels/kquant.h"
#include "kernels/mxfp4.h"

namespace accel {

BlockQ8_0 q5_0_as_q8_0(const BlockQ5_0& b) {
  uint32_t qh;
  std::memcpy(&qh, b.qh, 4);
  BlockQ8_0 o;
  o.d = b.d;
  for (int j = 0; j < 16; ++j) {
    o.qs[j] = int8_t(((b.qs[j] & 0x0f) | ((qh >> j) & 1) << 4) - 16);
    o.qs[j + 16] = int8_t(((b.qs[j] >> 4) | ((qh >> (j + 16)) & 1) << 4) - 16);
  }
  return o;
}

void dequantize_row(DType t, const void* src, float* dst, size_t n) {
  switch (t) {
    case DType::F32:
      std::memcpy(dst, src, n * 4);
      return;
    case DType::F16: {
      const uint16_t* s = static_cast<const uint16_t*>(src);
      for (size_t i = 0; i < n; ++i) dst[i] = fp16_to_f32(s[i]);
      return;
    }
    case DType::BF16: {
      const uint16_t* s = static_cast<const uint16_t*>(src);
      for (size_t i = 0; i < n; ++i) dst[i] = bf16_to_f32(s[i]);
      return;
    }
    case DType::Q8_0: {
      const BlockQ8_0* b = static_cast<const BlockQ8_0*>(src);
      for (size_t j = 0; j < n / 32; ++j) {
        const float d = fp16_to_f32(b[j].d);
        for (int i = 0; i < 32; ++i) dst[j * 32 + i] = float(b[j].qs[i]) * d;
      }
      return;
    }
    case DType::Q4_0: {
      const BlockQ4_0* b = static_cast<const BlockQ4_0*>(src);
      for (size_t j = 0; j < n / 32; ++j) {
        const float d = fp16_to_f32(b[j].d);
        for (int i = 0; i < 16; ++i) {
          dst[j * 32 + i] = float(int(b[j].qs[i] & 0x0f) - 8) * d;
          dst[j * 32 + i + 16] = float(int(b[j].qs[i] >> 4) - 8) * d;
        }
      }
      return;
    }
    case DType::Q5_0: {
      const BlockQ5_0* b = static_cast<const BlockQ5_0*>(src);
      for (size_t j = 0; j < n / 32; ++j) {
        const BlockQ8_0 q = q5_0_as_q8_0(b[j]);
        dequantize_row(DType::Q8_0, &q, dst + j * 32, 32);
      }
      return;
    }
    case DType::Q4_K:
      dequantize_row_q4_K(static_cast<const BlockQ4_K*>(src), dst, n);
      return;
    case DType::Q5_K:
      dequantize_row_q5_K(static_cast<const BlockQ5_K*>(src), dst, n);
      return;
    case DType::Q6_K:
      dequantize_row_q6_K(static_cast<const BlockQ6_K*>(src), dst, n);
      return;
    case DType::MXFP4:
      dequantize_row_mxfp4(static_cast<const BlockMXFP4*>(src), dst, n);
      return;
  }
}

namespace {

// The value of largest magnitude among 32 (the first of equal magnitudes), sign kept: ggml's
// q4_0 and q5_0 reference quantizers scale by it so that it maps to the lowest code.
float signed_absmax32(const float* x) {
  float amax = 0, max = 0;
  for (int i = 0; i < 32; ++i)
    if (std::fabs(x[i]) > amax) {
      amax = std::fabs(x[i]);
      max = x[i];
    }
  return max;
}

}  // namespace

void quantize_row(DType t, const float* src, void* dst, size_t n) {
  switch (t) {
    case DType::F32:
      std::memcpy(dst, src, n * 4);
      return;
    case DType::F16: {
      uint16_t* d = static_cast<uint16_t*>(dst);
      for (size_t i = 0; i < n; ++i) d[i] = f32_to_fp16(src[i]);
      return;
    }
    case DType::BF16: {
      uint16_t* d = static_cast<uint16_t*>(dst);
      for (size_t i = 0; i < n; ++i) d[i] = f32_to_bf16(src[i]);
      return;
    }
    case DType::Q8_0: {  // ggml quantize_row_q8_0_ref
      BlockQ8_0* b = static_cast<BlockQ8_0*>(dst);
      for (size_t j = 0; j < n / 32; ++j) {
        float amax = 0;
        for (int i = 0; i < 32; ++i) amax = std::fmax(amax, std::fabs(src[j * 32 + i]));
        const float d = amax / 127.f;
        const float id = d != 0 ? 1.f / d : 0.f;
        b[j].d = f32_to_fp16(d);
        for (int i = 0; i < 32; ++i) b[j].qs[i] = int8_t(std::round(src[j * 32 + i] * id));
      }
      return;
    }
    case DType::Q4_0: {  // ggml quantize_row_q4_0_ref
      BlockQ4_0* b = static_cast<BlockQ4_0*>(dst);
      for (size_t j = 0; j < n / 32; ++j) {
        const float d = signed_absmax32(src + j * 32) / -8.f;
        const float id = d != 0 ? 1.f / d : 0.f;
        b[j].d = f32_to_fp16(d);
        for (int i = 0; i < 16; ++i) {
          const float x0 = src[j * 32 + i] * id, x1 = src[j * 32 + 16 + i] * id;
          const uint8_t q0 = uint8_t(std::min(15, int(int8_t(x0 + 8.5f))));
          const uint8_t q1 = uint8_t(std::min(15, int(int8_t(x1 + 8.5f))));
          b[j].qs[i] = uint8_t(q0 | (q1 << 4));
        }
      }
      return;
    }
    case DType::Q5_0: {  // ggml quantize_row_q5_0_ref
      BlockQ5_0* b = static_cast<BlockQ5_0*>(dst);
      for (size_t j = 0; j < n / 32; ++j) {
        const float d = signed_absmax32(src + j * 32) / -16.f;
        const float id = d != 0 ? 1.f / d : 0.f;
        b[j].d = f32_to_fp16(d);
        uint32_t qh = 0;
        for (int i = 0; i < 16; ++i) {
          const float x0 = src[j * 32 + i] * id, x1 = src[j * 32 + 16 + i] * id;
          const uint8_t q0 = uint8_t(std::min(31, int(int8_t(x0 + 16.5f))));
          const uint8_t q1 = uint8_t(std::min(31, int(int8_t(x1 + 16.5f))));
          b[j].qs[i] = uint8_t((q0 & 0x0f) | ((q1 & 0x0f) << 4));
          qh |= uint32_t((q0 & 0x10) >> 4) << i;
          qh |= uint32_t((q1 & 0x10) >> 4) << (i + 16);
        }
        std::memcpy(b[j].qh, &qh, 4);
      }
      return;
    }
    case DType::Q4_K:
      quantize_row_q4_K(src, static_cast<BlockQ4_K*>(dst), n);
      return;
    case DType::Q5_K:
      quantize_row_q5_K(src, static_cast<BlockQ5_K*>(dst), n);
      return;
    case DType::Q6_K:
      quantize_row_q6_K(src, static_cast<BlockQ6_K*>(dst), n);
      return;
    case DType::MXFP4:
      quantize_row_mxfp4(src, static_cast<BlockMXFP4*>(dst), n);
      return;
  }
}

}  // namespace accel
