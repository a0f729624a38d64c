// Case keys and the resume rule: which stored trials count as a case already done. A timing case's
// key names the code and the CPU it was measured on, so a rerun after a code change or on another
// CPU re-measures it; a quality-only case's key does not, so its scores are reused. Owns no store
// access and no running: the runner hands in what the store holds.
#pragma once
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "harness/plan.h"
#include "results/records.h"

namespace accel {

// What a timing depends on beyond the case's configuration and inputs.
struct TimingConditions {
  std::string code_state;  // results::code_state(): the commit, "<commit>-dirty-<diff digest>"
  std::string cpu_model;
  bool operator<(const TimingConditions& o) const {
    return std::tie(code_state, cpu_model) < std::tie(o.code_state, o.cpu_model);
  }
  bool operator==(const TimingConditions&) const = default;
};
TimingConditions conditions_of(const results::RunInfo& run);

// Quality-only: the plan declares "timings": false (plan.h), so its figures are scores, which do
// not depend on when or where they were computed. Every other case is a timing case.
bool quality_only(const Plan& plan);

// The base key: sha256 of the case config plus the digests of the inputs its method uses, by role
// (stored as "<role>_sha256", so keys of target/draft cases are unchanged by the roles). It is the
// key of a quality-only case, the key every case had before schema v7, and what shards split by
// (so a case's shard never depends on the machine or the commit).
std::string case_key(const Plan& plan, const Case& c,
                     const std::map<std::string, std::string>& input_digests);
// The key of a timing case measured under `conditions`.
std::string timing_case_key(const std::string& base_key, const TimingConditions& conditions);

// Whether a case needs running, decided from the keys the store holds finished trials under.
struct ResumeState {
  bool done = false;
  // Not done here but finished under other conditions, which this run re-measures; says how they
  // differ ("commit 89123f3abcde -> 1a2b3c4d5e6f"), for the resume and --dry-run messages.
  std::string remeasure_why;
};

// `now`: this run's conditions; `earlier`: those of the store's runs. With reuse_timings a timing
// case finished under any earlier conditions (or recorded before keys named them) counts as done.
class ResumeRule {
 public:
  ResumeRule(std::set<std::string> done_keys, TimingConditions now,
             std::vector<TimingConditions> earlier, bool reuse_timings);
  // The key this run records the case under.
  std::string key(const std::string& base_key, bool timing) const;
  ResumeState state(const std::string& base_key, bool timing) const;

 private:
  std::set<std::string> done_;
  TimingConditions now_;
  std::vector<TimingConditions> earlier_;  // distinct, without now_
  bool reuse_timings_;
};

}  // namespace accel
