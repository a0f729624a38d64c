// The `serve` report of endpoint load sweeps (harness/load_runner.h): per stored point
// (configuration x context x request rate x max concurrency) p50/p90/p99 TTFT, TPOT and ITL, the
// request and output-token throughput; and the latency-vs-throughput figure, also drawn for
// `bench-serve` from the same numbers. Reads the store only; computes from per-request rows.
#pragma once
#include <string>
#include <vector>

#include "reports/table.h"
#include "reports/tables.h"
#include "results/result_store.h"

namespace accel::reports {

// Percentiles (stats.h percentile, R type 7) of every completed request of a point: TTFT and
// end-to-end per request, TPOT per request with more than one token, ITL pooled over all gaps.
// Rows in (configuration, context, rate, concurrency) order; a "Run" column when two stored points
// share those (e.g. two builds). Throws when the selection holds no load point.
Table serve_table(const results::ResultStore& store, const ReportOptions& opt);

// One point of the latency-vs-throughput figure.
struct ServePlotPoint {
  std::string series;  // e.g. the configuration (and rate)
  double output_tok_s = 0, ttft_p50_ms = 0;
  std::string tip;  // "concurrency 4, rate inf"
};
// Median TTFT (y, ms) against output tokens/s (x), one line per series in the given order.
std::string latency_throughput_svg(const std::vector<ServePlotPoint>& points,
                                   const std::string& title);
// One figure per context length of the selection's load points, as DIR/serve-ctx<N>.svg; series =
// configuration (with its rate when the selection has several). Returns the paths.
std::vector<std::string> write_serve_plots(const results::ResultStore& store,
                                           const ReportOptions& opt, const std::string& dir);

}  // namespace accel::reports
