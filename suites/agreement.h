// Agreement of a method's next-token distributions with the reference method's over the same
// prefixes: the only quality figure that means anything on random-weight models (ARCHITECTURE.md
// "Models"). Pure functions over logit rows, and the `agreement` suite that scores with them over
// synthetic prompts; knows nothing of methods, runs or the store.
#pragma once
#include <span>
#include <vector>

#include "suites/synthetic.h"

namespace accel {

// KL(P || Q) in nats between softmax(p_logits) and softmax(q_logits), computed in double with
// log-sum-exp so that it is exact to rounding for any logit scale. Rows must have equal length.
double kl_divergence(std::span<const float> p_logits, std::span<const float> q_logits);

struct Agreement {
  int steps = 0;           // rows compared: min of the two counts
  double first_token = 0;  // 1 when argmax of row 0 agrees (ties to the lower id), else 0
  double top1 = 0;         // fraction of compared rows whose argmaxes agree
  double kl_mean = 0;      // mean KL(reference || method) over the compared rows, nats
  double kl_max = 0;       // largest per-row KL
};

// reference[t] and method[t] are the logits of decode step t (row 0: the prompt's last position)
// over the same prefix (the method teacher-forced on the reference's tokens). Throws
// std::invalid_argument when either is empty or a pair of rows differ in length.
Agreement agreement(const std::vector<std::vector<float>>& reference,
                    const std::vector<std::vector<float>>& method);

// Synthetic prompts scored by agreement with the reference method over `steps` teacher-forced
// decode steps: agreement.first_token, agreement.top1 (higher is better), agreement.kl_mean and
// agreement.kl_max (nats, lower is better).
class AgreementSuite : public SyntheticSuite {
 public:
  std::string name() const override { return "agreement"; }
  std::string version() const override { return "1"; }
  std::string summary() const override {
    return "synthetic prompts; first-token and top-1 agreement and KL against the reference "
           "method, teacher-forced on its tokens";
  }
  std::vector<ParamSpec> params() const override;
  std::vector<MetricSpec> metrics() const override;
  ReferenceNeed reference_need(const nlohmann::json& params) const override;
  Scores score(const Sample& s, const Generation& out, const Generation* reference,
               const SuiteContext& ctx, const nlohmann::json& params) const override;
};

}  // namespace accel
