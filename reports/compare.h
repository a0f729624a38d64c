// Regression check between two stores: cases matched by case_key (and split by build when a side
// spans several), per metric ratio.h's ratio of medians (oriented so > 1 means the candidate is
// worse) with a percentile-bootstrap interval, and a
// regression flagged only when the interval's lower bound exceeds 1 + max_slowdown. The intervals
// are simultaneous over all judged cases (Bonferroni): with many cases, per-case 95% intervals
// would flag some case by chance in almost every comparison. Reads only.
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "reports/build_key.h"
#include "reports/ratio.h"
#include "reports/stats.h"
#include "reports/table.h"
#include "results/result_store.h"

namespace accel::reports {

// A comparable per-trial metric with its direction (STYLE.md item 10).
struct Metric {
  std::string name;
  bool higher_is_better = false;
  std::function<std::optional<double>(const results::TrialRecord&)> get;
};
// ttft_s (lower is better), decode_tok_s (higher), peak_rss_bytes (lower), kv_bytes (lower).
const std::vector<Metric>& metrics();
const Metric& metric(const std::string& name);  // throws std::invalid_argument listing the names

struct CompareOptions {
  std::vector<std::string> metrics = {"ttft_s"};
  double max_slowdown = 0.05;  // fraction: 0.05 = 5 %
  int resamples = 2000;        // minimum; raised so that each tail holds >= 10 resamples
  uint64_t seed = 20240601;
  double level = 0.95;      // family-wise confidence over all judged case-metrics
  bool family_wise = true;  // false: every case gets its own `level` interval
  // Fewer trials on either side -> "too few trials", never flagged: a median of 3 resampled
  // values takes only 3 values, and its bootstrap interval is far too narrow.
  int min_trials = 5;
};

enum class Verdict { Ok, Regressed, Improved, TooFewTrials };
const char* verdict_name(Verdict v);

struct CaseComparison {
  std::string case_key, method, params, model, workload, sample_id, metric;
  Build baseline_build, candidate_build;  // each side's trials come from one build
  int64_t context_len = 0;
  size_t n_baseline = 0, n_candidate = 0;
  double baseline_median = 0, candidate_median = 0;
  // "Slowdown": candidate/baseline for lower-is-better metrics, baseline/candidate for
  // higher-is-better ones, so > 1 always means worse: ratio.h's speedup of the baseline over the
  // candidate (ratio of medians, percentile bootstrap).
  Interval slowdown;
  double mann_whitney_p = 1;  // for information; the verdict uses the interval
  Verdict verdict = Verdict::Ok;
};

struct CompareResult {
  std::vector<CaseComparison> cases;  // one per matched case and metric
  double case_level = 0.95;           // per-case interval level after the family-wise correction
  int resamples = 0;                  // bootstrap resamples per case actually used
  size_t only_baseline = 0, only_candidate = 0;  // unmatched case keys
  bool split_builds = false;  // a side spans several builds: cases are compared per build pair
  size_t regressed() const;
};

// Per case: regressed iff slowdown.lo > 1 + max_slowdown; improved iff slowdown.hi <
// 1 / (1 + max_slowdown); the interval level is 1 - (1 - level) / m for m judged case-metrics.
CompareResult compare_stores(const results::ResultStore& baseline,
                             const results::ResultStore& candidate, const CompareOptions& opt);
// The same over trials already read: the dashboard judges each case's latest run against its
// previous one with exactly compare's statistics (one family over all the cases it judges).
// Without build indexes every trial of a side counts as one build (the dashboard's sides are one
// run each); with them, a side's trials of one case are split by build and every baseline build is
// compared with every candidate build.
CompareResult compare_trials(const std::vector<results::TrialRecord>& baseline,
                             const std::vector<results::TrialRecord>& candidate,
                             const CompareOptions& opt, const BuildIndex& baseline_builds = {},
                             const BuildIndex& candidate_builds = {});
Table compare_table(const CompareResult& r, const CompareOptions& opt);

}  // namespace accel::reports
