// `accelbench plot`: the report figures as SVG, drawn from the same report tables (`ttft`,
// `phases`, `ablation`, `costmodel`) and history the text reports use, so a figure never
// disagrees with its table. Reads the store only; the same store gives byte-identical files.
#pragma once
#include <string>
#include <vector>

#include "reports/tables.h"
#include "results/result_store.h"

namespace accel::reports {

struct PlotOptions {
  ReportOptions report;  // --where, and --param for quality-vs-keep (default "keep")
  std::string metric;    // quality-vs-keep: a score (default: the first); metric-over-commits:
                         // one of compare's metrics (default ttft_s)
};

// speedup-vs-context, phases, quality-vs-keep, costmodel, metric-over-commits; and one line of
// help per kind.
const std::vector<std::string>& plot_kinds();
std::string plot_kind_help();

// The SVG document. Throws std::invalid_argument for an unknown kind (listing the kinds) or a
// selection with nothing to draw (saying what the kind needs).
std::string plot_svg(const results::ResultStore& store, const std::string& kind,
                     const PlotOptions& opt);

// The axis label of a compare metric with its unit ("TTFT (s)").
std::string metric_axis_label(const std::string& metric);

}  // namespace accel::reports
