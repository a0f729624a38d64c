// Prompt Lookup Decoding (specs/methods.md §3): chunked prefill of the prompt on the target, then
// loop: draft from the context (pld_drafter.h), verify [last committed token + drafts] in one
// target forward, commit the longest agreeing prefix plus the target's own next token, trim the
// rejected entries from the KV cache. Under greedy decoding with batch-invariant kernels the
// output equals the baseline's token for token. Orchestration only: matching is the drafter's.
#pragma once
#include "methods/method.h"
#include "methods/pld_drafter.h"

namespace accel {

class PldMethod : public Method {
 public:
  std::string name() const override { return "pld"; }
  std::string summary() const override {
    return "prompt lookup decoding: n-gram drafts from the context, verified in one target forward "
           "(greedy; output equals the baseline's)";
  }
  std::vector<ParamSpec> params() const override;
  // Teacher forcing leaves nothing to speculate on: step-by-step decode, as the baseline.
  std::vector<std::string> fallback_reasons() const override { return {"forced_tokens"}; }
  Outcome run(const Engine& e, const Request& r, const nlohmann::json& params) const override;
};

// The drafter configuration of resolved parameters: the preset, then every switch that is not
// "preset"/0. n_min above the preset's n_max raises n_max to n_min unless n_max is also given;
// throws std::invalid_argument when the result is out of range.
PldDrafterConfig pld_config(const nlohmann::json& params);

}  // namespace accel
