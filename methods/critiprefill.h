// CritiPrefill (specs/methods.md §5; arXiv 2409.12490, code 66RING/CritiPrefill): the target
// prefills the prompt segment by segment; in every pruned layer each pruned query segment scores
// the key blocks before it from max/min representatives (with an EMA across layers) and attends
// only to its top blocks plus its own rows (kernels/block_sparse_attention.h). The cache still
// receives every prompt row, so decoding is dense at the full prompt length. Orchestration: the
// selection math is critiprefill_select.*, the forward pass is models/ (ForwardHooks::attend).
#pragma once
#include <functional>
#include <span>
#include <vector>

#include "methods/critiprefill_select.h"
#include "methods/method.h"

namespace accel {

class CritiPrefillMethod : public Method {
 public:
  std::string name() const override { return "critiprefill"; }
  std::string summary() const override {
    return "segment-wise sparse prefill: each query segment attends to its top key blocks scored "
           "by max/min representatives with a layer EMA, plus its own rows; decode dense";
  }
  std::vector<ParamSpec> params() const override;
  // below_threshold: no segment would be pruned (every segment starts before `threshold` or is
  // the last one), so the prompt runs the baseline's chunked prefill.
  std::vector<std::string> fallback_reasons() const override { return {"below_threshold"}; }
  // Throws std::invalid_argument for a KV cache type other than f32 / f16 (the block-sparse
  // kernel reads those rows) and for inconsistent parameters (segment not a multiple of block).
  Outcome run(const Engine& e, const Request& r, const nlohmann::json& params) const override;
};

namespace critiprefill {

// The configuration of resolved parameters (not yet validated).
Config config_from_params(const nlohmann::json& params);

// What a sparse prefill did. Pairs are (query, key) pairs summed over layers and query heads, each
// 4 * head_dim attention FLOPs.
struct PrefillStats {
  size_t pruned_segments = 0;  // per pruned layer
  size_t pruned_layers = 0;
  double pairs_dense = 0;         // what the baseline's causal attention visits
  double pairs_kept = 0;          // what this prefill visits
  double select_s = 0;            // criticality scores, fusion and top-k
  double sparse_attention_s = 0;  // attention of pruned layers' batches that held a pruned segment
};

// Test and profiling hooks into sparse_prefill; empty members cost nothing.
struct Observer {
  // For every pruned layer of every batch: the batch as the forward pass gave it (queries and
  // new K/V rows), the prompt position of its first row, and whether CritiPrefill computed its
  // attention (then `out` holds it; false: no pruned segment, the cache attends after the call).
  std::function<void(int layer, size_t row0, const AttendBatch& batch, bool sparse)> on_layer;
  // Each pruned segment's blocks at each pruned layer: [n_kv_heads][k] ascending per head.
  std::function<void(int layer, size_t segment, const std::vector<int32_t>& blocks)> on_selection;
  // Attached to every forward call (GEMM and attention time; its attention_pairs count the dense
  // pairs, see ForwardHooks::attend).
  ForwardProfile* profile = nullptr;
};

// Prefills tokens at positions 0..n-1 into an empty f32 or f16 cache the CritiPrefill way and
// returns the last token's logits. Batches are whole segments: chunk rounded down to a multiple
// of the segment (at least one). Block representatives come from the keys as computed (f32); the
// attention reads the rows as the cache stores them. Pruned layers keep a copy of their rows in
// the cache's format while prefilling (the cache offers no read access to its rows), freed on
// return. With no pruned segment or layer every layer's attention is the cache's own, so the
// logits equal a chunked prefill's bit for bit (batch invariance).
std::vector<float> sparse_prefill(const Model& m, std::span<const int32_t> tokens, KVCache& cache,
                                  const Config& c, size_t chunk, PrefillStats* stats = nullptr,
                                  const Observer* observer = nullptr);

// The pairs a sparse prefill of n tokens visits under c, and the dense prefill's (no model run).
void count_pairs(const Config& c, int n_layer, int n_heads, size_t n, double* dense, double* kept);
// The same with each layer's sliding window (0: full attention; -1: no attention, a hybrid's
// recurrent or FFN-only block, which counts no pairs): a sliding layer is never pruned
// (sparse_prefill attends it densely) and its queries see at most `window` keys.
void count_pairs(const Config& c, std::span<const int> windows, int n_heads, size_t n,
                 double* dense, double* kept);

}  // namespace critiprefill
}  // namespace accel
