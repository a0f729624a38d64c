// One case of a plan, from its suite sample to its trial records: the request, the reference
// method's run when the suite scores against one, warm-ups, measured trials (with the machine's
// load over each), declared-fallback checks and scoring. Owns no store writes and no progress.
#pragma once
#include <atomic>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "harness/model_inputs.h"
#include "harness/plan.h"
#include "methods/method.h"
#include "results/records.h"
#include "suites/suite.h"

namespace accel {

// The reference method's generations, per (model set, context length, sample).
using ReferenceCache = std::map<std::tuple<size_t, int, int>, Generation>;

struct CaseTimes {
  double measured_s = 0;  // inside Method::run for measured trials
  double warmup_s = 0;    // warm-ups and the method's own scoring run
  double setup_s = 0;     // the reference method's runs, made for scoring only
};

struct CaseInput {
  const Plan& plan;
  const Case& c;
  LoadedModelSet& models;
  ReferenceCache& references;
  const std::atomic<int>& interrupts;  // non-zero: stop after the trial in flight
};

// The identity every record of the case shares (no timings): keys (case_keys.h: the key it is
// stored under and its base key, as config_key), method, params, models, sample.
results::TrialRecord case_identity(const CaseInput& in, const std::string& case_key,
                                   const std::string& config_key, const std::string& run_id);

// Throws std::runtime_error when the outcome fell back (stats "fallback") for a reason the
// method does not declare in fallback_reasons(): an undeclared fallback is a failure.
void check_declared_fallback(const Method& m, const Outcome& o);

// A case between its preparation and its scoring: what its trials run on and what they gave so
// far. Plans that interleave trials hold one per case of a model set across the trial rounds.
struct PreparedCase {
  results::TrialRecord id;  // identity plus the sample's fields
  Sample sample;
  Request request;
  Engine engine;
  ReferenceNeed need;
  const Generation* reference = nullptr;  // in CaseInput::references, or none
  Generation forced;                      // the method's teacher-forced scoring run, if any
  Outcome first;                          // the first measured trial's outcome
  std::vector<results::TrialRecord> trials;
};

// The sample, the reference run (cached), the method's scoring run and the warm-ups.
PreparedCase prepare_case(const CaseInput& in, const results::TrialRecord& identity,
                          CaseTimes& times);
// Measures the case's next trial (index = trials so far).
void measure_next_trial(const CaseInput& in, PreparedCase& p, CaseTimes& times);
// Scores the first trial's generation and gives every measured trial the scores.
std::vector<results::TrialRecord> finish_case(const CaseInput& in, PreparedCase&& p);

// Runs the case: prepare, plan.trials measured trials, finish. Returns its measured trials (fewer
// than plan.trials only when interrupted) with scores. Throws for any failure, including a
// fallback the method does not declare.
std::vector<results::TrialRecord> run_case(const CaseInput& in,
                                           const results::TrialRecord& identity, CaseTimes& times);

}  // namespace accel
