// The runner: turns a plan into stored trials. Makes synthetic models on demand, keys every case
// (case_keys.h: its resolved config and model file hashes, and for a timing case the build's code
// state and CPU), skips cases already in the store, runs warm-up then measured trials through the
// method, records each case in one transaction, records failures and goes on, and stops cleanly on
// Ctrl-C (losing at most the case in flight).
#pragma once
#include <cstddef>
#include <map>
#include <optional>
#include <ostream>
#include <string>

#include "harness/case_keys.h"
#include "harness/environment.h"
#include "harness/plan.h"

namespace accel {

struct RunOptions {
  std::string db_path = "runs/accelbench.sqlite";
  bool dry_run = false;
  int threads = 0;  // overrides the plan's when > 0
  Shard shard;      // run only this shard's cases (see plan.h)
  // Count a timing case finished under another commit or CPU as done (`run --reuse-timings`).
  bool reuse_timings = false;
  // Tests only: the provenance to key timing cases by and to record, in place of
  // capture_environment() (a test cannot rebuild the binary at another commit or move it to
  // another CPU). Its thread count is replaced by the run's.
  std::optional<Environment> environment;
};

struct RunSummary {
  std::string run_id;
  size_t cases = 0, skipped = 0, completed = 0, failed = 0;
  // Timing cases finished under other conditions and measured again, by how they differ.
  std::map<std::string, size_t> remeasured;
  bool interrupted = false;
  double measured_s = 0;  // inside Method::run for measured trials
  double overhead_s = 0;  // harness bookkeeping: keys, prompts, records, store writes, progress
  double setup_s = 0;     // making and loading models, hashing files (once per model set)
};

RunSummary run_plan(const Plan& plan, const RunOptions& opt, std::ostream& log);

}  // namespace accel
