// CritiPrefill's plan and block selection (specs/methods.md §5.2-5.3, §5.6): which layers and
// query segments are pruned, the key-block representatives of a layer, and for one pruned segment
// at one pruned layer the criticality scores, the layer fusion and the top-k key blocks. Pure
// functions and plain state over arrays: no model, cache, hooks or timing (critiprefill.* decides
// when to call them).
//
// The reference computes steps 1-9 over the whole [Hkv, n_seg, n_blk] matrix at once; every step
// is row-local in the segment (the mask leaves segment s only the blocks before it, the softmax,
// fusion and top-k run along a row), so this file computes one segment's row at a time, which is
// what a segment-by-segment prefill has in hand. Deliberate deviations, all recorded here:
//  - fp32 throughout (the reference matmuls in the model dtype and casts the softmax back to it);
//  - top-k takes min(budget / block, eligible blocks) blocks and ties go to the lower block index
//    (torch.topk would pull masked future blocks when the budget exceeds the eligible blocks, and
//    leaves tie order unspecified); the chosen blocks are returned in ascending order.
// Numeric order (part of the contract, so an independent implementation can match bit for bit;
// the build has -ffp-contract=off): dot products accumulate acc = acc + x[d] * y[d] in channel
// order from 0; the group mean is ((S_0 + S_1) + ...) / G; the softmax is e_b = exp(S_b - max),
// sum in block order, P_b = e_b / sum; fusion is 0.25f * prev + 0.75f * P.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

namespace accel::critiprefill {

struct Config {
  int segment = 512;         // S_q: query segment length (a multiple of block)
  int block = 32;            // S_b: key block length
  int budget = 2048;         // past keys per pruned segment: budget / block blocks
  int threshold = 4096;      // segments starting before this position are dense
  int layer_skip = 1;        // layers [0, layer_skip) are dense
  bool layer_fusion = true;  // EMA of the block scores through depth (0.25 prev, 0.75 current)

  // Throws std::invalid_argument naming the field (segment or block < 1, segment % block != 0,
  // budget or threshold < 0, layer_skip < 0).
  void validate() const;
  int top_k() const { return budget / block; }
  // Spec 5.2: layer l is pruned iff l + 1 > layer_skip.
  bool layer_pruned(int layer) const { return layer + 1 > layer_skip; }
  // Spec 5.2: the segment starting at `start` (a multiple of segment) of an n-token prompt is
  // pruned iff start >= threshold and start + segment < n (the last segment is always dense).
  bool segment_pruned(size_t start, size_t n) const {
    return start >= size_t(threshold) && start + size_t(segment) < n;
  }
  // Pruned segments of an n-token prompt (0: the method computes the baseline's attention).
  size_t pruned_segments(size_t n) const;
  // Spec 5.3 step 1: blocks of the first (ceil(n / segment) - 1) * segment keys, the only ones
  // any pruned segment can select.
  size_t pool_blocks(size_t n) const;
};

struct Heads {
  int n_heads = 0;     // query heads H
  int n_kv_heads = 0;  // Hkv, divides H; query head h belongs to kv head h / (H / Hkv)
  int head_dim = 0;
};

// Step 3 for keys: the element-wise max and min over each block's rows, per kv head and channel,
// for one layer. Blocks are appended in order, whole blocks at a time.
class KeyBlocks {
 public:
  KeyBlocks() = default;
  KeyBlocks(const Heads& h, int block, size_t capacity_blocks);
  // Appends the blocks of n rows (n a multiple of block; at most the remaining capacity): row t of
  // kv head g is k[t * ld + g * head_dim + d]. Throws std::invalid_argument otherwise.
  void append(const float* k, size_t ld, size_t n);
  size_t size() const { return n_; }
  // Channel d of kv head g for blocks [0, size()): [n_kv_heads][head_dim][capacity] layout.
  const float* max_row(int g, int d) const { return &max_[(size_t(g) * D_ + size_t(d)) * cap_]; }
  const float* min_row(int g, int d) const { return &min_[(size_t(g) * D_ + size_t(d)) * cap_]; }

 private:
  int block_ = 0, G_ = 0, D_ = 0;
  size_t cap_ = 0, n_ = 0;
  std::vector<float> max_, min_;
};

// Steps 3-7 for one segment at one layer: q is the segment's queries, n_q rows of
// [n_heads * head_dim] with row stride ldq (post-RoPE); the first n_eligible blocks of `keys` are
// the blocks before the segment. Writes P[g * n_eligible + b]: per kv head g the softmax over
// b < n_eligible of the group-mean of
//   S_h[b] = max((qmax_h . kmax_b + qmin_h . kmax_b) / 2, (qmax_h . kmin_b + qmin_h . kmin_b) / 2)
// (no 1/sqrt(d) scaling). n_eligible must be >= 1 and <= keys.size().
void segment_scores(const Heads& h, const float* q, size_t ldq, size_t n_q, const KeyBlocks& keys,
                    size_t n_eligible, float* P);

// Step 8: with fusion on, at layer <= 1 or without a previous row the state becomes P; otherwise
// P = 0.25 * state + 0.75 * P and the state becomes the new P. `state` is the segment's row from
// the previous pruned layer ([n_kv_heads * n_eligible]; empty = none). Off: nothing happens.
void fuse_layers(bool layer_fusion, int layer, float* P, size_t n, std::vector<float>& state);

// Step 9 for one kv head's row: the min(k, n) largest of P[0..n) (ties to the lower index, NaN
// below everything), written to out in ascending block order; returns how many.
size_t top_blocks(const float* P, size_t n, int k, int32_t* out);

// Steps 3-9 together: the blocks of every kv head for one pruned segment at one pruned layer,
// [n_kv_heads][min(top_k, n_eligible)] ascending per head; `state` as in fuse_layers.
std::vector<int32_t> select_blocks(const Config& c, const Heads& h, int layer, const float* q,
                                   size_t ldq, size_t n_q, const KeyBlocks& keys, size_t n_eligible,
                                   std::vector<float>& state);

}  // namespace accel::critiprefill
