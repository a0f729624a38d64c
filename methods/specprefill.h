// SpecPrefill: a draft model scores which prompt tokens matter (attention of its lookahead queries
// over the prompt keys), and the target prefills only the kept chunks at their original positions;
// decoding then continues at the full prompt length. Canonical mode follows the reference
// implementation (specs/methods.md §1.7); variants are parameters recorded with every result, and
// preset=pflash switches them all to Luce PFlash (§1.3), incl. contiguous positions.
// Orchestration only: the math lives in specprefill_scoring.*, the forward pass in models/.
#pragma once
#include "methods/method.h"

namespace accel {

class SpecPrefillMethod : public Method {
 public:
  std::string name() const override { return "specprefill"; }
  std::string summary() const override {
    return "draft-scored sparse prefill: keep the top chunks by draft attention, prefill them at "
           "their original positions and decode at the full prompt length (canonical), or as a "
           "new contiguous prompt (preset=pflash)";
  }
  std::vector<ParamSpec> params() const override;
  std::vector<InputSpec> inputs() const override {
    return {
        {"target", InputSpec::Kind::Model, "the model being accelerated"},
        {"draft", InputSpec::Kind::Model,
         "scores prompt tokens; shares the target's token ids only when its tokenizer equals the "
         "target's in full (pieces, scores, types, merges, special ids); another tokenizer needs "
         "positions=contiguous (the kept text is re-tokenized)"}};
  }
  std::vector<std::string> fallback_reasons() const override { return {"below_threshold"}; }
  Outcome run(const Engine& e, const Request& r, const nlohmann::json& params) const override;
};

}  // namespace accel
