// Agreement metrics (agreement.h). Double precision throughout: the KL of two nearly equal
// distributions is a small difference of large terms, so float would report rounding noise.
// Top-1 uses the engine's own argmax so that "agrees" means "greedy decoding would pick the same".
#include "suites/agreement.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "kernels/elementwise.h"
#include "models/generation.h"

namespace accel {

double kl_divergence(std::span<const float> p, std::span<const float> q) {
  if (p.size() != q.size() || p.empty())
    throw std::invalid_argument("kl_divergence: rows of " + std::to_string(p.size()) + " and " +
                                std::to_string(q.size()) + " logits");
  const double lp = log_sum_exp(p.data(), p.size()), lq = log_sum_exp(q.data(), q.size());
  double kl = 0;
  for (size_t i = 0; i < p.size(); ++i) {
    const double log_p = double(p[i]) - lp;
    if (log_p == -INFINITY) continue;  // 0 * log(0 / q) = 0
    kl += std::exp(log_p) * (log_p - (double(q[i]) - lq));
  }
  return std::max(kl, 0.0);  // rounding can leave -1e-17 for identical rows
}

Agreement agreement(const std::vector<std::vector<float>>& reference,
                    const std::vector<std::vector<float>>& method) {
  if (reference.empty() || method.empty())
    throw std::invalid_argument("agreement: no logits to compare (reference " +
                                std::to_string(reference.size()) + " rows, method " +
                                std::to_string(method.size()) + ")");
  Agreement a;
  a.steps = int(std::min(reference.size(), method.size()));
  double kl_sum = 0, agree = 0;
  for (int t = 0; t < a.steps; ++t) {
    const auto& r = reference[size_t(t)];
    const auto& m = method[size_t(t)];
    const double kl = kl_divergence(r, m);
    kl_sum += kl;
    a.kl_max = std::max(a.kl_max, kl);
    const double same = argmax(r) == argmax(m) ? 1 : 0;
    if (t == 0) a.first_token = same;
    agree += same;
  }
  a.top1 = agree / a.steps;
  a.kl_mean = kl_sum / a.steps;
  return a;
}

std::vector<ParamSpec> AgreementSuite::params() const {
  return {{"steps",
           ParamSpec::Kind::Int,
           16,
           1,
           4096,
           false,
           {},
           "decode steps compared (row 0 is the prompt's last position)"}};
}

std::vector<MetricSpec> AgreementSuite::metrics() const {
  return {{"agreement.first_token", true, Aggregation::Mean, "same first token as the reference"},
          {"agreement.top1", true, Aggregation::Mean, "fraction of steps with the same argmax"},
          {"agreement.kl_mean", false, Aggregation::Mean, "mean KL(reference || method), nats"},
          {"agreement.kl_max", false, Aggregation::Max, "largest per-step KL, nats"}};
}

ReferenceNeed AgreementSuite::reference_need(const nlohmann::json& params) const {
  return {ReferenceNeed::Kind::ForcedLogits, params.at("steps").get<int>()};
}

Scores AgreementSuite::score(const Sample&, const Generation& out, const Generation* reference,
                             const SuiteContext&, const nlohmann::json&) const {
  if (!reference) return {};  // the reference method itself
  const Agreement a = agreement(reference->logits, out.logits);
  return {{"agreement.first_token", a.first_token},
          {"agreement.top1", a.top1},
          {"agreement.kl_mean", a.kl_mean},
          {"agreement.kl_max", a.kl_max}};
}

}  // namespace accel
