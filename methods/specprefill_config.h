// SpecPrefill's parameters (ParamSpec declarations, help text) and the effective configuration
// after the preset fills every switch left at "preset" (canonical = the reference, methods.md
// §1.7; pflash = the LB pflash column of §1.3). Owns naming and resolution only: no model,
// scoring or timing here.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "methods/specprefill_scoring.h"
#include "models/param_spec.h"

namespace accel::specprefill {

enum class LookaheadMode { Reference, Decode, Tail };
enum class Positions { Original, Contiguous };

struct Config {
  std::string preset;  // "canonical" or "pflash"
  double keep = 0.2;
  int chunk = 32;
  int lookahead = 8;
  LookaheadMode lookahead_mode = LookaheadMode::Reference;
  bool tail_causal = false;  // tail mode: causal mask inside the tail
  bool pre_rope = false;     // score with pre-RoPE q/k
  ScoringOptions scoring;    // pool kernel, edges, aggregation order, causal tail
  SelectOptions select;      // rounding, forced tail tokens, head/tail chunks (anchors: per run)
  int anchor_ngram = 0;      // 0 = no anchors
  Positions positions = Positions::Original;
  size_t prefix_tokens = 0;
  int64_t threshold = 8192;
  bool force = false;
  bool state_drift = false;  // measure recurrent layers' drift (state_drift.h), untimed

  // Every switch by name as resolved (for Outcome::stats, so a row says what actually ran).
  nlohmann::json to_json() const;
};

std::vector<ParamSpec> param_specs();
// `p` must already be resolved against param_specs() (resolve_params does this).
Config resolve_config(const nlohmann::json& p);

}  // namespace accel::specprefill
