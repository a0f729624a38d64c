// Scalar conversions between float and IEEE half / bfloat16, bit-exact and branch-light.
// Must not depend on the host having F16C: the reference paths and the GGUF writer use these.
#pragma once
#include <cstdint>
#include <cstring>

namespace accel {

inline float fp16_to_f32(uint16_t h) {
  const uint32_t sign = uint32_t(h & 0x8000) << 16;
  const uint32_t exp = (h >> 10) & 0x1f;
  const uint32_t man = h & 0x3ff;
  uint32_t bits;
  if (exp == 0) {
    if (man == 0) {
      bits = sign;
    } else {  // subnormal: renormalise
      int e = -1;
      uint32_t m = man;
      do {
        ++e;
        m <<= 1;
      } while ((m & 0x400) == 0);
      bits = sign | uint32_t(127 - 15 - e) << 23 | (m & 0x3ff) << 13;
    }
  } else if (exp == 31) {
    bits = sign | 0x7f800000u | man << 13;
  } else {
    bits = sign | (exp + 127 - 15) << 23 | man << 13;
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

// Round-to-nearest-even, overflow to infinity, NaN preserved (quiet).
inline uint16_t f32_to_fp16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  const uint32_t sign = (x >> 16) & 0x8000;
  const uint32_t absx = x & 0x7fffffff;
  if (absx >= 0x7f800000u) return uint16_t(sign | 0x7c00 | (absx > 0x7f800000u ? 0x200 : 0));
  if (absx >= 0x477ff000u) return uint16_t(sign | 0x7c00);  // rounds to >= 65520 -> inf
  if (absx < 0x38800000u) {                                 // below the smallest normal half
    if (absx < 0x33000000u) return uint16_t(sign);          // rounds to zero
    const uint32_t e = absx >> 23;
    const uint32_t m = (absx & 0x7fffff) | 0x800000;
    const uint32_t shift = 126 - e;  // 14 + (113 - e)
    uint32_t h = m >> shift;
    const uint32_t rem = m & ((1u << shift) - 1);
    const uint32_t half = 1u << (shift - 1);
    if (rem > half || (rem == half && (h & 1))) ++h;
    return uint16_t(sign | h);
  }
  uint32_t h = ((absx >> 23) - 112) << 10 | (absx >> 13 & 0x3ff);
  const uint32_t rem = absx & 0x1fff;
  if (rem > 0x1000 || (rem == 0x1000 && (h & 1))) ++h;
  return uint16_t(sign | h);
}

inline float bf16_to_f32(uint16_t b) {
  const uint32_t bits = uint32_t(b) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

inline uint16_t f32_to_bf16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  if ((x & 0x7fffffff) > 0x7f800000u) return uint16_t((x >> 16) | 0x40);  // quiet NaN
  x += 0x7fff + ((x >> 16) & 1);
  return uint16_t(x >> 16);
}

// The 2 bytes of a stored half at p (any alignment), little-endian as the formats store them.
inline uint16_t fp16_bits_at(const uint8_t* p) {
  uint16_t h;
  std::memcpy(&h, p, 2);
  return h;
}
inline void put_fp16_bits(uint8_t* p, uint16_t h) {
  std::memcpy(p, &h, 2);
}

}  // namespace accel
