// The runner: turns a plan into stored trials. Makes synthetic models on demand, keys every case
// (hash of its resolved config and model file hashes), skips cases already in the store, runs
// warm-up then measured trials through the method, records each case in one transaction, records
// failures and goes on, and stops cleanly on Ctrl-C (losing at most the case in flight).
#pragma once
#include <cstddef>
#include <map>
#include <ostream>
#include <string>

#include "harness/plan.h"

namespace accel {

struct RunOptions {
  std::string db_path = "runs/accelbench.sqlite";
  bool dry_run = false;
  int threads = 0;  // overrides the plan's when > 0
  Shard shard;      // run only this shard's cases (see plan.h)
};

struct RunSummary {
  std::string run_id;
  size_t cases = 0, skipped = 0, completed = 0, failed = 0;
  bool interrupted = false;
  double measured_s = 0;  // inside Method::run for measured trials
  double overhead_s = 0;  // harness bookkeeping: keys, prompts, records, store writes, progress
  double setup_s = 0;     // making and loading models, hashing files (once per model set)
};

RunSummary run_plan(const Plan& plan, const RunOptions& opt, std::ostream& log);

// Case key: sha256 of the case config plus the digests of the inputs its method uses, by role
// (stored as "<role>_sha256", so keys of target/draft cases are unchanged by the roles).
std::string case_key(const Plan& plan, const Case& c,
                     const std::map<std::string, std::string>& input_digests);

}  // namespace accel
