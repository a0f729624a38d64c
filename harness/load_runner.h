// One load-sweep point of an endpoint plan (plan.h LoadSweepSpec) from its requests to its store
// rows: the point's streamed requests (load_sweep.h) become the case's trials, one per request
// with its TTFT, TPOT, ITL and end-to-end time, and the point's wall time and output tokens a
// load_points row, all in one transaction. Owns no keys, resume or progress: the runner's.
#pragma once
#include <string>

#include "harness/plan.h"
#include "results/result_store.h"

namespace accel {

struct LoadCaseOutcome {
  std::string error;  // "" = recorded as done; else recorded as the case's failure
  int completed = 0, failed = 0;
  double wall_s = 0;
};

// `identity` is the case's record identity (case_runner.h case_identity); `n_vocab` bounds the
// random prompt ids (the local GGUF's vocabulary, the served model's). A point counts only when
// every request completed: a partial point's throughput would mislead, so any failed request
// records the whole point as one failure naming the first reasons, and a rerun measures it again.
LoadCaseOutcome run_load_case(const Plan& plan, const Case& c, const results::TrialRecord& identity,
                              int n_vocab, results::ResultStore& store);

// The per-request trial records of a point (exposed for tests): workload "load", sample
// "request-<i>", ttft_s, decode_tokens = output tokens, decode_tok_s = 1 / TPOT, and stats
// {e2e_s, tpot_s, itl_s, load: {max_concurrency, request_rate}}.
struct LoadResult;
std::vector<results::TrialRecord> load_trial_records(const Case& c,
                                                     const results::TrialRecord& identity,
                                                     const LoadResult& r);

}  // namespace accel
