// The CI regression dashboard: one static HTML page (inline SVG, CSS and one small inline script
// for the filter box; no network, works from file://). At the top, an overview per metric over
// commits; then the cases grouped by method and target model, labelled by what varies within the
// group and sorted by context length, each with a chart of its metric per run. Each case's latest
// run is judged against its previous one by compare's statistics (compare_trials: same bootstrap,
// same family-wise level, same max slowdown). Reads stores only; the same stores give a
// byte-identical page.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "reports/compare.h"
#include "reports/dashboard_groups.h"
#include "reports/dashboard_overview.h"
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
  std::vector<CaseGroup> groups;      // every case once; groups holding a regression first
  std::vector<Overview> overviews;    // history.metric first, then every other metric present
  size_t regressed() const;
  size_t improved() const;
};

// `stores` are (name shown, store). Throws std::invalid_argument when nothing has the metric.
Dashboard build_dashboard(
    const std::vector<std::pair<std::string, const results::ResultStore*>>& stores,
    const DashboardOptions& opt);

// The page: summary and filter box, the regressions, the overview charts, then per group a table
// of its cases (each row linking to its chart) and the charts, and the runs. Every text from the
// stores is escaped.
std::string dashboard_html(const Dashboard& d, const DashboardOptions& opt);

// Writes DIR/index.html (DIR created), all or nothing; returns its path. Throws
// std::runtime_error naming what it cannot create or write.
std::string write_dashboard(const std::string& html, const std::string& dir);

}  // namespace accel::reports
