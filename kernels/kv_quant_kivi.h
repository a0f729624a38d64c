// KIVI's KV-cache quantization (methods.md §4.4, jy-yuan/KIVI quant/new_pack.py): keys per
// channel over a group of 32 consecutive tokens, values per token over groups of 32 channels, both
// asymmetric b-bit codes in bias form x̂ = q * scale + min with fp16 scale and min. Owns the bits
// of the key-block and value-record formats; knows nothing about caches or attention.
#pragma once
#include <cstddef>
#include <cstdint>

namespace accel {

constexpr int kKiviGroup = 32;  // tokens per key group, channels per value group

// Codes of one group: 32 codes of `bits` bits (2 or 4), code i at bits [bits * i, bits * (i + 1))
// of the group's little-endian bytes, low bits first (KIVI's pack order).
constexpr size_t kivi_codes_bytes(int bits) {
  return size_t(kKiviGroup * bits / 8);
}

// One group of 32 values x[i * stride]: min and max over the group, then
//   scale = fp16((max - min) / (2^bits - 1)), mn = fp16(min)   (min clamped to ±65504 first,
//   scale saturated at 65504), q_i = round_half_even(clamp((x_i - mn) / scale, 0, 2^bits - 1))
// with scale and mn at their stored fp16 values; a group whose scale rounds to 0 (constant, or a
// range below fp16's resolution) stores q = 0, so it decodes to mn. NaN inputs get code 0.
void kivi_quantize_group(const float* x, size_t stride, int bits, uint8_t* codes, uint16_t* scale,
                         uint16_t* mn);

// x̂ = q * scale + mn in f32, each operation rounded (the build disables FMA contraction).
inline float kivi_dequant(int q, float scale, float mn) {
  return float(q) * scale + mn;
}

inline int kivi_code(const uint8_t* codes, int bits, int i) {
  const int bit = bits * i;
  return (codes[bit / 8] >> (bit % 8)) & ((1 << bits) - 1);
}

// Key block of one kv head: 32 tokens x D channels. Layout: codes [D][kivi_codes_bytes(bits)]
// (channel e's group over the 32 tokens), then fp16 scales [D], then fp16 mins [D].
size_t kivi_key_block_bytes(int bits, int head_dim);
// k: token t's head at k + t * ld (t < 32).
void kivi_quantize_key_block(const float* k, size_t ld, int head_dim, int bits, uint8_t* block);
// Tokens [0, n) of a block back to rows k + t * ld.
void kivi_dequantize_key_block(const uint8_t* block, int head_dim, int bits, size_t n, float* k,
                               size_t ld);

// Value record of one token and kv head: groups of 32 channels. Layout: codes
// [D / 32][kivi_codes_bytes(bits)], then fp16 scales [D / 32], then fp16 mins [D / 32].
size_t kivi_value_record_bytes(int bits, int head_dim);
void kivi_quantize_value(const float* v, int head_dim, int bits, uint8_t* record);
void kivi_dequantize_value(const uint8_t* record, int head_dim, int bits, float* v);

}  // namespace accel
