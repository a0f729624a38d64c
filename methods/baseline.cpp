// BaselineMethod and the shared greedy-decode tail (see baseline.h).
#include "methods/baseline.h"

#include "methods/phase_timer.h"
#include "methods/ttft_flops.h"
#include "models/generation.h"

namespace accel {

void finish_with_greedy_decode(const Engine& e, const Request& r, KVCache& cache,
                               std::vector<float> last_logits, int32_t next_pos, PhaseTimer& timer,
                               Outcome& out) {
  const Model& m = *e.target;
  out.prompt_tokens = r.prompt.size();
  // The first token is chosen from the prompt's last logits: that choice ends TTFT.
  const int32_t first = argmax(last_logits);
  timer.lap("first_token");
  out.ttft_s = timer.elapsed();
  if (r.keep_logits > 0) out.logits.push_back(last_logits);
  out.tokens.push_back(first);
  if (r.on_token && r.forced_tokens.empty()) r.on_token(first);
  const auto t_decode = PhaseTimer::Clock::now();
  if (!r.forced_tokens.empty()) {
    // Teacher forcing: step t feeds the reference's token t, whatever this run chose.
    const int32_t row = 0;
    int32_t pos = next_pos;
    for (size_t t = 0; t + 1 < size_t(r.max_new_tokens) && t < r.forced_tokens.size(); ++t) {
      const int32_t tok = r.forced_tokens[t];
      const std::vector<float> lg = m.forward({&tok, 1}, {&pos, 1}, cache, {&row, 1});
      ++pos;
      out.tokens.push_back(argmax(lg));
      if (int(out.logits.size()) < r.keep_logits) out.logits.push_back(lg);
    }
  } else if (first != r.eos && r.max_new_tokens > 1) {
    DecodeOptions opt;
    opt.max_tokens = r.max_new_tokens - 1;
    opt.eos = r.eos;
    opt.on_token = [&](int32_t tok, std::span<const float> lg) {
      if (int(out.logits.size()) < r.keep_logits) out.logits.emplace_back(lg.begin(), lg.end());
      if (r.on_token) r.on_token(tok);
    };
    // Feed the first token at next_pos, then continue greedily.
    const int32_t row = 0;
    std::vector<float> lg = m.forward({&first, 1}, {&next_pos, 1}, cache, {&row, 1});
    const auto rest = greedy_decode(m, cache, std::move(lg), next_pos + 1, opt);
    out.tokens.insert(out.tokens.end(), rest.begin(), rest.end());
  }
  timer.lap("decode");
  out.decode_s = std::chrono::duration<double>(PhaseTimer::Clock::now() - t_decode).count();
  out.phases = timer.phases();
  out.kv_bytes = cache.bytes();
}

Outcome BaselineMethod::run(const Engine& e, const Request& r, const nlohmann::json&) const {
  PhaseTimer timer;
  Outcome out;
  const Model& m = *e.target;
  KVCache cache = e.make_target_cache();
  // One allocation for the prompt and the decode, inside the clock: growing by doubling would copy
  // the cache at every power of two and once more at the first decode step after a power-of-two
  // prompt.
  cache.reserve(r.prompt.size() + size_t(r.max_new_tokens));
  std::vector<float> last =
      prefill(m, r.prompt, iota_positions(0, r.prompt.size()), cache, e.prefill_chunk);
  timer.lap("prefill");
  out.kept_tokens = r.prompt.size();
  out.stats["ttft_flops"] = forward_flops(m.config(), double(r.prompt.size()), 0, 1);
  finish_with_greedy_decode(e, r, cache, std::move(last), int32_t(r.prompt.size()), timer, out);
  return out;
}

}  // namespace accel
