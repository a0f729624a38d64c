// The baseline method: full chunked prefill of the prompt on the target, then greedy decoding.
// Every speedup is measured against it; its phases are `prefill`, `first_token`, `decode`.
#pragma once
#include "methods/method.h"

namespace accel {

class BaselineMethod : public Method {
 public:
  std::string name() const override { return "baseline"; }
  std::string summary() const override {
    return "full chunked prefill on the target, then greedy decoding (the reference for speedups)";
  }
  Outcome run(const Engine& e, const Request& r, const nlohmann::json& params) const override;
};

// Greedy decode shared by methods once the target's cache holds the (possibly sparse) prompt:
// takes the last prompt logits, times `first_token` and `decode` on `timer`, fills the outcome.
class PhaseTimer;
void finish_with_greedy_decode(const Engine& e, const Request& r, KVCache& cache,
                               std::vector<float> last_logits, int32_t next_pos, PhaseTimer& timer,
                               Outcome& out);

}  // namespace accel
