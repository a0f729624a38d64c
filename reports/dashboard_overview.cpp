// The overview (dashboard_overview.h).
#include "reports/dashboard_overview.h"

#include <map>

#include "reports/chart.h"
#include "reports/plots.h"
#include "reports/tables.h"

namespace accel::reports {

std::vector<std::string> run_axis_labels(const std::vector<HistoryRun>& runs) {
  std::vector<std::string> out;
  std::map<std::string, int> seen;
  for (const auto& r : runs) {
    const std::string c = r.commit.substr(0, 7) + (r.dirty ? "-dirty" : "");
    const int k = ++seen[c];
    out.push_back(k == 1 ? c : c + " #" + std::to_string(k));
  }
  return out;
}

Overview overview_of(const History& h) {
  Overview o;
  o.metric = h.metric;
  o.higher_is_better = h.higher_is_better;
  o.run_labels = run_axis_labels(h.runs);
  for (const auto& r : h.runs) o.run_tips.push_back(r.label());
  // method -> per run the sum of log(median / first median) and the count.
  std::map<std::string, std::vector<std::pair<double, size_t>>> sums;
  for (const auto& c : h.cases) {
    auto& s = sums[c.method];
    s.resize(h.runs.size(), {0.0, 0});
    const double first = c.values.front().median;
    for (const auto& v : c.values) {
      s[v.run].first += std::log(v.median / first);
      ++s[v.run].second;
    }
  }
  for (const auto& [method, s] : sums) {
    OverviewSeries os{method, {}, {}};
    for (const auto& [log_sum, n] : s) {
      os.relative.push_back(n ? std::exp(log_sum / double(n)) : NAN);
      os.n_cases.push_back(n);
    }
    o.series.push_back(std::move(os));
  }
  return o;
}

std::string overview_svg(const Overview& o) {
  LineChart ch;
  ch.title = metric_axis_label(o.metric) + " relative to each case's first run";
  ch.subtitle = std::string(o.higher_is_better ? "Higher is better" : "Lower is better") +
                "; geometric mean over each method's cases; dashed: unchanged";
  ch.x_label = "Run (commit, oldest left)";
  ch.y_label = "× first run";
  ch.x_scale = XScale::Category;
  ch.categories = o.run_labels;
  ch.reference_y = 1.0;
  ch.plot_width = 360;
  ch.plot_height = 180;
  for (const auto& s : o.series) {
    ChartSeries cs{s.method, {}};
    for (size_t r = 0; r < s.relative.size(); ++r) {
      if (!std::isfinite(s.relative[r])) continue;
      cs.points.push_back({double(r), s.relative[r], NAN, NAN,
                           s.method + " @ " + o.run_tips[r] + ": " +
                               format_number(s.relative[r], 4) + "× first run (geometric mean of " +
                               std::to_string(s.n_cases[r]) + " cases)"});
    }
    ch.series.push_back(std::move(cs));
  }
  return line_chart_svg(ch, /*inline_svg=*/true);
}

}  // namespace accel::reports
