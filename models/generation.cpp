// Chunked prefill and greedy decoding (see generation.h).
#include "models/generation.h"

#include <algorithm>
#include <numeric>
#include <stdexcept>

namespace accel {

int32_t argmax(std::span<const float> logits) {
  int32_t best = 0;
  for (size_t i = 1; i < logits.size(); ++i)
    if (logits[i] > logits[size_t(best)]) best = int32_t(i);
  return best;
}

std::vector<int32_t> iota_positions(int32_t start, size_t n) {
  std::vector<int32_t> p(n);
  std::iota(p.begin(), p.end(), start);
  return p;
}

std::vector<float> prefill(const Model& m, std::span<const int32_t> tokens,
                           std::span<const int32_t> positions, KVCache& cache, size_t chunk,
                           std::vector<float>* all_logits, const ForwardHooks* hooks) {
  if (chunk == 0) throw std::invalid_argument("prefill: chunk size must be >= 1");
  if (tokens.empty()) throw std::invalid_argument("prefill: empty prompt");
  std::vector<float> last;
  std::vector<int32_t> rows;
  for (size_t s = 0; s < tokens.size(); s += chunk) {
    const size_t n = std::min(chunk, tokens.size() - s);
    const bool is_last = s + n == tokens.size();
    rows.clear();
    if (all_logits)
      for (size_t i = 0; i < n; ++i) rows.push_back(int32_t(i));
    else if (is_last)
      rows.push_back(int32_t(n - 1));
    std::vector<float> lg =
        m.forward(tokens.subspan(s, n), positions.subspan(s, n), cache, rows, hooks);
    if (all_logits) all_logits->insert(all_logits->end(), lg.begin(), lg.end());
    if (is_last) {
      const size_t V = size_t(m.config().n_vocab);
      last.assign(lg.end() - std::ptrdiff_t(V), lg.end());
    }
  }
  return last;
}

std::vector<int32_t> greedy_decode(const Model& m, KVCache& cache, std::vector<float> logits,
                                   int32_t next_pos, const DecodeOptions& opt) {
  // Greedy decoding never trims, so its steps skip the recurrent states' rollback copies; the
  // caller's setting is back afterwards, also when a step throws.
  struct CheckpointsOff {
    KVCache& c;
    bool was;
    explicit CheckpointsOff(KVCache& cache) : c(cache), was(cache.rollback_checkpoints()) {
      c.set_rollback_checkpoints(false);
    }
    ~CheckpointsOff() { c.set_rollback_checkpoints(was); }
  } off(cache);
  std::vector<int32_t> out;
  const int32_t row0 = 0;
  for (int i = 0; i < opt.max_tokens; ++i) {
    const int32_t tok = argmax(logits);
    out.push_back(tok);
    if (opt.on_token) opt.on_token(tok, logits);
    if (tok == opt.eos || i + 1 == opt.max_tokens) break;
    const int32_t pos = next_pos + i;
    logits = m.forward({&tok, 1}, {&pos, 1}, cache, {&row0, 1});
  }
  return out;
}

}  // namespace accel
