// The dashboard's overview of one metric over commits: per method, in every run, the geometric
// mean over the method's cases of the case's median in that run divided by its median in its own
// first run (1 = unchanged since the case was first measured). Computes from a History only; no
// statistics beyond that mean, and no verdicts (those are compare's).
#pragma once
#include <cmath>
#include <string>
#include <vector>

#include "reports/history.h"

namespace accel::reports {

struct OverviewSeries {
  std::string method;
  std::vector<double> relative;  // per run of History::runs; NaN where no case of it ran
  std::vector<size_t> n_cases;   // per run: the cases averaged
};

struct Overview {
  std::string metric;
  bool higher_is_better = false;
  std::vector<std::string> run_labels;  // the x axis: run_axis_labels()
  std::vector<std::string> run_tips;    // HistoryRun::label() per run
  std::vector<OverviewSeries> series;   // by method name
};

Overview overview_of(const History& h);
// An inline SVG line chart of the overview, with a dashed line at 1.
std::string overview_svg(const Overview& o);

// Short x-axis labels of runs: the commit's first 7 characters ("-dirty" when dirty), and
// " #2", " #3", ... for later runs of a commit already shown.
std::vector<std::string> run_axis_labels(const std::vector<HistoryRun>& runs);

}  // namespace accel::reports
