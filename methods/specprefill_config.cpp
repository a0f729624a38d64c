// SpecPrefill parameters and preset resolution (see specprefill_config.h).
#include "methods/specprefill_config.h"

#include <stdexcept>

namespace accel::specprefill {

namespace {

// A Choice switch: "preset" (follow the preset) or one of its values.
ParamSpec choice(std::string name, std::vector<std::string> values, std::string help) {
  values.insert(values.begin(), "preset");
  return {std::move(name), ParamSpec::Kind::Choice, "preset",       0, 0,
          false,           std::move(values),       std::move(help)};
}
// An Int switch: -1 follows the preset.
ParamSpec int_switch(std::string name, double max, std::string help) {
  return {std::move(name), ParamSpec::Kind::Int, -1, -1, max, false, {}, std::move(help)};
}

// The value of a Choice switch, or the preset's when it says "preset".
std::string pick(const nlohmann::json& p, const char* key, bool pflash, const char* canonical,
                 const char* pflash_value) {
  const std::string v = p[key];
  return v != "preset" ? v : pflash ? pflash_value : canonical;
}
int64_t pick_int(const nlohmann::json& p, const char* key, bool pflash, int64_t canonical,
                 int64_t pflash_value) {
  const int64_t v = p[key];
  return v >= 0 ? v : pflash ? pflash_value : canonical;
}

}  // namespace

std::vector<ParamSpec> param_specs() {
  using K = ParamSpec::Kind;
  return {
      {"keep", K::Float, 0.2, 0, 1, true, {}, "fraction of prompt chunks the target prefills"},
      {"preset",
       K::Choice,
       "canonical",
       0,
       0,
       false,
       {"canonical", "pflash"},
       "fills every switch left at 'preset' (or -1): canonical = the SpecPrefill reference "
       "(methods.md §1.7); pflash = Luce PFlash (§1.3): tail8 causal pre-RoPE queries, "
       "max_mean_pool, renormalized edges, floor rounding, 8 head + 24 tail chunks, 4-gram "
       "anchors, contiguous positions. keep and threshold are not part of the preset"},
      {"chunk", K::Int, 32, 1, 65536, false, {}, "selection chunk size in tokens"},
      {"lookahead", K::Int, 8, 1, 64, false, {}, "lookahead queries per draft layer"},
      choice("lookahead_mode", {"reference", "decode", "tail"},
             "reference (canonical): last prompt token + lookahead-1 greedy draft steps; decode: "
             "lookahead draft steps only (MLX ports); tail (pflash): the last `lookahead` prompt "
             "tokens' queries from the draft prefill, no decoding"),
      choice("tail_mask", {"none", "causal"},
             "tail mode only: causal (pflash) = each tail query sees keys up to its own "
             "position; none (canonical) = every tail query sees all prompt keys"),
      choice("qk_rope", {"post", "pre"},
             "score with post-RoPE (canonical) or pre-RoPE (pflash, 'removes RoPE distance "
             "decay') queries and keys; pre-RoPE rows are recovered by rotating the captured "
             "rows back by their positions (exact up to float rounding)"),
      {"pool_kernel", K::Int, 13, 0, 1023, false, {}, "average-pool kernel (odd; 0 or 1 = off)"},
      choice("pool_edges", {"zero_pad", "renormalize"},
             "zero_pad (canonical): divide by the kernel everywhere; renormalize (pflash): by "
             "the in-range count"),
      choice("aggregation", {"pool_max_mean", "max_mean_pool"},
             "pool_max_mean (canonical): pool, max over layers/heads, mean over queries; "
             "max_mean_pool (pflash): max, mean, then pool"),
      choice("keep_rounding", {"ceil", "floor_min1"},
             "chunks kept = ceil(n*keep) (canonical) or max(1, floor(n*keep)) (pflash)"),
      int_switch("head_chunks", 1 << 20,
                 "always keep the first chunks, from the budget (-1 = preset: 0 canonical, 8 "
                 "pflash); with tail_chunks scaled to half the budget when head+tail >= budget"),
      int_switch("tail_chunks", 1 << 20,
                 "always keep the last chunks, from the budget (-1 = preset: 0 canonical, 24 "
                 "pflash)"),
      int_switch("anchor_ngram", 64,
                 "n-gram anchors (0 = off; -1 = preset: 0 canonical, 4 pflash): chunks holding "
                 "an earlier occurrence of an n-gram of the final `lookahead` tokens take the "
                 "budget after the forced chunks"),
      {"force_tail_tokens",
       K::Int,
       0,
       0,
       1 << 24,
       false,
       {},
       "always keep the chunks covering the last N prompt tokens (from the budget; omlx uses 512)"},
      choice("positions", {"original", "contiguous"},
             "original (canonical): kept tokens at their prompt positions, decode at the full "
             "length; contiguous (pflash): the kept tokens are a new prompt at 0..K-1. A draft "
             "with another vocabulary needs contiguous: its kept spans are detokenized and "
             "re-tokenized by the target"),
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
      {"state_drift",
       K::Bool,
       false,
       0,
       0,
       false,
       {},
       "hybrid targets: record each recurrent layer's state drift (relative L2 distance of the "
       "state after the sparse prefill from the state after a full prefill, which runs untimed "
       "before the clock) as stats.state_drift"},
  };
}

Config resolve_config(const nlohmann::json& p) {
  Config c;
  c.preset = p["preset"];
  const bool pf = c.preset == "pflash";
  c.keep = p["keep"];
  c.chunk = p["chunk"];
  c.lookahead = p["lookahead"];
  const std::string mode = pick(p, "lookahead_mode", pf, "reference", "tail");
  c.lookahead_mode = mode == "reference" ? LookaheadMode::Reference
                     : mode == "decode"  ? LookaheadMode::Decode
                                         : LookaheadMode::Tail;
  c.tail_causal = c.lookahead_mode == LookaheadMode::Tail &&
                  pick(p, "tail_mask", pf, "none", "causal") == "causal";
  c.pre_rope = pick(p, "qk_rope", pf, "post", "pre") == "pre";
  c.scoring.pool_kernel = p["pool_kernel"];
  c.scoring.pool_edge = pick(p, "pool_edges", pf, "zero_pad", "renormalize") == "renormalize"
                            ? PoolEdge::Renormalize
                            : PoolEdge::ZeroPad;
  c.scoring.order = pick(p, "aggregation", pf, "pool_max_mean", "max_mean_pool") == "max_mean_pool"
                        ? AggregationOrder::MaxMeanPool
                        : AggregationOrder::PoolMaxMean;
  c.scoring.causal_tail = c.tail_causal;
  c.select.keep_rounding = pick(p, "keep_rounding", pf, "ceil", "floor_min1") == "floor_min1"
                               ? KeepRounding::FloorMin1
                               : KeepRounding::Ceil;
  c.select.force_tail_tokens = p["force_tail_tokens"];
  c.select.head_chunks = pick_int(p, "head_chunks", pf, 0, 8);
  c.select.tail_chunks = pick_int(p, "tail_chunks", pf, 0, 24);
  c.anchor_ngram = int(pick_int(p, "anchor_ngram", pf, 0, 4));
  c.positions = pick(p, "positions", pf, "original", "contiguous") == "contiguous"
                    ? Positions::Contiguous
                    : Positions::Original;
  c.prefix_tokens = p["prefix_tokens"];
  c.threshold = p["threshold"];
  c.force = p["force"];
  c.state_drift = p["state_drift"];
  return c;
}

nlohmann::json Config::to_json() const {
  static const char* modes[] = {"reference", "decode", "tail"};
  return {
      {"preset", preset},
      {"lookahead_mode", modes[int(lookahead_mode)]},
      {"tail_mask", tail_causal ? "causal" : "none"},
      {"qk_rope", pre_rope ? "pre" : "post"},
      {"pool_edges", scoring.pool_edge == PoolEdge::Renormalize ? "renormalize" : "zero_pad"},
      {"aggregation",
       scoring.order == AggregationOrder::MaxMeanPool ? "max_mean_pool" : "pool_max_mean"},
      {"keep_rounding", select.keep_rounding == KeepRounding::FloorMin1 ? "floor_min1" : "ceil"},
      {"head_chunks", select.head_chunks},
      {"tail_chunks", select.tail_chunks},
      {"anchor_ngram", anchor_ngram},
      {"positions", positions == Positions::Contiguous ? "contiguous" : "original"}};
}

}  // namespace accel::specprefill
