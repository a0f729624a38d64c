// KV Prediction (specs/methods.md §2, inference path §2.5 and §2.9): an auxiliary model prefills
// prompt tokens 0..N-2; per base layer i a fitted linear map predicts the target's pre-RoPE K and V
// from the auxiliary's layer j_i; the target's k-norm (qwen3) and RoPE at the original positions
// are applied and the rows written into the target's cache; the target then runs only the last
// prompt token on the predicted cache and decodes normally. Phases: aux_prefill, predict,
// base_step, first_token, decode. The predictor file and the layer maps are in kvpred_predictor.h,
// the fit (`accelbench kvpred fit`) in kvpred_fit.h.
#pragma once
#include <cstddef>

#include "methods/method.h"

namespace accel {

class KVPredMethod : public Method {
 public:
  std::string name() const override { return "kvpred"; }
  std::string summary() const override {
    return "KV Prediction: an auxiliary prefills the prompt, fitted linear maps predict the "
           "target's KV cache from it, the target runs only the last prompt token";
  }
  std::vector<InputSpec> inputs() const override {
    return {{"target", InputSpec::Kind::Model, "the base model being accelerated"},
            {"aux", InputSpec::Kind::Model,
             "auxiliary model that prefills the prompt (a smaller model or a layer-pruned target, "
             "`models make-aux`); shares the target's vocabulary"},
            {"predictor", InputSpec::Kind::File,
             "per-layer linear maps aux KV -> target KV (GGUF from `accelbench kvpred fit`)"}};
  }
  Outcome run(const Engine& e, const Request& r, const nlohmann::json& params) const override;
};

// Analytic TTFT FLOPs of KV Prediction for an N-token prompt, counted as the cost model counts
// them (reports/cost_model.cpp: 2 x multiply-adds of projections, FFN, causal attention pairs and
// the output head): the auxiliary's prefill of N-1 tokens (no output head: its logits are not
// used), the maps (2 (N-1) d_a d_b per base layer for K and for V, biases ignored), and one target
// step at context N; `baseline` is the target's full prefill of N tokens.
struct KVPredFlops {
  double aux_prefill = 0, predict = 0, base_step = 0, baseline = 0;
  double total() const { return aux_prefill + predict + base_step; }
  double ratio() const { return total() / baseline; }
};
KVPredFlops kvpred_ttft_flops(const ModelConfig& target, const ModelConfig& aux, size_t n_prompt);

}  // namespace accel
