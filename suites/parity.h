// The greedy-parity suite: prompts of the seed study's classes (prompt_classes.h), each method's
// tokens compared token for token with the reference method's greedy tokens on the same request.
// Owns the comparison and its metrics only; the cross-method matrix is a report (parity_table.cpp).
#pragma once
#include <cstdint>
#include <span>
#include <vector>

#include "suites/suite.h"

namespace accel {

// Token-for-token comparison of a method's output with the reference's.
struct ParityResult {
  bool exact = false;        // same length and the same token at every position
  int first_divergence = 0;  // first index where they differ (a shorter one "differs" where it
                             // ends); the common length when exact
  double matching_prefix_frac = 1;  // first_divergence / max(lengths); 1 when both are empty
  int32_t ref_token = -1;           // the tokens at first_divergence (-1 when exact, or when that
  int32_t method_token = -1;        // sequence has already ended there)
};

ParityResult compare_tokens(std::span<const int32_t> reference, std::span<const int32_t> method);

// Params: prompt_class (passage | json_rag | code | essay | random_tokens | mixed: the text
// classes in turn by sample index), data (text file or directory for essay). Sample ids are
// "<class>-<index>". Metrics: parity.exact (mean), parity.first_divergence (min),
// parity.matching_prefix_frac (mean), parity.ref_token_at_divergence and
// parity.method_token_at_divergence (per sample; -1 when exact).
class ParitySuite : public Suite {
 public:
  std::string name() const override { return "parity"; }
  std::string version() const override { return "1"; }
  std::string summary() const override {
    return "seed-study prompt classes; token-exact greedy parity with the reference method, "
           "first divergent position and the two tokens there";
  }
  std::vector<ParamSpec> params() const override;
  std::vector<MetricSpec> metrics() const override;
  Sample make_sample(int context_len, int index, uint64_t seed, const SuiteContext& ctx,
                     const nlohmann::json& params) const override;
  ReferenceNeed reference_need(const nlohmann::json&) const override {
    return {ReferenceNeed::Kind::Tokens, 0};
  }
  Scores score(const Sample& s, const Generation& out, const Generation* reference,
               const SuiteContext& ctx, const nlohmann::json& params) const override;
};

}  // namespace accel
