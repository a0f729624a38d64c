// SpecPrefillMethod::run (see specprefill.h). Phases: [prefix] draft_prefill, lookahead, score,
// select, prefill (target, sparse), first_token, decode. The only fallback is the declared one
// (below_threshold: a full prefill, recorded in the stats); any error fails the request.
#include "methods/specprefill.h"

#include <cmath>
#include <cstring>

#include "methods/baseline.h"
#include "methods/phase_timer.h"
#include "methods/specprefill_scoring.h"
#include "models/generation.h"

namespace accel {

std::vector<ParamSpec> SpecPrefillMethod::params() const {
  using K = ParamSpec::Kind;
  return {
      {"keep", K::Float, 0.2, 0, 1, true, {}, "fraction of prompt chunks the target prefills"},
      {"chunk", K::Int, 32, 1, 65536, false, {}, "selection chunk size in tokens"},
      {"lookahead", K::Int, 8, 1, 64, false, {}, "lookahead queries per draft layer"},
      {"lookahead_mode",
       K::Choice,
       "reference",
       0,
       0,
       false,
       {"reference", "decode", "tail"},
       "reference: last prompt token + lookahead-1 greedy draft steps; decode: lookahead draft "
       "steps only (MLX ports); tail: the last `lookahead` prompt tokens, no decoding (pflash; "
       "no causal mask inside the tail)"},
      {"pool_kernel", K::Int, 13, 0, 1023, false, {}, "average-pool kernel (odd; 0 or 1 = off)"},
      {"pool_edges",
       K::Choice,
       "zero_pad",
       0,
       0,
       false,
       {"zero_pad", "renormalize"},
       "zero_pad: divide by the kernel everywhere (reference); renormalize: by in-range count"},
      {"aggregation",
       K::Choice,
       "pool_max_mean",
       0,
       0,
       false,
       {"pool_max_mean", "max_mean_pool"},
       "order of pooling vs max over layers/heads and mean over lookahead queries"},
      {"keep_rounding",
       K::Choice,
       "ceil",
       0,
       0,
       false,
       {"ceil", "floor_min1"},
       "chunks kept = ceil(n*keep) (reference) or max(1, floor(n*keep)) (pflash)"},
      {"force_tail_tokens",
       K::Int,
       0,
       0,
       1 << 24,
       false,
       {},
       "always keep the chunks covering the last N prompt tokens (from the budget; omlx uses 512)"},
      {"prefix_tokens",
       K::Int,
       0,
       0,
       1 << 24,
       false,
       {},
       "first S prompt tokens are a cached prefix (prefilled untimed on draft and target); only "
       "the suffix is scored and sparse-prefilled, at positions offset by S"},
      {"threshold",
       K::Int,
       8192,
       0,
       1 << 24,
       false,
       {},
       "below this many suffix tokens fall back to full prefill (unless force)"},
      {"force", K::Bool, false, 0, 0, false, {}, "apply the method below the threshold too"},
  };
}

namespace {

struct Captured {
  int n_layer = 0, qdim = 0;
  std::vector<std::vector<float>> q;  // (layer) -> [A][qdim]
  void add(int layer, const float* row) {
    q[size_t(layer)].insert(q[size_t(layer)].end(), row, row + qdim);
  }
};

}  // namespace

Outcome SpecPrefillMethod::run(const Engine& e, const Request& r, const nlohmann::json& p) const {
  const Model& target = *e.target;
  const Model& draft = e.model("draft");
  if (draft.config().n_vocab != target.config().n_vocab)
    throw std::invalid_argument("specprefill: draft and target vocabularies differ (" +
                                std::to_string(draft.config().n_vocab) + " vs " +
                                std::to_string(target.config().n_vocab) + ")");
  const size_t M = r.prompt.size();
  const size_t S = p["prefix_tokens"].get<size_t>();
  if (S >= M)
    throw std::invalid_argument("specprefill: prefix_tokens (" + std::to_string(S) +
                                ") must be shorter than the prompt (" + std::to_string(M) + ")");
  const size_t n = M - S;
  const int A = p["lookahead"];
  const std::string mode = p["lookahead_mode"];
  const std::span<const int32_t> prompt(r.prompt);

  // The cached prefix is set up before the clock starts, as a prefix-cache hit would be.
  KVCache tcache = e.make_target_cache();
  KVCache dcache = draft.make_cache(KVDType::F32);  // scoring reads the draft's keys as f32
  if (S > 0) {
    prefill(target, prompt.first(S), iota_positions(0, S), tcache, e.prefill_chunk);
    prefill(draft, prompt.first(S), iota_positions(0, S), dcache, e.prefill_chunk);
  }
  PhaseTimer timer;
  Outcome out;
  out.stats["prefix_tokens"] = S;

  const auto suffix = prompt.subspan(S);
  const auto suffix_pos = iota_positions(int32_t(S), n);
  auto full_prefill = [&](const std::string& reason) {
    out.stats["fallback"] = reason;
    tcache.trim(tcache.size() - S);
    tcache.reserve(M + size_t(r.max_new_tokens));  // one allocation, as the baseline does
    std::vector<float> last = prefill(target, suffix, suffix_pos, tcache, e.prefill_chunk);
    timer.lap("prefill");
    out.kept_tokens = M;
    return last;
  };

  std::vector<float> last;
  if (n < size_t(p["threshold"].get<int64_t>()) && !p["force"].get<bool>()) {
    last = full_prefill("below_threshold");
  } else {
    const int L = draft.config().n_layer, qdim = draft.config().q_dim();
    Captured cap{L, qdim, std::vector<std::vector<float>>(size_t(L))};
    // Draft prefill; capture the last prompt token's query (reference) or the tail's (tail).
    const int32_t first_captured = mode == "reference" ? int32_t(M) - 1
                                   : mode == "tail" ? int32_t(M) - std::min<int32_t>(A, int32_t(n))
                                                    : int32_t(M);
    // Sized once up front: growing by doubling copies the cache at every power of two, which
    // would charge the method for the engine's allocator rather than its algorithm.
    dcache.reserve(M + size_t(A));
    size_t chunk_start = 0;
    ForwardHooks hooks;
    hooks.on_query = [&](int layer, const float* q, size_t rows, size_t ld) {
      for (size_t i = 0; i < rows; ++i) {
        const int32_t pos = suffix_pos[chunk_start + i];
        if (pos >= first_captured) cap.add(layer, q + i * ld);
      }
    };
    std::vector<float> dlogits;
    for (size_t s0 = 0; s0 < n; s0 += e.prefill_chunk) {
      const size_t len = std::min(e.prefill_chunk, n - s0);
      chunk_start = s0;
      const int32_t row = int32_t(len - 1);
      dlogits = draft.forward(suffix.subspan(s0, len), std::span(suffix_pos).subspan(s0, len),
                              dcache, {&row, 1}, &hooks);
    }
    timer.lap("draft_prefill");
    // Lookahead: greedy draft decode steps, each capturing the new token's query.
    const int steps = mode == "reference" ? A - 1 : mode == "decode" ? A : 0;
    ForwardHooks step_hooks;
    step_hooks.on_query = [&](int layer, const float* q, size_t, size_t) { cap.add(layer, q); };
    for (int i = 0; i < steps; ++i) {
      const int32_t tok = argmax(dlogits), pos = int32_t(M) + i, row = 0;
      dlogits = draft.forward({&tok, 1}, {&pos, 1}, dcache, {&row, 1}, &step_hooks);
    }
    timer.lap("lookahead");
    // Score the suffix keys (cache rows S..S+n-1) with every captured query.
    const int n_queries = int(cap.q[0].size()) / qdim;
    std::vector<specprefill::LayerQK> layers;
    for (int l = 0; l < L; ++l)
      layers.push_back({cap.q[size_t(l)].data(), size_t(qdim),
                        dcache.f32_keys(l) + S * size_t(draft.config().kv_dim()),
                        size_t(draft.config().kv_dim())});
    specprefill::DraftShape shape{draft.config().n_head,
                                  draft.config().n_head_kv,
                                  draft.config().head_dim,
                                  n_queries,
                                  n,
                                  attention_scale(draft.config())};
    specprefill::ScoringOptions so;
    so.pool_kernel = p["pool_kernel"];
    so.pool_edge = p["pool_edges"] == "renormalize" ? PoolEdge::Renormalize : PoolEdge::ZeroPad;
    so.order = p["aggregation"] == "max_mean_pool" ? specprefill::AggregationOrder::MaxMeanPool
                                                   : specprefill::AggregationOrder::PoolMaxMean;
    const std::vector<float> imp = specprefill::token_importance(layers, shape, so);
    out.stats["draft_kv_bytes"] = dcache.bytes();
    dcache.release();  // the draft's cache is freed before the target prefill
    timer.lap("score");
    specprefill::SelectOptions sel_opt;
    sel_opt.force_tail_tokens = p["force_tail_tokens"];
    sel_opt.keep_rounding = p["keep_rounding"] == "floor_min1"
                                ? specprefill::KeepRounding::FloorMin1
                                : specprefill::KeepRounding::Ceil;
    const specprefill::Selection sel = specprefill::select_chunks_after_prefix(
        imp.data(), n, S, p["chunk"], p["keep"].get<double>(), sel_opt);
    std::vector<int32_t> kept_tokens;
    kept_tokens.reserve(sel.kept_positions.size());
    for (int32_t pos : sel.kept_positions) kept_tokens.push_back(r.prompt[size_t(pos)]);
    timer.lap("select");
    // Sparse prefill: kept tokens at their original positions (cache sized for them and the
    // decode only, so its memory reflects the selection).
    tcache.reserve(S + kept_tokens.size() + size_t(r.max_new_tokens));
    last = prefill(target, kept_tokens, sel.kept_positions, tcache, e.prefill_chunk);
    timer.lap("prefill");
    out.kept_tokens = S + kept_tokens.size();
    out.stats["lookahead_queries"] = n_queries;
    out.stats["n_chunks"] = sel.n_chunks;
    out.stats["kept_chunks"] = sel.kept_chunks;
    out.stats["forced_chunks"] = sel.forced_chunks;
    out.stats["tail_exceeded_budget"] = sel.tail_exceeded_budget;
    out.stats["keep_ratio"] = double(kept_tokens.size()) / double(n);
  }
  // Decoding continues at the full prompt length M while the cache holds S + K entries.
  finish_with_greedy_decode(e, r, tcache, std::move(last), int32_t(M), timer, out);
  return out;
}

}  // namespace accel
