// The `suite` table: every suite's metrics aggregated per (suite, method, params, KV type, target,
// context) as each metric's declaration in the run's suite record says (mean, sum, min or max over
// samples, with its direction in the header). Reads the store only: a new suite appears here with
// no report code.
#include <cmath>
#include <map>
#include <set>

#include "reports/tables.h"

namespace accel::reports {

namespace {

struct MetricDecl {
  bool higher_is_better = true;
  std::string aggregation = "mean";
};

// Declarations of every metric named in the runs' suite records (later runs win).
std::map<std::string, MetricDecl> declared_metrics(const results::ResultStore& store) {
  std::map<std::string, MetricDecl> out;
  for (const auto& run : store.runs())
    for (const auto& m : run.suite.value("metrics", nlohmann::json::array()))
      out[m.value("name", "")] = {m.value("higher_is_better", true),
                                  m.value("aggregation", "mean")};
  return out;
}

double aggregate(const std::vector<double>& v, const std::string& how) {
  if (v.empty()) return NAN;
  double acc = how == "min" ? INFINITY : how == "max" ? -INFINITY : 0;
  for (double x : v)
    acc = how == "min" ? std::min(acc, x) : how == "max" ? std::max(acc, x) : acc + x;
  return how == "mean" ? acc / double(v.size()) : acc;
}

using RowKey = std::tuple<std::string, std::string, std::string, std::string, std::string, int64_t>;

}  // namespace

Table suite_table(const results::ResultStore& store, const ReportOptions& opt) {
  results::TrialFilter f;
  f.where = opt.where;
  const auto decls = declared_metrics(store);
  // Scores are per case, repeated on each trial: one value per (row, sample).
  std::map<RowKey, std::map<std::string, std::map<std::string, double>>> rows;  // metric, sample
  std::set<std::string> metrics;
  for (const auto& t : store.trials(f)) {
    if (t.scores.empty() || fell_back(t)) continue;
    const RowKey k{t.workload + " v" + t.workload_version,
                   t.method,
                   params_label(t.params),
                   t.kv_dtype.empty() ? "f32" : t.kv_dtype,
                   model_label(t.target),
                   t.context_len};
    for (const auto& [name, v] : t.scores) {
      rows[k][name][t.sample_id] = v;
      metrics.insert(name);
    }
  }
  Table tab;
  tab.title = "Suite metrics, aggregated over samples as each metric declares";
  tab.columns = {{"suite", "Suite", Align::Left},   {"method", "Method", Align::Left},
                 {"params", "Params", Align::Left}, {"kv_dtype", "KV", Align::Left},
                 {"target", "Target", Align::Left}, {"context_len", "Context", Align::Right}};
  for (const auto& m : metrics) {
    const auto it = decls.find(m);
    const MetricDecl d = it == decls.end() ? MetricDecl{} : it->second;
    tab.columns.push_back(
        {m, m + " (" + d.aggregation + (d.higher_is_better ? ", ↑)" : ", ↓)"), Align::Right});
  }
  tab.columns.push_back({"samples", "Samples", Align::Right});
  for (const auto& [k, by_metric] : rows) {
    std::vector<Cell> row = {
        Cell(std::get<0>(k)), Cell(std::get<1>(k)),
        Cell(std::get<2>(k)), Cell(std::get<3>(k)),
        Cell(std::get<4>(k)), Cell(std::to_string(std::get<5>(k)), std::get<5>(k))};
    size_t samples = 0;
    for (const auto& m : metrics) {
      const auto it = by_metric.find(m);
      std::vector<double> v;
      if (it != by_metric.end())
        for (const auto& [s, x] : it->second) v.push_back(x);
      samples = std::max(samples, v.size());
      const auto d = decls.find(m);
      const double a = aggregate(v, d == decls.end() ? "mean" : d->second.aggregation);
      row.push_back(std::isnan(a) ? Cell("—", nullptr) : Cell(format_number(a), a));
    }
    row.push_back(Cell(std::to_string(samples), samples));
    tab.rows.push_back(std::move(row));
  }
  tab.footnotes.push_back(
      "Each metric's aggregation over samples and its direction (↑ higher is better, ↓ lower) "
      "come from the suite's declaration stored with its run; trials that fell back are left "
      "out.");
  if (rows.empty()) tab.footnotes.push_back("No scored trials in this selection.");
  return tab;
}

}  // namespace accel::reports
