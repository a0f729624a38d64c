// The `perplexity` suite: the perplexity of a text's continuation after a method's (possibly
// sparse or quantized) prefill of the text before it, both the method and the reference
// teacher-forced on the text's own tokens, with per-token KL and top-1 agreement against the
// reference. Owns the sample layout and the scoring; knows nothing of methods or the store.
#pragma once
#include <span>
#include <vector>

#include "suites/suite.h"

namespace accel {

// Negative log-likelihood, in nats and double precision, of `target` under softmax(logits).
double token_nll(std::span<const float> logits, int32_t target);

class PerplexitySuite final : public Suite {
 public:
  std::string name() const override { return "perplexity"; }
  std::string version() const override { return "1"; }
  std::string summary() const override;
  std::vector<ParamSpec> params() const override;
  std::vector<MetricSpec> metrics() const override;
  Sample make_sample(int context_len, int index, uint64_t seed, const SuiteContext& ctx,
                     const nlohmann::json& params) const override;
  ReferenceNeed reference_need(const nlohmann::json& params) const override;
  Scores score(const Sample& s, const Generation& out, const Generation* reference,
               const SuiteContext& ctx, const nlohmann::json& params) const override;
};

}  // namespace accel
