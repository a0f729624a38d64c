// KIVI's group quantizer and the key-block / value-record formats (kv_quant_kivi.h). Scalar on
// purpose: a block is quantized once per 32 tokens, and these definitions are what the tests
// transcribe independently.
#include "kernels/kv_quant_kivi.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "kernels/check.h"
#include "kernels/fp16.h"

namespace accel {

namespace {

constexpr float kHalfMax = 65504.f;

}  // namespace

void kivi_quantize_group(const float* x, size_t stride, int bits, uint8_t* codes, uint16_t* scale,
                         uint16_t* mn) {
  ACCEL_CHECK(bits == 2 || bits == 4, "KIVI bits %d (2 or 4)", bits);
  float lo = INFINITY, hi = -INFINITY;
  for (int i = 0; i < kKiviGroup; ++i) {
    const float v = x[size_t(i) * stride];
    if (v < lo) lo = v;  // NaN compares false: ignored here, code 0 below
    if (v > hi) hi = v;
  }
  if (!(lo <= hi)) lo = hi = 0.f;  // every value NaN
  const float qmax = float((1 << bits) - 1);
  const uint16_t mh = f32_to_fp16(std::clamp(lo, -kHalfMax, kHalfMax));
  // A group of one infinity (inf - inf = NaN) gets scale 0: every value decodes to the clamped min.
  const float range = hi - lo;
  const uint16_t sh = f32_to_fp16(range == range ? std::min(range / qmax, kHalfMax) : 0.f);
  const float m = fp16_to_f32(mh), s = fp16_to_f32(sh);
  std::memset(codes, 0, kivi_codes_bytes(bits));
  for (int i = 0; i < kKiviGroup; ++i) {
    float q = s > 0 ? std::clamp((x[size_t(i) * stride] - m) / s, 0.f, qmax) : 0.f;
    if (!(q >= 0)) q = 0.f;  // NaN
    // std::nearbyint rounds half to even in the default rounding mode (torch.round's rule).
    const int c = int(std::nearbyint(q));
    codes[bits * i / 8] |= uint8_t(c << (bits * i % 8));
  }
  *scale = sh;
  *mn = mh;
}

size_t kivi_key_block_bytes(int bits, int head_dim) {
  return size_t(head_dim) * (kivi_codes_bytes(bits) + 4);
}

void kivi_quantize_key_block(const float* k, size_t ld, int head_dim, int bits, uint8_t* block) {
  const size_t cb = kivi_codes_bytes(bits), D = size_t(head_dim);
  uint8_t* scales = block + D * cb;
  uint8_t* mins = scales + 2 * D;
  for (size_t e = 0; e < D; ++e) {
    uint16_t s, m;
    kivi_quantize_group(k + e, ld, bits, block + e * cb, &s, &m);
    put_fp16_bits(scales + 2 * e, s);
    put_fp16_bits(mins + 2 * e, m);
  }
}

void kivi_dequantize_key_block(const uint8_t* block, int head_dim, int bits, size_t n, float* k,
                               size_t ld) {
  ACCEL_CHECK(n <= size_t(kKiviGroup), "%zu tokens in a key block of %d", n, kKiviGroup);
  const size_t cb = kivi_codes_bytes(bits), D = size_t(head_dim);
  const uint8_t* scales = block + D * cb;
  const uint8_t* mins = scales + 2 * D;
  for (size_t e = 0; e < D; ++e) {
    const float s = fp16_to_f32(fp16_bits_at(scales + 2 * e)),
                m = fp16_to_f32(fp16_bits_at(mins + 2 * e));
    for (size_t t = 0; t < n; ++t)
      k[t * ld + e] = kivi_dequant(kivi_code(block + e * cb, bits, int(t)), s, m);
  }
}

size_t kivi_value_record_bytes(int bits, int head_dim) {
  ACCEL_CHECK(head_dim > 0 && head_dim % kKiviGroup == 0,
              "head_dim %d is not a positive multiple of %d", head_dim, kKiviGroup);
  return size_t(head_dim / kKiviGroup) * (kivi_codes_bytes(bits) + 4);
}

void kivi_quantize_value(const float* v, int head_dim, int bits, uint8_t* record) {
  const size_t groups = size_t(head_dim / kKiviGroup), cb = kivi_codes_bytes(bits);
  uint8_t* scales = record + groups * cb;
  uint8_t* mins = scales + 2 * groups;
  for (size_t g = 0; g < groups; ++g) {
    uint16_t s, m;
    kivi_quantize_group(v + g * kKiviGroup, 1, bits, record + g * cb, &s, &m);
    put_fp16_bits(scales + 2 * g, s);
    put_fp16_bits(mins + 2 * g, m);
  }
}

void kivi_dequantize_value(const uint8_t* record, int head_dim, int bits, float* v) {
  const size_t groups = size_t(head_dim / kKiviGroup), cb = kivi_codes_bytes(bits);
  const uint8_t* scales = record + groups * cb;
  const uint8_t* mins = scales + 2 * groups;
  for (size_t g = 0; g < groups; ++g) {
    const float s = fp16_to_f32(fp16_bits_at(scales + 2 * g)),
                m = fp16_to_f32(fp16_bits_at(mins + 2 * g));
    for (int i = 0; i < kKiviGroup; ++i)
      v[g * kKiviGroup + size_t(i)] = kivi_dequant(kivi_code(record + g * cb, bits, i), s, m);
  }
}

}  // namespace accel
