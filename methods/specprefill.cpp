// SpecPrefillMethod::run (see specprefill.h). Phases: [prefix] [draft_tokenize] draft_prefill,
// lookahead, score, select, [retokenize] prefill (target, sparse), first_token, decode. The only
// fallback is the declared one (below_threshold: a full prefill, recorded in the stats); any error
// fails the request.
#include "methods/specprefill.h"

#include <cmath>
#include <cstring>
#include <memory>
#include <optional>

#include "methods/baseline.h"
#include "methods/phase_timer.h"
#include "methods/specprefill_config.h"
#include "methods/specprefill_pflash.h"
#include "methods/specprefill_scoring.h"
#include "methods/specprefill_tokenizers.h"
#include "methods/state_drift.h"
#include "methods/ttft_flops.h"
#include "models/generation.h"
#include "models/tokenizer.h"

namespace accel {

std::vector<ParamSpec> SpecPrefillMethod::params() const {
  return specprefill::param_specs();
}

namespace {

struct Captured {
  int n_layer = 0, qdim = 0;
  std::vector<std::vector<float>> q;  // (layer) -> [A][qdim]
  std::vector<int32_t> pos;           // the position of each captured query (recorded at pos_layer)
  int pos_layer = 0;  // the first attention layer (hybrids' other layers have no query)
  void add(int layer, const float* row, int32_t position) {
    q[size_t(layer)].insert(q[size_t(layer)].end(), row, row + qdim);
    if (layer == pos_layer) pos.push_back(position);
  }
};

// Tokenizers of target and draft when they differ (the draft scores its own tokenization of the
// prompt text); built before the clock starts, as loading a model is.
struct CrossTokenizer {
  std::shared_ptr<const Tokenizer> target, draft;
};

// The draft's tokenizer against the target's (specprefill_tokenizers.h): nullopt when they are the
// same (token ids are shared); the pair to re-tokenize with when they differ, which only
// positions=contiguous without a cached prefix can use. Records the outcome in `stats`.
std::optional<CrossTokenizer> cross_tokenizer(const Engine& e, const Model& draft,
                                              const specprefill::Config& cfg,
                                              nlohmann::json& stats) {
  const Model& target = *e.target;
  const specprefill::TokenizerCheck check =
      specprefill::check_tokenizers(target, draft, e.digest("target"), e.digest("draft"));
  stats["tokenizer_check_cached"] = check.cached;
  stats["draft_tokenizer"] = check.pair->same ? "shared" : "retokenized";
  if (check.pair->same) return std::nullopt;
  const std::string files = "draft '" + draft.path() + "' and target '" + target.path() + "'";
  if (cfg.positions != specprefill::Positions::Contiguous || cfg.prefix_tokens > 0)
    throw std::invalid_argument(
        "specprefill: " + files + " have different tokenizers (" + check.pair->difference +
        "); their token ids cannot be shared, which positions=original and a cached prefix need: "
        "use positions=contiguous and prefix_tokens=0 (kept text is re-tokenized)");
  if (!check.pair->target || !check.pair->draft)
    throw std::invalid_argument("specprefill: " + files + ": cannot re-tokenize (" +
                                check.pair->difference + ")");
  return CrossTokenizer{check.pair->target, check.pair->draft};
}

}  // namespace

Outcome SpecPrefillMethod::run(const Engine& e, const Request& r, const nlohmann::json& p) const {
  using namespace specprefill;
  const Model& target = *e.target;
  const Model& draft = e.model("draft");
  const Config cfg = resolve_config(p);
  const size_t M = r.prompt.size();
  const size_t S = cfg.prefix_tokens;
  if (S >= M)
    throw std::invalid_argument("specprefill: prefix_tokens (" + std::to_string(S) +
                                ") must be shorter than the prompt (" + std::to_string(M) + ")");
  const size_t n = M - S;
  const int A = cfg.lookahead;
  const bool contiguous = cfg.positions == Positions::Contiguous;
  const std::span<const int32_t> prompt(r.prompt);

  // Another tokenizer: only the text can cross (methods.md §1.3, Cross-Family SpecPrefill).
  Outcome out;
  const std::optional<CrossTokenizer> cross = cross_tokenizer(e, draft, cfg, out.stats);
  std::vector<int32_t> draft_prompt_ids;

  // The drift's reference (a full prefill of the whole prompt) runs before the clock and before
  // the method's caches exist, so neither its time nor its memory is the method's.
  std::optional<ReferenceStates> drift_ref;
  if (cfg.state_drift) drift_ref = full_prefill_states(target, prompt, e.kv_dtype, e.prefill_chunk);
  // The cached prefix is set up before the clock starts, as a prefix-cache hit would be.
  KVCache tcache = e.make_target_cache();
  KVCache dcache = draft.make_cache(KVDType::F32);  // scoring reads the draft's keys as f32
  if (S > 0) {
    prefill(target, prompt.first(S), iota_positions(0, S), tcache, e.prefill_chunk);
    prefill(draft, prompt.first(S), iota_positions(0, S), dcache, e.prefill_chunk);
  }
  // The prompt text a cross-tokenizer draft starts from (untimed: the text is what a server has).
  const std::string prompt_text = cross ? cross->target->decode(prompt) : std::string();
  PhaseTimer timer;
  out.stats["prefix_tokens"] = S;
  out.stats["config"] = cfg.to_json();

  const auto suffix = prompt.subspan(S);
  const auto suffix_pos = iota_positions(int32_t(S), n);
  auto full_prefill = [&](const std::string& reason) {
    out.stats["fallback"] = reason;
    tcache.trim(tcache.size() - S);
    tcache.reserve(M + size_t(r.max_new_tokens));  // one allocation, as the baseline does
    std::vector<float> last = prefill(target, suffix, suffix_pos, tcache, e.prefill_chunk);
    timer.lap("prefill");
    out.kept_tokens = M;
    out.stats["ttft_flops"] = forward_flops(target.config(), double(n), double(S), 1);
    return last;
  };

  std::vector<float> last;
  int32_t next_pos = int32_t(M);
  if (n < size_t(cfg.threshold) && !cfg.force) {
    last = full_prefill("below_threshold");
  } else {
    // The draft's own view of the suffix: the prompt's ids, or its tokenization of the text.
    if (cross) {
      draft_prompt_ids = cross->draft->encode(prompt_text, /*add_special=*/true, false);
      timer.lap("draft_tokenize");
      if (draft_prompt_ids.empty())
        throw std::invalid_argument("specprefill: the draft's tokenization of the prompt is empty");
    }
    const std::span<const int32_t> dsuffix =
        cross ? std::span<const int32_t>(draft_prompt_ids) : suffix;
    const size_t dn = dsuffix.size(), DM = S + dn;  // draft suffix length, draft prompt length
    const auto dpos = iota_positions(int32_t(S), dn);

    // The scoring layers' geometry (full layers: gemma4's sliding layers have another).
    const LayerAttention fa = full_layer_attention(draft.config());
    const int L = draft.config().n_layer, qdim = draft.config().n_head * fa.head_dim;
    const size_t kvd = size_t(fa.n_head_kv) * size_t(fa.head_dim);
    Captured cap{L, qdim, std::vector<std::vector<float>>(size_t(L)), {}};
    while (cap.pos_layer + 1 < L && !is_attention_layer(draft.config(), cap.pos_layer))
      ++cap.pos_layer;
    // Draft prefill; capture the last prompt token's query (reference) or the tail's (tail).
    const int32_t first_captured = cfg.lookahead_mode == LookaheadMode::Reference ? int32_t(DM) - 1
                                   : cfg.lookahead_mode == LookaheadMode::Tail
                                       ? int32_t(DM) - std::min<int32_t>(A, int32_t(dn))
                                       : int32_t(DM);
    // Sized once up front: growing by doubling copies the cache at every power of two, which
    // would charge the method for the engine's allocator rather than its algorithm.
    dcache.reserve(DM + size_t(A));
    size_t chunk_start = 0;
    ForwardHooks hooks;
    hooks.on_query = [&](int layer, const float* q, size_t rows, size_t ld) {
      for (size_t i = 0; i < rows; ++i) {
        const int32_t pos = dpos[chunk_start + i];
        if (pos >= first_captured) cap.add(layer, q + i * ld, pos);
      }
    };
    std::vector<float> dlogits;
    for (size_t s0 = 0; s0 < dn; s0 += e.prefill_chunk) {
      const size_t len = std::min(e.prefill_chunk, dn - s0);
      chunk_start = s0;
      const int32_t row = int32_t(len - 1);
      dlogits = draft.forward(dsuffix.subspan(s0, len), std::span(dpos).subspan(s0, len), dcache,
                              {&row, 1}, &hooks);
    }
    timer.lap("draft_prefill");
    // Lookahead: greedy draft decode steps, each capturing the new token's query.
    const int steps = cfg.lookahead_mode == LookaheadMode::Reference ? A - 1
                      : cfg.lookahead_mode == LookaheadMode::Decode  ? A
                                                                     : 0;
    for (int i = 0; i < steps; ++i) {
      const int32_t tok = argmax(dlogits), pos = int32_t(DM) + i, row = 0;
      ForwardHooks step_hooks;
      step_hooks.on_query = [&](int layer, const float* q, size_t, size_t) {
        cap.add(layer, q, pos);
      };
      dlogits = draft.forward({&tok, 1}, {&pos, 1}, dcache, {&row, 1}, &step_hooks);
    }
    timer.lap("lookahead");
    // Score the suffix keys (cache rows S..S+dn-1) with every captured query; pre-RoPE rows are
    // recovered by rotating copies back (the cache keeps the post-RoPE keys it attends with).
    // Only full-attention layers score: a sliding layer's ring no longer holds the keys before
    // its window (the ports' rule: a layer whose cache is shorter than the prompt is skipped).
    // A ring has no f32 row view, so a sliding layer is skipped even when its window spans the
    // whole prompt (shorter prompts than any window the seeds' models use).
    const int n_queries = int(cap.pos.size());
    std::vector<std::vector<float>> pre_keys(cfg.pre_rope ? size_t(L) : 0);
    std::vector<LayerQK> layers;
    for (int l = 0; l < L; ++l) {
      // Hybrids' recurrent layers keep a state, not keys (nemotron_h's FFN blocks nothing): only
      // attention layers score.
      if (dcache.window(l) > 0 || !dcache.has_kv(l)) continue;
      const float* k = dcache.f32_keys(l) + S * kvd;
      float* q = cap.q[size_t(l)].data();
      // nemotron_h has no RoPE: its keys and queries are pre-RoPE as they are.
      if (cfg.pre_rope && !is_nemotron_h_arch(draft.config().arch)) {
        unrotate_rope(q, size_t(n_queries), size_t(qdim), draft.config().n_head, cap.pos.data(),
                      draft.config().rope);
        pre_keys[size_t(l)].assign(k, k + dn * kvd);
        unrotate_rope(pre_keys[size_t(l)].data(), dn, kvd, fa.n_head_kv, dpos.data(),
                      draft.config().rope);
        k = pre_keys[size_t(l)].data();
      }
      layers.push_back({q, size_t(qdim), k, kvd});
    }
    out.stats["scoring_layers"] = layers.size();
    if (layers.empty())
      throw std::invalid_argument(
          "specprefill: the draft (" + e.file("draft") +
          ") has no full-attention layer to score with: every layer slides or is recurrent");
    DraftShape shape{draft.config().n_head,          fa.n_head_kv, fa.head_dim, n_queries, dn,
                     attention_scale(draft.config())};
    const std::vector<float> imp = token_importance(layers, shape, cfg.scoring);
    out.stats["draft_kv_bytes"] = dcache.bytes();
    pre_keys.clear();
    dcache.release();  // the draft's cache is freed before the target prefill
    timer.lap("score");
    SelectOptions sel_opt = cfg.select;
    if (cfg.anchor_ngram > 0)
      sel_opt.anchor_chunks = ngram_anchor_chunks(dsuffix, cfg.chunk, cfg.anchor_ngram, A);
    const Selection sel =
        select_chunks_after_prefix(imp.data(), dn, S, cfg.chunk, cfg.keep, sel_opt);
    std::vector<int32_t> kept_tokens;
    kept_tokens.reserve(sel.kept_positions.size());
    for (int32_t pos : sel.kept_positions)
      kept_tokens.push_back(cross ? draft_prompt_ids[size_t(pos)] : r.prompt[size_t(pos)]);
    timer.lap("select");
    if (cross) {
      // The kept draft tokens decoded in one call (spans joined as they stand) and encoded by
      // the target, with its own BOS if its tokenizer adds one.
      out.stats["draft_prompt_tokens"] = dn;
      out.stats["draft_kept_tokens"] = kept_tokens.size();
      kept_tokens = retokenize(*cross->draft, *cross->target, kept_tokens, /*add_special=*/true);
      out.stats["target_kept_tokens"] = kept_tokens.size();
      timer.lap("retokenize");
      if (kept_tokens.empty())
        throw std::invalid_argument("specprefill: the re-tokenized kept text is empty");
    }
    // Sparse prefill: kept tokens at their original positions, or as a new prompt after the
    // prefix (contiguous). The cache is sized for them and the decode only, so its memory
    // reflects the selection.
    const std::vector<int32_t> kept_pos =
        contiguous ? iota_positions(int32_t(S), kept_tokens.size()) : sel.kept_positions;
    tcache.reserve(S + kept_tokens.size() + size_t(r.max_new_tokens));
    last = prefill(target, kept_tokens, kept_pos, tcache, e.prefill_chunk);
    timer.lap("prefill");
    if (contiguous) next_pos = int32_t(S + kept_tokens.size());
    out.kept_tokens = S + kept_tokens.size();
    out.stats["lookahead_queries"] = n_queries;
    out.stats["n_chunks"] = sel.n_chunks;
    out.stats["kept_chunks"] = sel.kept_chunks;
    out.stats["forced_chunks"] = sel.forced_chunks;
    out.stats["forced_head_chunks"] = sel.head_chunks;
    out.stats["forced_tail_chunks"] = sel.tail_chunks;
    out.stats["anchor_candidates"] = sel_opt.anchor_chunks.size();
    out.stats["anchor_chunks"] = sel.anchor_chunks;
    out.stats["tail_exceeded_budget"] = sel.tail_exceeded_budget;
    out.stats["keep_ratio"] = double(sel.kept_positions.size()) / double(dn);
    // Draft prefill of the suffix (one logits row), its lookahead steps, the target's prefill of
    // the kept tokens after the cached prefix. Scoring and selection are not matrix work.
    double flops = forward_flops(draft.config(), double(dn), double(S), 1) +
                   forward_flops(target.config(), double(kept_tokens.size()), double(S), 1);
    for (int i = 0; i < steps; ++i) flops += forward_flops(draft.config(), 1, double(DM + i), 1);
    out.stats["ttft_flops"] = flops;
  }
  if (drift_ref)
    timer.untimed([&] { out.stats["state_drift"] = state_drift_json(tcache, *drift_ref); });
  // Original positions: decoding continues at the full prompt length M while the cache holds
  // S + K entries. Contiguous: the kept tokens were the prompt, so decoding continues at S + K.
  finish_with_greedy_decode(e, r, tcache, std::move(last), next_pos, timer, out);
  return out;
}

}  // namespace accel
