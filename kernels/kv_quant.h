// Quantized KV-cache record formats: how one (token, kv head) row of head_dim values is packed,
// and the exact quantize / dequantize arithmetic. Owns the formats' bits; knows nothing about
// caches or attention (attention_quant.h reads these records, models/kv_storage.cpp stores them).
#pragma once
#include <cstddef>
#include <cstdint>

namespace accel {

enum class KVQuant {
  // Open-TQ-Metal's canonical int4 (methods.md §4.1): groups of 32 along head_dim, fp16 scale and
  // zero, x̂ = (q - zero) * scale, q in [0, 15]. Record: head_dim/2 bytes of codes (element 2b in
  // the low nibble of byte b, 2b+1 in the high one), then head_dim/32 scales, then head_dim/32
  // zeros (fp16 bits, little-endian).
  Int4,
  // ggml's Q8_0: groups of 32, fp16 d, x̂ = q * d, q in [-127, 127]; record = head_dim/32
  // BlockQ8_0 {d, qs[32]} (kernels/quant.h), quantized by ggml's reference rule.
  Q8_0,
};

constexpr int kKVQuantGroup = 32;  // values per group (scale/zero) in both formats

size_t kv_quant_record_bytes(KVQuant f, int head_dim);

// One group of 32 int4 codes with its fp16 scale and zero (methods.md §4.1), from f32 input:
//   s = fp16((max - min) / 15); z = fp16(-min / s); q = round_half_even(clamp(x / s + z, 0, 15))
// with s and z used at their stored (fp16) values. Degenerate groups, where s rounds to 0 (a
// constant group; the seed's fp16 1e-8 floor underflows to 0) or z does not fit fp16 (a range tiny
// against the values' magnitude), take s = fp16(max(|min|, |max|) / 15) instead, so |z| <= ~15;
// an all-zero group stores s = z = 0 and decodes to zeros.
void int4_quantize_group(const float* x, uint8_t* codes16, uint16_t* scale, uint16_t* zero);

// x̂ = (q - z) * s in f32, each operation rounded: the one definition every reader uses.
inline float int4_dequant(int q, float s, float z) {
  return (float(q) - z) * s;
}

void kv_quantize_head(KVQuant f, const float* x, int head_dim, uint8_t* record);
void kv_dequantize_head(KVQuant f, const uint8_t* record, int head_dim, float* x);

// Key blocks: the records of kKBlockTokens consecutive tokens of one head, rearranged (same
// bytes, same values) so that one row holds element e of every token of the block, which lets the
// attention kernel run SIMD lanes over keys with no transposes. Layout of a block:
//   int4: D rows of 16 bytes (byte b of row e = code of token b | code of token b + 16 << 4),
//         then the scales [D/32 groups][32 tokens] fp16, then the zeros likewise;
//   q8_0: D rows of 32 int8 (token t at byte t), then the scales [D/32 groups][32 tokens] fp16.
// A block takes exactly kKBlockTokens records' bytes.
constexpr int kKBlockTokens = 32;
size_t kv_quant_kblock_bytes(KVQuant f, int head_dim);
// Bytes one head's keys take for `capacity` tokens (whole blocks).
size_t kv_quant_khead_bytes(KVQuant f, int head_dim, size_t capacity);
// Puts a token's record at slot t of a key block / takes it back out.
void kblock_put(KVQuant f, int head_dim, const uint8_t* record, uint8_t* block, int t);
void kblock_get(KVQuant f, int head_dim, const uint8_t* block, int t, uint8_t* record);

// Value blocks (int4 only; q8_0 values stay records): the records of kKBlockTokens consecutive
// tokens of one head, rearranged (same bytes, same values) so that one 64-byte line holds a key
// quad's codes of a group interleaved, which the 8-bit P.V (attention_pv8.h) dots with its u8
// weights as loaded and the exact P.V (attention_pv_codes.h) reads a key's codes from with one
// shift per nibble, and the parameters lie in lanes over keys. Layout of a block:
//   per group g of 32 elements, 8 quads of 64 bytes: byte 4k + r of quad u = record byte k of
//   group g (element 2k in the low nibble, 2k + 1 in the high one) of token 4u + r;
//   then the scales [D/32 groups][32 tokens] fp16, then the zeros likewise (as in a key block).
// A block takes exactly kKBlockTokens records' bytes (kv_quant_kblock_bytes).
void vblock_put(KVQuant f, int head_dim, const uint8_t* record, uint8_t* block, int t);
// Where an int4 value block's parts start: quad line u of group g, and the parameters (scales,
// then zeros) after the head_dim * 16 code bytes, as in an int4 key block.
inline size_t vblock_line_offset(int g, int u) {
  return size_t(g) * 512 + size_t(u) * 64;
}
inline size_t int4_block_params_offset(int head_dim) {
  return size_t(head_dim) * 16;
}
void vblock_get(KVQuant f, int head_dim, const uint8_t* block, int t, uint8_t* record);
// Bytes one head's values take for `capacity` tokens: whole value blocks for int4, records for
// q8_0.
size_t kv_quant_vhead_bytes(KVQuant f, int head_dim, size_t capacity);

}  // namespace accel
