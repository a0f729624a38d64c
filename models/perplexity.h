// Teacher-forced log-likelihood of a token sequence under a model, with a sliding window: the
// building block of the perplexity suite. Owns only the windowing arithmetic and the NLL sum.
#pragma once
#include <cstdint>
#include <span>

#include "models/model.h"

namespace accel {

struct PerplexityResult {
  double mean_nll = 0;    // nats per scored token
  double perplexity = 0;  // exp(mean_nll)
  size_t n_scored = 0;
  size_t n_windows = 0;
};

// Windows of `context` tokens starting every `stride` tokens (the last one ends at the sequence
// end); each window runs on a fresh cache at positions 0..len-1 and scores only the tokens no
// earlier window scored, so every token after the first is scored exactly once (HF's strided
// perplexity). Requires 2 <= tokens.size(), 1 <= stride <= context <= n_ctx. Windows are
// prefilled `chunk` tokens at a time into a cache of `kv_dtype`: with a seed-placement quantized
// type (int4, q8_0) a chunk attends over the earlier chunks' quantized rows and its own rows in
// full precision, so chunk 1 (or an -uniform type) scores every token through the quantized cache,
// as decoding would.
PerplexityResult perplexity(const Model& m, std::span<const int32_t> tokens, size_t context,
                            size_t stride, size_t chunk = 512, KVDType kv_dtype = KVDType::F32);

}  // namespace accel
