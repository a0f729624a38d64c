// Attention computed directly on a quantized KV cache (int4 / q8_0 blocks and records, kv_quant.h):
// the fused decode kernel with split-K, and the row dequantizer the "dequantize, then attend"
// baseline and the full-precision prefill path use. Knows nothing about caches or models.
//
// Numerics, fixed for a given (query row, head) and independent of the batch, the thread count
// and how the chunks are shared among threads:
//   keys are split into chunks of `chunk` entries aligned to index 0 (512 by default, the seed's
//   SPLIT_K size); a chunk is visited in blocks of 32 keys (one key block, kv_quant.h);
//   the query is rounded to int8 per group of 32 elements, as llama.cpp's CPU attention rounds Q
//   to q8_0 before its dot with a quantized K (code = nearbyint(q * 127 / amax), step dq =
//   amax / 127, S = the group's code sum); each group's dot with a key is the exact integer
//   I = sum of query code * key code (vpdpbusd where AVX-512 VBMI + VNNI exist, exact float FMAs
//   otherwise: the same bits), folded as acc = fma(I - z * S, s * dq, acc) over the groups in
//   order (q8_0 keys: fma(I, d * dq, acc)), score_j = acc * scale * log2(e), SIMD lanes running
//   over keys. So a score equals q̃ · k̂ for the rounded query q̃ (|q - q̃| <= dq / 2 per element)
//   and the keys' exact dequantized values, up to float rounding of the fold;
//   values, int4: per block, head and value group, o = o * alpha, then o = fma(w_t, c_t - z_t, o)
//   over the visible keys in order, with w_t = p_t * s_t in f32 (s_t, z_t: the key's scale and
//   zero; c_t its code) and c_t - z_t exact (bar fp16-subnormal zeros): the terms p_t * v̂_t of
//   the definition, associated as (p_t * s_t) * (c_t - z_t) where v̂_t = (c_t - z_t) * s_t
//   (attention_pv_codes.h); q8_0: dequantized to kv_dequantize_head's exact values into an L1
//   tile, then o = fma(p_t, v̂_t, o * alpha) over the visible keys in order; either way in a lane
//   order fixed by the SIMD width;
//   per block the online softmax of attention.cpp (exp2 domain, masked keys skipped); each chunk
//   ends with (m_c, l_c, o_c); the merge, in chunk order, takes M = max m_c over non-empty
//   chunks, l = sum l_c * 2^(m_c - M), o = sum o_c * 2^(m_c - M), out = o / l.
// Masking is by position (key j visible to query i iff kv_pos[j] <= q_pos[i]); a masked key
// changes nothing, so a query's output is the same whether later keys are present or not.
#pragma once
#include <cstddef>
#include <cstdint>

#include "kernels/attention.h"
#include "kernels/kv_quant.h"

namespace accel {

constexpr size_t kSplitKChunk = 512;

// Quantized K and V, head-major. Keys are key blocks (kv_quant.h): block b of kv head g at
// k + g * k_head_stride + b * kv_quant_kblock_bytes(format, head_dim). int4 values are value
// blocks (kv_quant.h), placed like the key blocks from v + g * v_head_stride; q8_0 values are
// records: entry j of kv head g at v + g * v_head_stride + j * kv_quant_record_bytes(format,
// head_dim). Either way entry j's bytes start at j * record bytes within the head when j is a
// multiple of 32.
struct QuantKV {
  KVQuant format = KVQuant::Int4;
  const uint8_t* k = nullptr;
  const uint8_t* v = nullptr;
  size_t k_head_stride = 0;  // bytes
  size_t v_head_stride = 0;
};

// q: [n_q][n_heads * head_dim] row stride ldq; out likewise with ldo. head_dim must be a multiple
// of 32 and at most 256. A query that sees no key gets zeros. chunk must be a multiple of 32.
// How int4 scores are computed: Auto takes vpdpbusd where AVX-512 VBMI and VNNI exist, Float
// forces the exact-float path every other build uses. Both give the same bits (the group dots are
// exact integers either way); Float exists so that a test can hold them to it.
enum class QuantScorePath { Auto, Float };
// How P.V is computed for an int4 cache. Exact: f32 weights p * s times c - z, in f32 FMAs (the
// numerics above). Int8 (attention_pv8.h): per 32-key block, head
// and value group, the weights w_t = p_t * s_t (s_t: key t's value scale) are rounded to u8 codes
// u_t relative to the block's largest (P = max p, sigma = max s over visible keys), and
// sum_t u_t * c_{t,e} runs on the int4 codes in exact integers (vpdpbusd, or vpmaddubsw +
// vpmaddwd without VNNI). Each block then adds sum_t u_t * kappa * (c_{t,e} - z_t) with
// kappa = P * sigma / 255 in place of sum_t w_t * (c_{t,e} - z_t), so per block
// |u_t * kappa - w_t| <= kappa / 2 (plus a few float roundings), and over the whole softmax
// (the block maxima P sum to at most l) the output moves by at most
//   (n_b / 510) * S * Zeta + float rounding,  S = max over keys and groups of s_t,
//   Zeta = max over keys and groups of max(|z_t|, |15 - z_t|) (two separate maxima: one key's
//   rounding step, set by the block's largest scale, multiplies another key's c - z),
// n_b <= 32 the visible keys per block. Where scales are alike across keys that is ~6% of the
// largest representable value; where they differ it is not: a key whose scale is far below the
// block's largest rounds to code 0 and drops out (a small-scale key with a large offset can move
// the output by half the largest value; attention_pv8_test builds one). The tests hold the kernel
// to the bound.
// A block whose largest weight is below 2^-120 of the running maximum adds nothing (that keeps
// 255 / P finite). Scores, the softmax and the split-K merge are the exact kernel's. q8_0 caches
// refuse Int8.
enum class QuantPV { Exact, Int8 };

void attention_quant(const AttentionShape& s, const float* q, size_t ldq, const int32_t* q_pos,
                     size_t n_q, const QuantKV& kv, const int32_t* kv_pos, size_t n_kv, float* out,
                     size_t ldo, size_t chunk = kSplitKChunk,
                     QuantScorePath path = QuantScorePath::Auto, QuantPV pv = QuantPV::Exact);

// The fused kernel's query rounding, one group of 32 elements: amax = max |x_e|, codes[e] =
// nearbyint(x_e * (127 / amax)) (half to even; all zeros for an all-zero group), returns the step
// dq = amax / 127, so |x_e - codes[e] * dq| <= dq / 2 up to float rounding (a group with amax
// below 2^-100 is scaled by 2^100 first, exactly, so 127 / amax cannot overflow). A group holding
// a NaN or an infinity gets zero codes and step NaN: its scores are NaN, a chunk whose softmax sum
// is not positive contributes nothing, so such a query's output is zeros (as a NaN query's was
// before the rounding; an infinite element used to give infinite scores). llama.cpp's CPU attention
// rounds Q to q8_0 in the same way (its step is stored in fp16 and it rounds half away from zero).
float quantize_query_group(const float* x, int8_t* codes);

// Dequantizes entries [j0, j0 + n) of every kv head into token-major f32 rows
// k_out/v_out [n][n_kv_heads * head_dim] with row stride ld (elements), in parallel.
void dequantize_kv_rows(const QuantKV& kv, int n_kv_heads, int head_dim, size_t j0, size_t n,
                        float* k_out, float* v_out, size_t ld);
// The same for plain head-major records (entry j of head g at records + g * head_stride +
// j * record bytes): the per-token layout a dequantize-then-attend design would store.
void dequantize_record_rows(KVQuant f, int n_kv_heads, int head_dim, const uint8_t* records,
                            size_t head_stride, size_t j0, size_t n, float* out, size_t ld);

}  // namespace accel
