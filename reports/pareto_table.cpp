// The `pareto` table: quality against time-to-first-token cost, one row per method configuration,
// as the KV Prediction paper's accuracy-vs-TTFT-FLOPs figure: a suite metric's mean over samples
// beside the measured TTFT and the analytic TTFT FLOPs the method recorded (stats.ttft_flops), and
// which rows lie on the Pareto front of each (no other row at least as good and as cheap, one of
// them strictly). Reads the store only.
#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include <filesystem>

#include "reports/chart.h"
#include "reports/stats.h"
#include "reports/svg.h"
#include "reports/tables.h"

namespace accel::reports {

namespace {

using results::TrialRecord;

// The metric a pareto table scores by when --metric is not given: a "<suite>.score" the trials
// hold (every suite scored 0-100 names its headline so), else agreement's top-1.
std::string default_metric(const std::vector<TrialRecord>& trials) {
  std::set<std::string> names;
  for (const auto& t : trials)
    for (const auto& [k, v] : t.scores) names.insert(k);
  for (const auto& n : names)
    if (n.size() > 6 && n.compare(n.size() - 6, 6, ".score") == 0) return n;
  if (names.count("agreement.top1")) return "agreement.top1";
  std::string all;
  for (const auto& n : names) all += (all.empty() ? "" : ", ") + n;
  throw std::invalid_argument(
      "report --table pareto: no '<suite>.score' or agreement.top1 in the "
      "selection; pass --metric (scores present: " +
      (all.empty() ? std::string("none") : all) + ")");
}

// The agreement suite scores methods against the reference method and leaves the reference
// itself unscored; its value is known by definition (it agrees with itself exactly).
std::optional<double> agreement_reference_value(const std::string& metric) {
  if (metric == "agreement.top1" || metric == "agreement.first_token") return 1.0;
  if (metric == "agreement.kl_mean" || metric == "agreement.kl_max") return 0.0;
  return std::nullopt;
}

struct Point {
  std::map<std::string, double> metric_by_sample;  // scores repeat on each trial of a case
  std::vector<double> ttft, flops;
  std::vector<const TrialRecord*> timed;  // trials behind `ttft`, for back-off marks
  size_t fallbacks = 0, trials = 0;
  double quality() const {
    double s = 0;
    for (const auto& [id, v] : metric_by_sample) s += v;
    return metric_by_sample.empty() ? NAN : s / double(metric_by_sample.size());
  }
  double mean(const std::vector<double>& v) const {
    double s = 0;
    for (double x : v) s += x;
    return v.empty() ? NAN : s / double(v.size());
  }
};

// Whether point i is dominated within its group by another point: quality >= and cost <=, one
// strictly. NaN quality or cost never dominates and is never on the front.
bool dominated(const std::vector<std::pair<double, double>>& qc, size_t i) {
  const auto [q, c] = qc[i];
  if (std::isnan(q) || std::isnan(c)) return true;
  for (size_t j = 0; j < qc.size(); ++j) {
    if (j == i || std::isnan(qc[j].first) || std::isnan(qc[j].second)) continue;
    if (qc[j].first >= q && qc[j].second <= c && (qc[j].first > q || qc[j].second < c)) return true;
  }
  return false;
}

}  // namespace

Table pareto_table(const results::ResultStore& store, const ReportOptions& opt) {
  results::TrialFilter f;
  f.where = opt.where;
  const auto trials = store.trials(f);
  const std::string metric = opt.metric.empty() ? default_metric(trials) : opt.metric;
  const auto varying = varying_params_by_method(trials);
  const bool show_kv = has_non_f32_kv(trials);
  const BuildIndex builds(store, trials);
  // group (target, workload, context, build) -> row (method, params, KV) -> point
  using Group = std::tuple<std::string, std::string, int64_t, std::string>;
  using RowKey = std::tuple<std::string, std::string, std::pair<bool, std::string>>;
  std::map<Group, std::map<RowKey, Point>> groups;
  const std::optional<double> reference_value = agreement_reference_value(metric);
  // The metric's direction from its suite's stored declaration (later runs win; default higher).
  bool higher_is_better = true;
  for (const auto& run : store.runs())
    for (const auto& m : run.suite.value("metrics", nlohmann::json::array()))
      if (m.value("name", "") == metric) higher_is_better = m.value("higher_is_better", true);
  const double sign = higher_is_better ? 1.0 : -1.0;  // fronts compare sign x quality
  for (const auto& t : trials) {
    const auto it = t.scores.find(metric);
    const bool reference = t.method == opt.baseline_method && kv_dtype_of(t) == "f32";
    if (it == t.scores.end() && !(reference && reference_value)) continue;
    // Only the parameters that vary within the method (and the draft) label a configuration.
    Point& pt = groups[{model_label(t.target), t.workload, t.context_len, builds.key(t)}]
                      [{t.method, configuration_label(t, varying), kv_rank(kv_dtype_of(t))}];
    ++pt.trials;
    pt.metric_by_sample[t.sample_id] = it != t.scores.end() ? it->second : *reference_value;
    if (fell_back(t)) ++pt.fallbacks;
    if (t.ttft_s) {
      pt.ttft.push_back(*t.ttft_s);
      pt.timed.push_back(&t);
    }
    if (t.stats.contains("ttft_flops") && t.stats["ttft_flops"].is_number())
      pt.flops.push_back(t.stats["ttft_flops"].get<double>());
  }
  if (groups.empty())
    throw std::invalid_argument("report --table pareto: no trial in the selection has the score '" +
                                metric + "'");
  Table tab;
  tab.title = "Quality against TTFT cost (" + metric + (higher_is_better ? ", ↑" : ", ↓") +
              "; front = no other configuration at least as good and as cheap)";
  if (builds.split()) tab.columns.push_back(BuildIndex::column());
  for (Column c : std::vector<Column>{{"target", "Target", Align::Left},
                                      {"workload", "Workload", Align::Left},
                                      {"context_len", "Context", Align::Right},
                                      {"method", "Method", Align::Left},
                                      {"params", "Params", Align::Left}})
    tab.columns.push_back(std::move(c));
  if (show_kv) tab.columns.push_back({"kv_dtype", "KV", Align::Left});
  for (Column c : std::vector<Column>{{"quality", metric + " (mean)", Align::Right},
                                      {"samples", "Samples", Align::Right},
                                      {"ttft_s", "TTFT (s)", Align::Right},
                                      {"ttft_gflops", "TTFT GFLOPs", Align::Right},
                                      {"flops_ratio", "FLOPs / baseline", Align::Right},
                                      {"front_flops", "Front (FLOPs)", Align::Left},
                                      {"front_ttft", "Front (TTFT)", Align::Left},
                                      {"fallback", "Fallback", Align::Right}})
    tab.columns.push_back(std::move(c));
  const auto number = [](double x, int sig = 3) {
    return std::isnan(x) ? Cell("—", nullptr) : Cell(format_number(x, sig), x);
  };
  bool missing_flops = false;
  BackoffMarks marks;
  for (const auto& [g, rows] : groups) {
    std::vector<RowKey> keys;
    std::vector<std::pair<double, double>> by_flops, by_time;
    double base_flops = NAN;
    for (const auto& [k, pt] : rows) {
      keys.push_back(k);
      by_flops.push_back({sign * pt.quality(), pt.mean(pt.flops)});
      by_time.push_back({sign * pt.quality(), pt.mean(pt.ttft)});
      if (std::get<0>(k) == opt.baseline_method && std::get<2>(k).second == "f32")
        base_flops = pt.mean(pt.flops);
      missing_flops = missing_flops || pt.flops.empty();
    }
    for (size_t i = 0; i < keys.size(); ++i) {
      const Point& pt = rows.at(keys[i]);
      std::vector<Cell> row;
      if (builds.split()) row.push_back(Cell(builds.label(std::get<3>(g))));
      for (Cell c : {Cell(std::get<0>(g)), Cell(std::get<1>(g)),
                     Cell(std::to_string(std::get<2>(g)), std::get<2>(g)),
                     Cell(std::get<0>(keys[i])), Cell(std::get<1>(keys[i]))})
        row.push_back(std::move(c));
      if (show_kv) row.push_back(Cell(std::get<2>(keys[i]).second));
      const double fl = by_flops[i].second;
      Cell ttft = number(by_time[i].second, 4);
      marks.mark(ttft, pt.timed);
      for (Cell c :
           {number(pt.quality()),
            Cell(std::to_string(pt.metric_by_sample.size()), int64_t(pt.metric_by_sample.size())),
            ttft, number(fl / 1e9, 4), number(fl / base_flops),
            Cell(dominated(by_flops, i) ? "" : "●", !dominated(by_flops, i)),
            Cell(dominated(by_time, i) ? "" : "●", !dominated(by_time, i)),
            fallback_cell(pt.fallbacks, pt.trials)})
        row.push_back(std::move(c));
      tab.rows.push_back(std::move(row));
    }
  }
  tab.footnotes.push_back(
      "Quality = mean of " + metric +
      " over distinct samples; TTFT = mean over trials; TTFT GFLOPs = the analytic FLOPs of the "
      "forward passes the method ran before its first token (stats.ttft_flops: matrix "
      "multiply-adds x2, attention pairs included; norms and softmax not counted), so methods "
      "compare on work, not on this machine's clock. Fronts are taken within each (target, "
      "workload, context).");
  if (reference_value)
    tab.footnotes.push_back("The " + opt.baseline_method + " rows are the agreement reference: " +
                            metric + " = " + format_number(*reference_value) +
                            " by definition (the suite does not score the reference).");
  if (missing_flops)
    tab.footnotes.push_back(
        "— in TTFT GFLOPs: trials recorded before methods reported ttft_flops, or "
        "a method that does not report it.");
  if (builds.split())
    tab.footnotes.push_back(builds.footnote() + " Fronts are taken within each build.");
  if (!marks.footnote().empty()) tab.footnotes.push_back(marks.footnote());
  return tab;
}

namespace {

// A column's index in the table, by key.
size_t column(const Table& t, const std::string& key) {
  for (size_t i = 0; i < t.columns.size(); ++i)
    if (t.columns[i].key == key) return i;
  throw std::logic_error("pareto table without column " + key);
}

}  // namespace

std::vector<std::string> write_pareto_plots(const results::ResultStore& store,
                                            const ReportOptions& opt, const std::string& dir) {
  const Table t = pareto_table(store, opt);
  const size_t target = column(t, "target"), workload = column(t, "workload"),
               ctx = column(t, "context_len"), method = column(t, "method"),
               params = column(t, "params"), quality = column(t, "quality"),
               flops = column(t, "ttft_gflops"), front = column(t, "front_flops");
  // One chart per (target, workload, context); one series per method, its configurations joined
  // in order of cost as the KV Prediction paper draws them.
  std::map<std::string, LineChart> charts;
  std::map<std::string, std::map<std::string, ChartSeries>> series;
  for (const auto& row : t.rows) {
    if (!row[quality].data.is_number() || !row[flops].data.is_number()) continue;
    const std::string g = row[target].text + " " + row[workload].text + " " + row[ctx].text;
    LineChart& c = charts[g];
    c.title = "Quality against TTFT FLOPs";
    c.subtitle = row[target].text + ", " + row[workload].text + ", " + row[ctx].text + " tokens";
    c.x_label = "TTFT (GFLOPs, analytic)";
    c.y_label = t.columns[quality].label;
    ChartPoint p;
    p.x = row[flops].data.get<double>();
    p.y = row[quality].data.get<double>();
    p.tip = row[method].text + (row[params].text.empty() ? "" : " (" + row[params].text + ")") +
            (row[front].data == true ? ", on the front" : "");
    p.flagged = row[front].data == true;
    auto& s = series[g][row[method].text];
    s.name = row[method].text;
    s.points.push_back(p);
  }
  if (charts.empty())
    throw std::invalid_argument(
        "report --svg: no row of the pareto table has both a score and "
        "TTFT FLOPs");
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw std::runtime_error("report --svg: cannot create '" + dir + "': " + ec.message());
  std::vector<std::string> paths;
  for (auto& [g, c] : charts) {
    for (auto& [m, s] : series[g]) {
      std::sort(s.points.begin(), s.points.end(),
                [](const ChartPoint& a, const ChartPoint& b) { return a.x < b.x; });
      c.series.push_back(s);
    }
    c.notes.push_back(
        "Ringed points: on the front (no configuration at least as good and as "
        "cheap). Hover a point for its configuration.");
    const std::string path = (fs::path(dir) / ("pareto-" + svg::file_slug(g) + ".svg")).string();
    try {
      svg::write_file(path, line_chart_svg(c));
    } catch (const std::runtime_error& e) {
      throw std::runtime_error(std::string("report --svg: ") + e.what());
    }
    paths.push_back(path);
  }
  return paths;
}

}  // namespace accel::reports
