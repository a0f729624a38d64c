// A metric's history across runs, for the dashboard and the metric-over-commits plot: every run
// of every store given is a point in time (ordered by start time, then commit and run id), and
// each case (case_key) gets per run the median of its trials' metric with a percentile-bootstrap
// interval of that median. Reads stores only; verdicts are compare's (compare.h).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "reports/compare.h"
#include "results/result_store.h"

namespace accel::reports {

struct HistoryRun {
  std::string store, run_id, commit, started_at, hostname;
  bool dirty = false;
  std::string label() const;  // "0123abc 2025-01-02 03:04" (+ "-dirty")
};

struct HistoryValue {
  size_t run = 0;  // index into History::runs
  double median = 0, lo = 0, hi = 0;
  size_t n = 0;
  std::vector<results::TrialRecord> trials;  // the run's successful trials of this case
};

struct CaseHistory {
  // label: "specprefill keep=0.3 ctx=1024 s0 (tiny/target)", naming only the parameters that
  // differ between the cases of its method in the history (a resolved configuration has a dozen).
  std::string case_key, label;
  // The case's identity, for grouping and sorting: its method, target (model_label) and KV type,
  // and its parameters with the draft and input files as pseudo-parameters (add_model_labels).
  std::string method, model, kv_dtype, workload, sample_id;
  int64_t context_len = 0;
  nlohmann::json config = nlohmann::json::object();
  std::vector<HistoryValue> values;  // in run order, only runs that hold the case
};

struct History {
  std::string metric;
  bool higher_is_better = false;
  std::vector<HistoryRun> runs;
  std::vector<CaseHistory> cases;  // by label, then case key
};

struct HistoryOptions {
  std::string metric = "ttft_s";  // one of compare's metrics()
  std::string where;              // SQL over trials, as report --where
  double level = 0.95;            // per-point interval
  int resamples = 2000;           // 0: medians only, no interval (lo = hi = NaN)
  uint64_t seed = 20240601;
};

// `stores` are (name shown, store). Throws std::invalid_argument for an unknown metric or when
// no trial has it.
History load_history(const std::vector<std::pair<std::string, const results::ResultStore*>>& stores,
                     const HistoryOptions& opt);

}  // namespace accel::reports
