// serve_table and the latency-vs-throughput figure (see serve_table.h).
#include "reports/serve_table.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <tuple>

#include "reports/chart.h"
#include "reports/stats.h"

namespace accel::reports {

namespace {

using results::LoadPointRecord;
using results::TrialRecord;

struct PointData {
  LoadPointRecord point;
  std::vector<double> ttft, tpot, itl, e2e;  // seconds
};

std::string rate_text(double rate) {
  if (rate <= 0) return "inf";
  char b[32];
  std::snprintf(b, sizeof b, "%g", rate);
  return b;
}

// A request rate as it orders rows: rates <= 0 (all at once) are infinite.
double sort_rate(double rate) {
  return rate <= 0 ? std::numeric_limits<double>::infinity() : rate;
}

double stat_s(const nlohmann::json& stats, const char* key) {
  const auto it = stats.find(key);
  return it != stats.end() && it->is_number() ? it->get<double>() : NAN;
}

// The selection's points with their requests' times, in row order.
std::vector<PointData> load_data(const results::ResultStore& store, const ReportOptions& opt) {
  std::map<std::string, PointData> by_key;
  for (const LoadPointRecord& p : store.load_points()) by_key[p.case_key].point = p;
  results::TrialFilter f;
  f.where = opt.where;
  if (!f.where.empty()) store.validate_where(f.where);
  std::set<std::string> selected;
  for (const TrialRecord& t : store.trials(f)) {
    auto it = by_key.find(t.case_key);
    if (it == by_key.end()) continue;
    selected.insert(t.case_key);
    PointData& d = it->second;
    if (t.ttft_s) d.ttft.push_back(*t.ttft_s);
    if (const double x = stat_s(t.stats, "tpot_s"); std::isfinite(x)) d.tpot.push_back(x);
    if (const double x = stat_s(t.stats, "e2e_s"); std::isfinite(x)) d.e2e.push_back(x);
    if (t.stats.contains("itl_s") && t.stats["itl_s"].is_array())
      for (const auto& g : t.stats["itl_s"])
        if (g.is_number()) d.itl.push_back(g.get<double>());
  }
  std::vector<PointData> out;
  for (auto& [k, d] : by_key)
    if (selected.count(k)) out.push_back(std::move(d));
  // Rate 0 stands for unthrottled arrivals ("inf"), the largest rate: it sorts after every
  // finite one.
  const auto order = [](const LoadPointRecord& p) {
    return std::make_tuple(p.method, p.context_len, sort_rate(p.request_rate), p.concurrency,
                           p.recorded_at);
  };
  std::stable_sort(out.begin(), out.end(), [&](const PointData& a, const PointData& b) {
    return order(a.point) < order(b.point);
  });
  if (out.empty())
    throw std::invalid_argument(
        "no load-sweep point in the selection (run an endpoint plan with `max_concurrency`)");
  return out;
}

Cell ms_cell(const std::vector<double>& v, double q) {
  if (v.empty()) return Cell("—", nullptr);
  const double ms = 1000 * percentile(v, q);
  return Cell(format_number(ms), ms);
}

Cell rate_cell(double x) {
  return Cell(format_number(x), x);
}

}  // namespace

Table serve_table(const results::ResultStore& store, const ReportOptions& opt) {
  const std::vector<PointData> data = load_data(store, opt);
  std::set<std::tuple<std::string, int64_t, double, int64_t>> seen;
  bool dup = false;
  for (const auto& d : data)
    dup |= !seen.insert({d.point.method, d.point.context_len, d.point.request_rate,
                         d.point.concurrency})
                .second;
  Table t;
  t.title = "Serving under load: latency percentiles and throughput per sweep point";
  t.columns = {{"configuration", "Configuration"},
               {"context_len", "Prompt tokens", Align::Right},
               {"request_rate", "Rate (req/s)", Align::Right},
               {"max_concurrency", "Concurrency", Align::Right},
               {"requests", "Requests", Align::Right},
               {"request_throughput", "Req/s", Align::Right},
               {"output_tok_s", "Output tok/s", Align::Right}};
  for (const char* m : {"TTFT", "TPOT", "ITL"})
    for (const char* q : {"p50", "p90", "p99"})
      t.columns.push_back({std::string(m) == "TTFT"   ? std::string("ttft_") + q + "_ms"
                           : std::string(m) == "TPOT" ? std::string("tpot_") + q + "_ms"
                                                      : std::string("itl_") + q + "_ms",
                           std::string(m) + " " + q + " (ms)", Align::Right});
  t.columns.push_back({"e2e_p50_ms", "E2E p50 (ms)", Align::Right});
  if (dup) t.columns.push_back({"run", "Run"});
  for (const PointData& d : data) {
    const LoadPointRecord& p = d.point;
    std::vector<Cell> row = {Cell(p.method),
                             Cell(std::to_string(p.context_len), p.context_len),
                             Cell(rate_text(p.request_rate), p.request_rate),
                             Cell(std::to_string(p.concurrency), p.concurrency),
                             Cell(std::to_string(d.ttft.size()), int64_t(d.ttft.size())),
                             rate_cell(p.request_throughput()),
                             rate_cell(p.output_tok_s())};
    for (const auto* v : {&d.ttft, &d.tpot, &d.itl})
      for (double q : {0.5, 0.9, 0.99}) row.push_back(ms_cell(*v, q));
    row.push_back(ms_cell(d.e2e, 0.5));
    if (dup) row.push_back(Cell(p.run_id.substr(0, 8), p.run_id));
    t.rows.push_back(std::move(row));
  }
  t.footnotes = {
      "Times at the client: TTFT = request sent to the first streamed chunk with content; TPOT = "
      "(end - TTFT) / (tokens - 1) per request; ITL = every gap between content chunks, pooled "
      "over the point's requests; percentiles interpolate linearly (R type 7).",
      "Req/s and output tok/s = the point's completed requests and output tokens over its wall "
      "time (first request sent to last answer ended). Rate inf = all requests at once, as "
      "`vllm bench serve` does."};
  return t;
}

std::string latency_throughput_svg(const std::vector<ServePlotPoint>& points,
                                   const std::string& title) {
  LineChart c;
  c.title = title;
  c.x_label = "Output tokens/s (all requests)";
  c.y_label = "TTFT p50 (ms)";
  c.y_from_zero = true;
  for (const ServePlotPoint& p : points) {
    if (!std::isfinite(p.ttft_p50_ms)) continue;
    auto it = std::find_if(c.series.begin(), c.series.end(),
                           [&](const ChartSeries& s) { return s.name == p.series; });
    if (it == c.series.end()) {
      c.series.push_back({p.series, {}});
      it = c.series.end() - 1;
    }
    it->points.push_back({p.output_tok_s, p.ttft_p50_ms, NAN, NAN, p.tip});
  }
  c.notes.push_back("one point per sweep point; hover for its concurrency and request rate");
  return line_chart_svg(c);
}

std::vector<std::string> write_serve_plots(const results::ResultStore& store,
                                           const ReportOptions& opt, const std::string& dir) {
  const std::vector<PointData> data = load_data(store, opt);
  std::set<double> rates;
  for (const auto& d : data) rates.insert(d.point.request_rate);
  std::map<int64_t, std::vector<ServePlotPoint>> by_ctx;
  for (const PointData& d : data) {
    const LoadPointRecord& p = d.point;
    std::string series = p.method;
    if (rates.size() > 1) series += ", rate " + rate_text(p.request_rate);
    by_ctx[p.context_len].push_back(
        {series, p.output_tok_s(), d.ttft.empty() ? NAN : 1000 * median(d.ttft),
         "concurrency " + std::to_string(p.concurrency) + ", rate " + rate_text(p.request_rate)});
  }
  std::filesystem::create_directories(dir);
  std::vector<std::string> paths;
  for (const auto& [ctx, pts] : by_ctx) {
    const std::string path =
        (std::filesystem::path(dir) / ("serve-ctx" + std::to_string(ctx) + ".svg")).string();
    std::ofstream f(path);
    f << latency_throughput_svg(pts,
                                "Latency vs throughput, " + std::to_string(ctx) + "-token prompts");
    if (!f) throw std::runtime_error("cannot write '" + path + "'");
    paths.push_back(path);
  }
  return paths;
}

}  // namespace accel::reports
