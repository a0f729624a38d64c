// The CI regression dashboard: one static HTML page (inline SVG and CSS, no scripts, no network,
// works from file://) showing per benchmark case a metric across the runs of the given stores,
// ordered by start time, with each run's interval, and each case's latest run judged against its
// previous one by compare's statistics (compare_trials: same bootstrap, same family-wise level,
// same max slowdown). Reads stores only; the same stores give a byte-identical page.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "reports/compare.h"
#include "reports/history.h"
#include "results/result_store.h"

namespace accel::reports {

struct DashboardOptions {
  HistoryOptions history;  // metric, --where, interval level of each point
  CompareOptions compare;  // the verdict; its metrics are set to history.metric
};

struct CaseVerdict {
  std::string case_key;
  bool judged = false;  // the case has at least two runs
  CaseComparison comparison;
};

struct Dashboard {
  History history;
  CompareResult compare;              // latest vs previous run of every judged case
  std::vector<CaseVerdict> verdicts;  // parallel to history.cases
  std::string compare_note;           // compare's footnote (statistics used)
  size_t regressed() const;
  size_t improved() const;
};

// `stores` are (name shown, store). Throws std::invalid_argument when nothing has the metric.
Dashboard build_dashboard(
    const std::vector<std::pair<std::string, const results::ResultStore*>>& stores,
    const DashboardOptions& opt);

// The page: summary, runs, a verdict table, and one chart per case (regressions first).
std::string dashboard_html(const Dashboard& d, const DashboardOptions& opt);

// Writes DIR/index.html (DIR created), all or nothing; returns its path. Throws
// std::runtime_error naming what it cannot create or write.
std::string write_dashboard(const std::string& html, const std::string& dir);

}  // namespace accel::reports
