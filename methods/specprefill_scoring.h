// SpecPrefill's math between the draft's captured lookahead queries + prompt keys and the sorted
// list of prompt positions the target prefills: token importance (methods.md §1.2.2) and chunk
// selection (§1.2.3, §1.3 variants). Pure functions over plain arrays: no model, cache, hooks or
// timing here; the method's orchestration (methods/specprefill.*) decides what to pass and when.
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "kernels/pool.h"

namespace accel::specprefill {

// ---------------------------------------------------------------------------------------------
// Importance

enum class AggregationOrder {
  // Reference (SP, VM, OM): softmax -> pool along j -> max over (layer, head) -> mean over a.
  PoolMaxMean,
  // pflash (LB): softmax -> max over (layer, head) -> mean over a -> pool along j.
  MaxMeanPool,
};

struct ScoringOptions {
  int pool_kernel = 13;                    // odd; 0 or 1 = no pooling
  PoolEdge pool_edge = PoolEdge::ZeroPad;  // reference: zero padding, divide by k
  AggregationOrder order = AggregationOrder::PoolMaxMean;
  // pflash's tail attention: the A queries are the last A scored positions (query a sits at key
  // position N - A + a) and each sees only keys j <= its own position, so the softmax of query a
  // runs over keys 0..N-A+a and later keys get probability 0. Requires A <= N.
  bool causal_tail = false;
};

// Sizes shared by every draft layer.
struct DraftShape {
  int n_heads = 0;     // H, query heads
  int n_kv_heads = 0;  // Hkv, divides H; query head h reads kv head h / (H / Hkv)
  int head_dim = 0;    // d
  int n_queries = 0;   // A >= 1, lookahead queries captured per layer
  size_t n_keys = 0;   // N, prompt positions scored
  float scale = 0.f;   // the draft's attention scale; 0 = 1/sqrt(d)
};

// One draft layer's inputs, both post-RoPE, row-major with explicit row strides (in floats; 0
// means dense). Views only: nothing is copied or retained past the call.
struct LayerQK {
  const float* q = nullptr;  // (A, H * d): query a of head h at q[a * q_stride + h * d]
  size_t q_stride = 0;
  const float* k = nullptr;  // (N, Hkv * d): key j of kv head g at k[j * k_stride + g * d];
  size_t k_stride = 0;       // e.g. KVCache::k(layer) + first_prompt_row * kv_dim, stride kv_dim
};

// imp[j], j < N:
//   s[l,h,a,j] = q[l,h,a] . k[l, h/group, j] / sqrt(d)
//   P[l,h,a,:] = softmax over the N keys of s[l,h,a,:]  (fp32, max-subtracted)
//   PoolMaxMean: imp[j] = mean_a max_{l,h} pool(P[l,h,a,:])[j]
//   MaxMeanPool: imp[j] = pool(mean_a max_{l,h} P[l,h,a,:])[j]
//   causal_tail: P[l,h,a,j] = 0 for j > N - A + a, the softmax taken over j <= N - A + a
// Deliberate deviation from the reference: P stays fp32; SP casts it to bf16 after the softmax,
// which makes ties common and top-k arbitrary (methods.md §1.6.5).
// Parallel over (layer, kv head, block of up to 32 of its query rows); per-thread running maxima
// are merged by max (exact, order-free) and the mean over a is summed in ascending a, so the
// result is bit-identical for any thread count. Memory: per thread about (A + min(32, G*A) + 2) * N
// floats; the [L,H,A,N] tensor is never formed. K is streamed ceil(G*A / 32) times per layer.
// NaN/inf in q or k give unspecified (but thread-count-independent) values.
// Throws std::invalid_argument (message names the field) on bad shapes, null pointers, strides
// shorter than a row, layers.size() == 0, A < 1 or an even pool kernel > 1. N = 0 gives {}.
std::vector<float> token_importance(std::span<const LayerQK> layers, const DraftShape& shape,
                                    const ScoringOptions& options = {});
// Same, writing N floats to imp.
void token_importance(std::span<const LayerQK> layers, const DraftShape& shape,
                      const ScoringOptions& options, float* imp);

// ---------------------------------------------------------------------------------------------
// Selection

enum class KeepRounding {
  Ceil,       // reference: ceil(n_chunks * keep)
  FloorMin1,  // pflash: max(1, floor(n_chunks * keep))
};

struct SelectOptions {
  // Always keep the chunks covering the last force_tail_tokens prompt positions (omlx's tail
  // floor, 512 there; 0 = off, the reference). They are drawn from the keep budget; when they
  // alone exceed it they are all kept anyway and Selection::tail_exceeded_budget is set.
  int64_t force_tail_tokens = 0;
  KeepRounding keep_rounding = KeepRounding::Ceil;
  // pflash's forced head and tail: the first head_chunks and last tail_chunks chunks are always
  // kept, drawn from the budget. When head_chunks + tail_chunks >= budget (n_keep) they are
  // scaled down so that at least half the budget is left to the scores: F = max(1, budget / 2)
  // chunks are forced, head' = floor(head * F / (head + tail)), tail' = F - head' (the tail gets
  // the rounding, so budget 1 forces the last chunk). pflash's rule for this case is not in the
  // spec (methods.md §1.3 says only "scaled down if >= n_keep"); this is our choice.
  int64_t head_chunks = 0, tail_chunks = 0;
  // pflash's n-gram anchor chunks (see specprefill_pflash.h): after the forced chunks, these
  // take the remaining budget first (highest score first, lower index on ties), then the rest
  // of the budget goes to the top-scoring other chunks. Indices outside [0, n_chunks) throw.
  std::vector<int32_t> anchor_chunks;
};

struct Selection {
  std::vector<int32_t> kept_positions;  // ascending prompt positions (offset by the prefix, if any)
  std::vector<int32_t> kept_chunks;     // ascending chunk indices (relative to the scored range)
  int32_t n_chunks = 0;                 // ceil(N / chunk)
  int32_t budget_chunks = 0;            // chunks the keep fraction asked for
  int32_t forced_chunks = 0;            // chunks kept by force (tail tokens, head/tail chunks)
  int32_t head_chunks = 0, tail_chunks = 0;  // head/tail forced after scaling (SelectOptions)
  int32_t anchor_chunks = 0;                 // chunks kept because they were anchors
  bool tail_exceeded_budget = false;         // forced_chunks > budget_chunks; all forced ones kept
};

// Chunk selection over imp[0..n):
// - chunk c covers positions [c*chunk, min((c+1)*chunk, n)); the last may be partial and is scored
//   by the mean over its actual length (sum in double, divided by the length).
// - budget = ceil(n_chunks * keep) (or max(1, floor(...))), computed in double exactly as Python's
//   math.ceil(n_chunks * p) does, so the count matches the reference even where the product
//   rounds up (100 * 0.07 = 7.000000000000001 -> 8 chunks).
// - the top `budget` chunks by score are kept; ties go to the lower chunk index (the stable rule of
//   VM/OM; the reference's torch.topk leaves ties unspecified). NaN chunk scores count as -inf.
// - forced chunks (tail floor, head/tail chunks) and anchors: see SelectOptions. The forced chunks
// are those intersecting [n - T, n), i.e. all
//   T positions are guaranteed; with a partial last chunk that can be one chunk more than omlx's
//   ceil(T / chunk) count.
// keep must be in (0, 1] and chunk >= 1, else std::invalid_argument naming `keep` / `chunk`;
// force_tail_tokens < 0 is rejected too. keep = 1 keeps everything. n = 0 gives an empty
// selection. n must fit int32_t.
Selection select_chunks(const float* imp, size_t n, int chunk, double keep,
                        const SelectOptions& options = {});

// Selection with a cached prefix: the first prefix_len prompt tokens are already in the target's
// cache, so only the suffix (imp_suffix, n_suffix scores for positions prefix_len..) is selected;
// kept_positions are absolute (suffix position + prefix_len), kept_chunks stay suffix-relative.
// Whether to call this (and which keys the suffix scores were computed against) is the method's
// decision. Throws std::invalid_argument if prefix_len + n_suffix exceeds int32_t.
Selection select_chunks_after_prefix(const float* imp_suffix, size_t n_suffix, size_t prefix_len,
                                     int chunk, double keep, const SelectOptions& options = {});

}  // namespace accel::specprefill
