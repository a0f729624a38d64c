// Strided perplexity (see perplexity.h).
#include "models/perplexity.h"

#include <cmath>
#include <stdexcept>

#include "kernels/elementwise.h"
#include "models/generation.h"

namespace accel {

PerplexityResult perplexity(const Model& m, std::span<const int32_t> tokens, size_t context,
                            size_t stride, size_t chunk, KVDType kv_dtype) {
  const size_t n = tokens.size(), V = size_t(m.config().n_vocab);
  if (n < 2) throw std::invalid_argument("perplexity: need at least 2 tokens");
  if (context < 2 || context > size_t(m.config().n_ctx))
    throw std::invalid_argument("perplexity: --context " + std::to_string(context) +
                                " must be in [2, " + std::to_string(m.config().n_ctx) + "]");
  if (stride < 1 || stride > context)
    throw std::invalid_argument("perplexity: --stride must be in [1, context]");
  PerplexityResult r;
  double nll = 0;
  size_t scored_end = 1;  // tokens [1, scored_end) have been scored
  for (size_t begin = 0;; begin += stride) {
    const size_t end = std::min(n, begin + context);
    if (end <= scored_end) {
      if (end == n) break;
      continue;
    }
    KVCache cache = m.make_cache(kv_dtype);
    std::vector<float> logits;
    const auto window = tokens.subspan(begin, end - begin);
    prefill(m, window, iota_positions(0, window.size()), cache, chunk, &logits);
    for (size_t i = scored_end; i < end; ++i) {
      const float* row = &logits[(i - 1 - begin) * V];  // logits at i-1 predict token i
      nll += log_sum_exp(row, V) - double(row[size_t(tokens[i])]);
      ++r.n_scored;
    }
    scored_end = end;
    ++r.n_windows;
    if (end == n) break;
  }
  r.mean_nll = nll / double(r.n_scored);
  r.perplexity = std::exp(r.mean_nll);
  return r;
}

}  // namespace accel
