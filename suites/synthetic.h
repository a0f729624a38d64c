// The `synthetic` suite: seeded prompts of an exact token length for timing methods without a
// real task. No metrics: its samples have no answer to score.
#pragma once
#include "suites/suite.h"

namespace accel {

class SyntheticSuite : public Suite {
 public:
  std::string name() const override { return "synthetic"; }
  std::string version() const override { return "1"; }
  std::string summary() const override {
    return "seeded uniform token prompts of an exact length (BOS first); timing only, no metrics";
  }
  std::vector<MetricSpec> metrics() const override { return {}; }
  Sample make_sample(int context_len, int index, uint64_t seed, const SuiteContext& ctx,
                     const nlohmann::json& params) const override;
  Scores score(const Sample&, const Generation&, const Generation*, const SuiteContext&,
               const nlohmann::json&) const override {
    return {};
  }
};

}  // namespace accel
