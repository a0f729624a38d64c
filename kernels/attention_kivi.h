// Causal attention straight on a KIVI cache (kv_quant_kivi.h: per-channel key blocks of 32 tokens,
// per-token value records) plus full-precision rows after them: the fused decode kernel with
// split-K, and the dequantize-then-attend path it replaced (kept as the reference it is compared
// with and for large batches). Knows nothing about caches or models; must not dequantize the
// quantized rows into a scratch sized by the cache (only one 32-token tile per thread).
//
// What the fused kernel computes, fixed for a given (query row, head) and independent of the
// batch, the thread count and which thread runs a chunk:
//   keys are visited in blocks of 32 aligned to index 0 of the view (KiviKV: view block b of the
//   quantized region is a stored key block), blocks grouped into chunks of 512 keys aligned to
//   index 0;
//   a quantized block's score for key t is  ((sum_e fl(q_e * s_e) * c_et) + bias) * scale * log2 e
//   where c_et is the integer code, s_e / m_e the channel's fp16 scale and min, the sum over
//   e = 0..D-1 one FMA chain in order, and bias = sum_e q_e * m_e (FMA chains over SIMD lanes, then
//   a fixed horizontal sum). This is q . k̂ with k̂ = c * s + m exactly up to float rounding of the
//   products q_e * s_e and of the sums (the dequantize-then-attend path rounds k̂ itself instead);
//   a full-precision block's score is the FMA chain of q . k over e in order;
//   values are dequantized per record to kivi_dequant's exact values (v̂ = c * s + m, rounded
//   twice, bit for bit) into a 32 x D tile; the online softmax (exp2 domain, masked keys skipped)
//   and P.V (o = fma(p_t, v_t, o) over visible keys in the tile's fixed key order) per block;
//   each chunk ends with (m_c, l_c, o_c); chunks are merged in order by the online rule
//   M = max(m, m_c), l = l 2^(m - M) + l_c 2^(m_c - M), o = o 2^(m - M) + o_c 2^(m_c - M); out = o
//   / l.
// A query that sees no key gets zeros. Soft-capping is not implemented (refused); sinks and
// sliding windows are.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "kernels/attention.h"

namespace accel {

constexpr size_t kKiviChunk = 512;  // keys per split-K chunk (part of the numerics)

// A KIVI cache view. Rows [0, n_quant) are quantized (n_quant a multiple of 32): view block i is
// stored block b = kivi_stored_block(kv, i), whose keys are at k + g * k_head_stride + b *
// kivi_key_block_bytes(bits, D) for kv head g and whose row t's value record is at v + g *
// v_head_stride + (32 b + t) * kivi_value_record_bytes(bits, D). Rows from n_quant on are f32, in
// up to two segments taken in order (e.g. a residual and a batch's new rows): row r of segment s
// holds kv head g's key at rows[s].k + r * rows[s].ld + g * D (values likewise).
// A linear cache stores view block i as block i (ring_blocks = 0); a ring (a sliding-window
// layer's storage) lists its sealed blocks oldest slot first, block i as (first_block + i) %
// ring_blocks. Keys are visited in view order, so the numerics below are those of the view.
struct KiviKV {
  int bits = 4;
  const uint8_t* k = nullptr;
  const uint8_t* v = nullptr;
  size_t k_head_stride = 0;  // bytes
  size_t v_head_stride = 0;
  size_t n_quant = 0;
  size_t first_block = 0;  // a ring's first view block, stored
  size_t ring_blocks = 0;  // blocks a ring stores; 0 for a linear cache
  struct Rows {
    const float* k = nullptr;
    const float* v = nullptr;
    size_t ld = 0;  // elements
    size_t n = 0;
  } rows[2];
};

// The stored block that view block i reads (see KiviKV).
inline size_t kivi_stored_block(const KiviKV& kv, size_t i) {
  return kv.ring_blocks ? (kv.first_block + i) % kv.ring_blocks : i;
}

// q: [n_q][n_heads * head_dim] row stride ldq, q_pos[n_q]; kv_pos[n_kv] with n_kv = n_quant plus
// both segments' rows; out like q with stride ldo. head_dim: a multiple of 32 up to 256.
void attention_kivi(const AttentionShape& s, const float* q, size_t ldq, const int32_t* q_pos,
                    size_t n_q, const KiviKV& kv, const int32_t* kv_pos, size_t n_kv, float* out,
                    size_t ldo);

// The view's quantized rows [0, n_quant) dequantized to token-major rows kf / vf (row r of kv
// head g at r * ld + g * head_dim), equal bit for bit to kivi_dequantize_key_block /
// kivi_dequantize_value; parallel over (kv head, block), the same bits at any thread count.
void kivi_dequantize_view(const KiviKV& kv, int head_dim, int n_kv_heads, float* kf, float* vf,
                          size_t ld);

// The dequantize-then-attend path: every row into token-major f32 scratch kf / vf (grown to at
// least n_kv * kv_dim, never shrunk; O(n_kv) memory), then attention_causal. Its scores round
// k̂ = c * s + m first.
void attention_kivi_dequantized(const AttentionShape& s, const float* q, size_t ldq,
                                const int32_t* q_pos, size_t n_q, const KiviKV& kv,
                                const int32_t* kv_pos, size_t n_kv, float* out, size_t ldo,
                                std::vector<float>& kf, std::vector<float>& vf);

}  // namespace accel
