// The figures of plots.h. Each kind reads the JSON data of its report table's cells (the table
// builders own the queries and statistics) and lays it out with chart.h.
#include "reports/plots.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <stdexcept>

#include "reports/chart.h"
#include "reports/cost_model.h"
#include "reports/history.h"

namespace accel::reports {

namespace {

// Row-label columns of the tables (everything that names a configuration rather than a value).
const std::set<std::string> kLabelKeys = {"model",    "workload", "method", "params",
                                          "kv_dtype", "target",   "draft"};

int column(const Table& t, const std::string& key) {
  for (size_t i = 0; i < t.columns.size(); ++i)
    if (t.columns[i].key == key) return int(i);
  return -1;
}

std::string row_label(const Table& t, const std::vector<Cell>& row,
                      const std::set<std::string>& skip = {}) {
  std::string s;
  for (size_t i = 0; i < t.columns.size(); ++i) {
    const auto& k = t.columns[i].key;
    if (!kLabelKeys.count(k) || skip.count(k) || row[i].text.empty()) continue;
    const std::string text = k == "kv_dtype" ? "KV " + row[i].text : row[i].text;
    s += (s.empty() ? "" : " ") + text;
  }
  return s;
}

double number(const Cell& c) {
  if (c.data.is_number()) return c.data.get<double>();
  return NAN;
}

// Footnotes as chart notes, wrapped at word boundaries to fit the figure.
std::vector<std::string> wrap_notes(const std::vector<std::string>& notes, size_t width = 120) {
  std::vector<std::string> out;
  for (const auto& n : notes) {
    std::string line;
    size_t i = 0;
    while (i < n.size()) {
      size_t j = n.find(' ', i);
      if (j == std::string::npos) j = n.size();
      const std::string word = n.substr(i, j - i);
      if (!line.empty() && line.size() + 1 + word.size() > width) {
        out.push_back(line);
        line.clear();
      }
      line += (line.empty() ? "" : " ") + word;
      i = j + 1;
    }
    if (!line.empty()) out.push_back(line);
  }
  return out;
}

std::string level_text(const ReportOptions& o) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g%%", o.level * 100);
  return buf;
}

std::string speedup_vs_context(const results::ResultStore& store, const PlotOptions& opt) {
  const Table t = ttft_table(store, opt.report);
  LineChart c;
  c.title = "Speedup vs context length";
  c.subtitle = "TTFT speedup over '" + opt.report.baseline_method +
               "' (f32 KV cache), ratio of medians; bars: " + level_text(opt.report) +
               " percentile-bootstrap interval";
  c.x_label = "Context length (tokens)";
  c.y_label = "Speedup over baseline (×)";
  c.x_scale = XScale::Log2;
  c.reference_y = 1.0;
  for (const auto& row : t.rows) {
    ChartSeries s{row_label(t, row), {}};
    for (size_t i = 0; i < t.columns.size(); ++i) {
      const auto& key = t.columns[i].key;
      if (key.rfind("speedup@", 0) != 0) continue;
      const auto& d = row[i].data;
      if (!d.is_object() || !d.contains("lo")) continue;  // the baseline's own 1.00× or "—"
      ChartPoint p;
      p.x = std::stod(key.substr(8));
      p.y = d["ratio"].get<double>();
      p.lo = d["lo"].is_number() ? d["lo"].get<double>() : NAN;
      p.hi = d["hi"].is_number() ? d["hi"].get<double>() : NAN;
      p.tip = s.name + " at " + key.substr(8) + " tokens: " + row[i].text;
      s.points.push_back(p);
    }
    if (!s.points.empty()) c.series.push_back(std::move(s));
  }
  if (c.series.empty())
    throw std::invalid_argument(
        "plot speedup-vs-context: no speedups in this selection (it needs the baseline method and "
        "at least one other method at the same contexts)");
  c.notes = wrap_notes(t.footnotes);
  return line_chart_svg(c);
}

std::string phases(const results::ResultStore& store, const PlotOptions& opt) {
  const Table t = phases_table(store, opt.report);
  StackedBarChart c;
  c.title = "TTFT phase breakdown";
  c.subtitle = "Mean seconds per phase over trials, in timing-protocol order (decode not shown)";
  c.x_label = "Configuration @ context length (tokens)";
  c.y_label = "Mean time (s)";
  std::vector<size_t> cols;
  for (size_t i = 0; i < t.columns.size(); ++i) {
    const auto& k = t.columns[i].key;
    if (k.rfind("phase.", 0) == 0 && k != "phase.decode") {
      cols.push_back(i);
      c.layers.push_back(k.substr(6));
    }
  }
  const int ctx = column(t, "context_len");
  for (const auto& row : t.rows) {
    c.bars.push_back(row_label(t, row) + " @" + row[size_t(ctx)].text);
    std::vector<double> v;
    for (size_t i : cols) v.push_back(number(row[i]));
    c.values.push_back(v);
  }
  if (c.bars.empty() || c.layers.empty())
    throw std::invalid_argument("plot phases: no phase timings in this selection");
  return stacked_bar_svg(c);
}

std::string quality_vs_keep(const results::ResultStore& store, const PlotOptions& opt) {
  ReportOptions ro = opt.report;
  if (ro.param.empty()) ro.param = "keep";
  const Table t = ablation_table(store, ro);
  std::vector<std::string> scores;
  for (const auto& col : t.columns)
    if (col.key.rfind("score.", 0) == 0) scores.push_back(col.key.substr(6));
  if (scores.empty())
    throw std::invalid_argument("plot quality-vs-keep: the trials with '" + ro.param +
                                "' have no scores (run a plan whose suite scores, e.g. agreement)");
  std::string score = opt.metric.empty() ? scores.front() : opt.metric;
  if (std::find(scores.begin(), scores.end(), score) == scores.end()) {
    std::string all;
    for (const auto& s : scores) all += (all.empty() ? "" : ", ") + s;
    throw std::invalid_argument("plot quality-vs-keep: no score '" + score + "' (scores: " + all +
                                ")");
  }
  const size_t sc = size_t(column(t, "score." + score)), pc = size_t(column(t, ro.param)),
               cc = size_t(column(t, "context_len"));
  LineChart c;
  c.title = "Quality vs " + ro.param;
  c.subtitle = "Mean " + score + " over samples and trials, per configuration and context length";
  c.x_label = ro.param == "keep" ? "keep (fraction of prompt tokens kept)" : ro.param;
  c.y_label = score + " (mean)";
  std::map<std::string, ChartSeries> series;  // ordered by name: stable output
  for (const auto& row : t.rows) {
    const double x = number(row[pc]), y = number(row[sc]);
    if (!std::isfinite(x) || !std::isfinite(y)) continue;
    const std::string name = row_label(t, row) + " ctx=" + row[cc].text;
    ChartSeries& s = series[name];
    s.name = name;
    s.points.push_back(
        {x, y, NAN, NAN, name + ", " + ro.param + "=" + row[pc].text + ": " + row[sc].text});
  }
  for (auto& [n, s] : series) c.series.push_back(std::move(s));
  if (c.series.empty())
    throw std::invalid_argument("plot quality-vs-keep: no numeric '" + ro.param +
                                "' values with a '" + score + "' score");
  c.notes = wrap_notes(t.footnotes);
  return line_chart_svg(c);
}

std::string costmodel(const results::ResultStore& store, const PlotOptions& opt) {
  const Table t = costmodel_table(store, opt.report);
  const int pc = column(t, "predicted"), mc = column(t, "measured"), cc = column(t, "context_len"),
            kc = column(t, "keep"), gc = column(t, "G");
  LineChart c;
  c.title = "Cost model: predicted vs measured speedup";
  c.subtitle =
      "Predicted 1/(r + k) against measured TTFT speedup; bars: " + level_text(opt.report) +
      " bootstrap interval; dashed: y = x";
  c.x_label = "Predicted speedup 1/(r + k) (×)";
  c.y_label = "Measured speedup (×)";
  c.connect = false;
  c.identity_line = true;
  std::map<std::string, ChartSeries> series;
  for (const auto& row : t.rows) {
    const double x = number(row[size_t(pc)]);
    const auto& d = row[size_t(mc)].data;
    if (!std::isfinite(x) || !d.is_object()) continue;
    const std::string name = row_label(t, row);
    ChartSeries& s = series[name];
    s.name = name;
    ChartPoint p;
    p.x = x;
    p.y = d["ratio"].get<double>();
    p.lo = d["lo"].is_number() ? d["lo"].get<double>() : NAN;
    p.hi = d["hi"].is_number() ? d["hi"].get<double>() : NAN;
    p.tip = name + ", ctx " + row[size_t(cc)].text + ", keep " + row[size_t(kc)].text +
            ": predicted " + row[size_t(pc)].text + ", measured " + row[size_t(mc)].text + ", G " +
            row[size_t(gc)].text;
    s.points.push_back(p);
  }
  for (auto& [n, s] : series) c.series.push_back(std::move(s));
  if (c.series.empty())
    throw std::invalid_argument(
        "plot costmodel: no configuration with both a prediction and a measured speedup (it needs "
        "SpecPrefill-style trials with draft-scoring phases and baseline trials)");
  std::vector<std::string> fits;
  for (const auto& f : t.footnotes)
    if (f.rfind("eps fit", 0) == 0) fits.push_back(f);
  c.notes = wrap_notes(fits);
  return line_chart_svg(c);
}

std::string metric_over_commits(const results::ResultStore& store, const PlotOptions& opt) {
  HistoryOptions ho;
  ho.metric = opt.metric.empty() ? "ttft_s" : opt.metric;
  ho.where = opt.report.where;
  ho.level = opt.report.level;
  ho.resamples = opt.report.resamples;
  ho.seed = opt.report.seed;
  const History h = load_history({{store.path(), &store}}, ho);
  LineChart c;
  c.title = h.metric + " over commits";
  c.subtitle = "Median per run (ordered by start time); bars: " + level_text(opt.report) +
               " bootstrap interval of the median";
  c.x_label = "Run (commit, start time UTC)";
  c.y_label = metric_axis_label(h.metric);
  c.x_scale = XScale::Category;
  for (const auto& r : h.runs) c.categories.push_back(r.label());
  for (const auto& k : h.cases) {
    ChartSeries s{k.label, {}};
    for (const auto& v : k.values)
      s.points.push_back({double(v.run), v.median, v.lo, v.hi,
                          k.label + " @ " + h.runs[v.run].label() + ": median " +
                              format_number(v.median, 4) + " (n=" + std::to_string(v.n) + ")"});
    c.series.push_back(std::move(s));
  }
  return line_chart_svg(c);
}

}  // namespace

std::string metric_axis_label(const std::string& m) {
  if (m == "ttft_s") return "TTFT (s)";
  if (m == "decode_tok_s") return "Decode speed (tokens/s)";
  if (m == "peak_rss_bytes") return "Peak RSS (bytes)";
  if (m == "kv_bytes") return "KV cache (bytes)";
  return m;
}

const std::vector<std::string>& plot_kinds() {
  static const std::vector<std::string> k = {"speedup-vs-context", "phases", "quality-vs-keep",
                                             "costmodel", "metric-over-commits"};
  return k;
}

std::string plot_kind_help() {
  return "speedup-vs-context: TTFT speedup per method over context length (log2 x) with interval "
         "bars (the ttft table);\n"
         "phases: stacked mean seconds per TTFT phase per configuration and context (the phases "
         "table);\n"
         "quality-vs-keep: a score over --param (default keep) per configuration and context (the "
         "ablation table; --metric picks the score);\n"
         "costmodel: predicted 1/(r+k) vs measured speedup with intervals and the y = x line (the "
         "costmodel table);\n"
         "metric-over-commits: --metric (default ttft_s) per case per run, ordered by start time, "
         "with intervals of the median.\n"
         "NIAH heatmaps: `report --table niah --svg DIR`.";
}

std::string plot_svg(const results::ResultStore& store, const std::string& kind,
                     const PlotOptions& opt) {
  if (kind == "speedup-vs-context") return speedup_vs_context(store, opt);
  if (kind == "phases") return phases(store, opt);
  if (kind == "quality-vs-keep") return quality_vs_keep(store, opt);
  if (kind == "costmodel") return costmodel(store, opt);
  if (kind == "metric-over-commits") return metric_over_commits(store, opt);
  std::string all;
  for (const auto& k : plot_kinds()) all += (all.empty() ? "" : ", ") + k;
  throw std::invalid_argument("unknown plot kind '" + kind + "' (" + all + ")");
}

}  // namespace accel::reports
