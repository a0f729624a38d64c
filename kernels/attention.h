// Causal grouped-query attention over a key/value sequence whose positions are data, with an
// online softmax. Owns the attention kernels (and their double reference); knows nothing about
// caches, layers or models: callers pass plain row-major buffers.
//
// Masking is by position, never by index: key j is visible to query i iff kv_pos[j] <= q_pos[i]
// and, for a sliding-window shape (window > 0), q_pos[i] - kv_pos[j] < window (llama.cpp's
// standard SWA: a key `window` or more positions back is masked).
// Batch invariance: out[i] is bit-identical for a given query row, key/value rows and positions,
// whatever n_q, the query's index in the batch, keys past its position that are present (and
// masked), and the thread count. Keys are visited in fixed blocks aligned to index 0.
#pragma once
#include <cstddef>
#include <cstdint>

namespace accel {

struct AttentionShape {
  int n_heads = 0;     // query heads
  int n_kv_heads = 0;  // key/value heads; query head h reads kv head h / (n_heads / n_kv_heads)
  int head_dim = 0;
  float scale = 0.f;  // usually 1/sqrt(head_dim)
  // Sliding window in positions (0: full causal attention). Key j is visible to query i iff
  // 0 <= q_pos[i] - kv_pos[j] < window.
  int window = 0;
  // Attention sinks (gpt-oss): one learned logit per query head, [n_heads], in natural-log units
  // and not scaled. It joins the softmax denominator as a key whose value is zero:
  // out = sum_j e^(s_j) v_j / (e^(sink) + sum_j e^(s_j)). Null: no sinks.
  const float* sinks = nullptr;
  // Attention-logit soft-capping (0: off): a score s = scale * q.k becomes cap * tanh(s / cap), as
  // ggml's flash attention applies its logit_softcap (llama.cpp's non-flash path caps q.k before
  // the scale; the two agree when scale is 1, as Gemma 2 and Grok use it).
  float softcap = 0.f;
};

// The lowest visible key position for a query at q_pos (INT32_MIN for full attention).
int32_t attention_window_lo(int32_t q_pos, int window);
// Refuses a negative window or a soft-cap that is negative or not finite (every kernel checks).
void check_mask_options(const AttentionShape& s);
// key position kp visible to a query at qp under the shape's mask.
inline bool attention_visible(int32_t kp, int32_t qp, int window) {
  return kp <= qp && (window <= 0 || int64_t(qp) - int64_t(kp) < int64_t(window));
}

// How the key/value rows are stored. F16 rows are widened to f32 block by block inside the kernel
// (exactly), so an f16 cache gives the bits an f32 cache holding the same rounded values would.
enum class KVFormat { F32, F16 };

// Key and value rows: [n_kv][n_kv_heads * head_dim] elements of `format`, row stride `ld`
// (elements).
struct KVRows {
  const void* k = nullptr;
  const void* v = nullptr;
  size_t ld = 0;
  KVFormat format = KVFormat::F32;
};

// q:  [n_q][n_heads * head_dim], row stride ldq; q_pos[n_q].
// k, v: [n_kv][n_kv_heads * head_dim], row stride ldkv; kv_pos[n_kv].
// out: [n_q][n_heads * head_dim], row stride ldo. A query that sees no key gets zeros.
void attention_causal(const AttentionShape& s, const float* q, size_t ldq, const int32_t* q_pos,
                      size_t n_q, const float* k, const float* v, size_t ldkv,
                      const int32_t* kv_pos, size_t n_kv, float* out, size_t ldo);
// The same over rows of any KVFormat.
void attention_causal(const AttentionShape& s, const float* q, size_t ldq, const int32_t* q_pos,
                      size_t n_q, const KVRows& kv, const int32_t* kv_pos, size_t n_kv, float* out,
                      size_t ldo);

// Plain double-precision reference (two-pass softmax), same layout; out in double.
void attention_reference(const AttentionShape& s, const float* q, size_t ldq, const int32_t* q_pos,
                         size_t n_q, const float* k, const float* v, size_t ldkv,
                         const int32_t* kv_pos, size_t n_kv, double* out, size_t ldo);

}  // namespace accel
