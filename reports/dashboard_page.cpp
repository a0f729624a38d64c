// dashboard_html (dashboard.h): the page. Every text that comes from a store goes through esc();
// the script (dashboard_assets.h) takes nothing from the stores. Nothing on the page depends on
// the time it is generated, so CI can diff regenerated pages.
#include <cctype>
#include <cstdio>

#include "reports/chart.h"
#include "reports/dashboard.h"
#include "reports/dashboard_assets.h"
#include "reports/plots.h"
#include "reports/svg.h"
#include "reports/tables.h"

namespace accel::reports {

namespace {

std::string esc(const std::string& s) {
  return svg::escape(s);
}

std::string fmt3(double x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3f", x);
  return buf;
}

const char* verdict_class(const CaseVerdict& v) {
  static const char* k[] = {"regressed", "improved", "ok", "few", "single"};
  return k[verdict_rank(v.judged, v.comparison.verdict)];
}

std::string verdict_text(const CaseVerdict& v) {
  return v.judged ? verdict_name(v.comparison.verdict) : "one run";
}

std::string badge(const CaseVerdict& v) {
  return "<span class=\"badge " + std::string(verdict_class(v)) + "\">" + esc(verdict_text(v)) +
         "</span>";
}

std::string slowdown_text(const CaseVerdict& v) {
  if (!v.judged) return "—";
  const auto& s = v.comparison.slowdown;
  return fmt3(s.estimate) + " [" + fmt3(s.lo) + ", " + fmt3(s.hi) + "]";
}

std::string previous_median(const CaseHistory& c) {
  return c.values.size() > 1 ? format_number(c.values[c.values.size() - 2].median, 4) : "—";
}

// "ctx=4096 · keep=0.3": how a case reads inside its group.
std::string short_label(const CaseHistory& c, const GroupedCase& g) {
  return "ctx=" + std::to_string(c.context_len) + (g.label.empty() ? "" : " · " + g.label);
}

// The words the filter box matches (lower case, as the script lowers what is typed).
std::string filter_attr(const GroupedCase& g, const CaseVerdict& v) {
  std::string verdict = verdict_text(v);
  for (char& ch : verdict) ch = char(std::tolower(static_cast<unsigned char>(ch)));
  return " data-filter=\"" + esc(g.full_text + " " + verdict) + "\"";
}

std::string case_chart(const Dashboard& d, const GroupedCase& g) {
  const CaseHistory& c = d.history.cases[g.index];
  const CaseVerdict& v = d.verdicts[g.index];
  LineChart ch;
  ch.title = short_label(c, g);
  ch.x_label = "Run (commit, oldest left)";
  ch.y_label = metric_axis_label(d.history.metric);
  ch.x_scale = XScale::Category;
  ch.categories = run_axis_labels(d.history.runs);
  ChartSeries s{"median", {}};
  for (const auto& val : c.values)
    s.points.push_back({double(val.run), val.median, val.lo, val.hi,
                        d.history.runs[val.run].label() + ": median " +
                            format_number(val.median, 4) + " [" + format_number(val.lo, 4) + ", " +
                            format_number(val.hi, 4) + "], n=" + std::to_string(val.n),
                        false});
  if (v.judged && v.comparison.verdict == Verdict::Regressed) s.points.back().flagged = true;
  ch.series.push_back(std::move(s));
  ch.plot_width = 200;  // three charts a row on a 1280-pixel screen
  ch.plot_height = 140;
  return line_chart_svg(ch, /*inline_svg=*/true);
}

std::string summary(const Dashboard& d) {
  const History& h = d.history;
  size_t judged = 0;
  for (const auto& v : d.verdicts) judged += v.judged;
  const auto labels = run_axis_labels(h.runs);
  std::string o =
      "<p id=\"summary\"><b>" + esc(metric_axis_label(h.metric)) + "</b> (" + esc(h.metric) + ", " +
      (h.higher_is_better ? "higher is better" : "lower is better") + ") · " +
      std::to_string(h.cases.size()) + " cases in " + std::to_string(d.groups.size()) +
      " groups · " + std::to_string(h.runs.size()) + " runs, <code>" + esc(labels.front()) +
      "</code> → <code>" + esc(labels.back()) + "</code> · " + std::to_string(judged) +
      " judged, latest run against the previous one: " + "<span class=\"badge regressed\">" +
      std::to_string(d.regressed()) + " regressed</span> <span class=\"badge improved\">" +
      std::to_string(d.improved()) + " improved</span></p>\n";
  o += "<div class=\"filter\"><label for=\"filter\">Filter</label><input id=\"filter\" "
       "type=\"search\" autocomplete=\"off\" placeholder=\"words that must all appear, e.g. "
       "specprefill ctx=4096 keep=0.3\"><span id=\"filter-count\">" +
       std::to_string(h.cases.size()) + " of " + std::to_string(h.cases.size()) +
       " cases shown</span></div>\n";
  return o;
}

std::string regressions(const Dashboard& d) {
  std::string rows;
  size_t n = 0;
  for (const auto& g : d.groups)
    for (const auto& gc : g.cases) {
      const CaseVerdict& v = d.verdicts[gc.index];
      if (verdict_rank(v.judged, v.comparison.verdict) != 0) continue;
      const CaseHistory& c = d.history.cases[gc.index];
      ++n;
      rows += "<tr class=\"regressed-row\"" + filter_attr(gc, v) + "><td>" + esc(g.title) +
              "</td><td><a href=\"#case-" + std::to_string(gc.index) + "\">" +
              esc(short_label(c, gc)) + "</a></td><td class=\"num\">" + previous_median(c) +
              "</td><td class=\"num\">" + format_number(c.values.back().median, 4) +
              "</td><td class=\"num\">" + slowdown_text(v) + "</td></tr>\n";
    }
  std::string o =
      "<section id=\"regressions\">\n<h2>Regressions (" + std::to_string(n) + ")</h2>\n";
  if (n == 0)
    return o +
           "<p id=\"all-clear\">No case's latest run is slower than its previous one beyond "
           "the allowed slowdown.</p>\n</section>\n";
  o += "<table><tr><th>Group</th><th>Case</th><th>Previous median</th><th>Latest median</th>"
       "<th>Slowdown (&gt; 1 is worse) [interval]</th></tr>\n" +
       rows + "</table>\n";
  return o + "</section>\n";
}

std::string overview(const Dashboard& d) {
  std::string o =
      "<section id=\"overview\">\n<h2>Overview</h2>\n<p class=\"note\">One chart per metric. "
      "Each line is a method: in every run, the geometric mean over the method's cases of the "
      "case's median in that run divided by its median in the case's first run. 1 (dashed) is "
      "unchanged; for TTFT, RSS and KV bytes above 1 is worse, for decode speed below 1 is "
      "worse. The overview covers every case; the filter does not change it.</p>\n"
      "<div class=\"charts\">\n";
  for (const auto& ov : d.overviews)
    o += "<figure class=\"overview\" data-metric=\"" + esc(ov.metric) + "\">\n" + overview_svg(ov) +
         "</figure>\n";
  return o + "</div>\n</section>\n";
}

std::string group_section(const Dashboard& d, const CaseGroup& g, size_t gi) {
  size_t reg = 0;
  for (const auto& gc : g.cases)
    reg += verdict_rank(d.verdicts[gc.index].judged, d.verdicts[gc.index].comparison.verdict) == 0;
  std::string o = "<section class=\"group" + std::string(reg ? " has-regression" : "") +
                  "\" id=\"group-" + std::to_string(gi) + "\">\n<h3>" + esc(g.title) +
                  " <span class=\"counts\">" + std::to_string(g.cases.size()) + " cases" +
                  (reg ? ", " + std::to_string(reg) + " regressed" : "") + "</span></h3>\n";
  if (!g.fixed.empty())
    o += "<details><summary>Same in every case of the group</summary><code>" + esc(g.fixed) +
         "</code></details>\n";
  o += "<table class=\"cases\"><tr><th>Verdict</th><th>Context</th><th>Varies in group</th>"
       "<th>Previous median</th><th>Latest median</th><th>Slowdown (&gt; 1 is worse) "
       "[interval]</th><th>Runs</th></tr>\n";
  for (const auto& gc : g.cases) {
    const CaseHistory& c = d.history.cases[gc.index];
    const CaseVerdict& v = d.verdicts[gc.index];
    const bool regressed = verdict_rank(v.judged, v.comparison.verdict) == 0;
    o += "<tr class=\"case-row" + std::string(regressed ? " regressed-row" : "") +
         "\" data-verdict=\"" + verdict_class(v) + "\"" + filter_attr(gc, v) + "><td>" + badge(v) +
         "</td><td class=\"num\"><a href=\"#case-" + std::to_string(gc.index) + "\">" +
         std::to_string(c.context_len) + "</a></td><td>" +
         (gc.label.empty() ? "—" : esc(gc.label)) + "</td><td class=\"num\">" + previous_median(c) +
         "</td><td class=\"num\">" + format_number(c.values.back().median, 4) +
         "</td><td class=\"num\">" + slowdown_text(v) + "</td><td class=\"num\">" +
         std::to_string(c.values.size()) + "</td></tr>\n";
  }
  o += "</table>\n<div class=\"charts\">\n";
  for (const auto& gc : g.cases)
    o += "<figure id=\"case-" + std::to_string(gc.index) + "\" class=\"case-chart " +
         verdict_class(d.verdicts[gc.index]) + "-case\"" + filter_attr(gc, d.verdicts[gc.index]) +
         ">\n" + case_chart(d, gc) + "</figure>\n";
  return o + "</div>\n</section>\n";
}

std::string runs_section(const Dashboard& d) {
  const auto labels = run_axis_labels(d.history.runs);
  std::string o =
      "<section id=\"runs\">\n<h2>Runs</h2>\n<table><tr><th>#</th><th>Axis label</th>"
      "<th>Commit</th><th>Started (UTC)</th><th>Host</th><th>Store</th><th>Run</th>"
      "</tr>\n";
  for (size_t i = 0; i < d.history.runs.size(); ++i) {
    const auto& r = d.history.runs[i];
    o += "<tr><td class=\"num\">" + std::to_string(i + 1) + "</td><td><code>" + esc(labels[i]) +
         "</code></td><td><code>" + esc(r.commit) + (r.dirty ? " (dirty)" : "") +
         "</code></td><td>" + esc(r.started_at) + "</td><td>" + esc(r.hostname) + "</td><td>" +
         esc(r.store) + "</td><td><code>" + esc(r.run_id) + "</code></td></tr>\n";
  }
  return o + "</table>\n</section>\n";
}

}  // namespace

std::string dashboard_html(const Dashboard& d, const DashboardOptions& opt) {
  std::string o = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  o += "<title>accelbench dashboard: " + esc(d.history.metric) + "</title>\n<style>\n";
  o += dashboard_assets::kStyle;
  o += "</style>\n</head>\n<body data-ready=\"0\">\n<header>\n";
  o += "<h1>accelbench regression dashboard</h1>\n" + summary(d) + "</header>\n";
  if (!opt.history.where.empty())
    o += "<p class=\"note\">Trials selected by: <code>" + esc(opt.history.where) + "</code></p>\n";
  o += regressions(d) + overview(d);
  o += "<section id=\"groups\">\n<h2>Cases by method and model</h2>\n<p class=\"note\">Groups "
       "with a regression come first; within a group, cases by context length. Each chart: the "
       "case's median per run with its bootstrap interval; a red ring marks a regressed latest "
       "run. Click a context length to jump to its chart.</p>\n";
  if (!d.compare_note.empty()) o += "<p class=\"note\">" + esc(d.compare_note) + "</p>\n";
  for (size_t gi = 0; gi < d.groups.size(); ++gi) o += group_section(d, d.groups[gi], gi);
  o += "</section>\n" + runs_section(d);
  o += "<script>\n" + std::string(dashboard_assets::kScript) + "</script>\n</body>\n</html>\n";
  return o;
}

}  // namespace accel::reports
