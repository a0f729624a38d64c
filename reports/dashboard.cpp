// The dashboard (dashboard.h). Nothing on the page depends on the time it is generated, so CI can
// diff regenerated pages.
#include "reports/dashboard.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <stdexcept>

#include "reports/chart.h"
#include "reports/plots.h"
#include "reports/svg.h"
#include "reports/tables.h"

namespace accel::reports {

size_t Dashboard::regressed() const {
  return compare.regressed();
}

size_t Dashboard::improved() const {
  size_t n = 0;
  for (const auto& c : compare.cases) n += c.verdict == Verdict::Improved;
  return n;
}

Dashboard build_dashboard(
    const std::vector<std::pair<std::string, const results::ResultStore*>>& stores,
    const DashboardOptions& opt) {
  Dashboard d;
  d.history = load_history(stores, opt.history);
  CompareOptions co = opt.compare;
  co.metrics = {d.history.metric};
  // Each judged case contributes its previous run's trials as baseline and its latest run's as
  // candidate; compare pools them by case key, so one call judges all cases as one family.
  std::vector<results::TrialRecord> base, cand;
  for (const auto& c : d.history.cases) {
    if (c.values.size() < 2) continue;
    const auto& prev = c.values[c.values.size() - 2].trials;
    const auto& last = c.values.back().trials;
    base.insert(base.end(), prev.begin(), prev.end());
    cand.insert(cand.end(), last.begin(), last.end());
  }
  if (!base.empty()) d.compare = compare_trials(base, cand, co);
  std::map<std::string, const CaseComparison*> by_key;
  for (const auto& c : d.compare.cases) by_key[c.case_key] = &c;
  for (const auto& c : d.history.cases) {
    CaseVerdict v;
    v.case_key = c.case_key;
    if (auto it = by_key.find(c.case_key); it != by_key.end()) {
      v.judged = true;
      v.comparison = *it->second;
    }
    d.verdicts.push_back(v);
  }
  const Table t = compare_table(d.compare, co);
  if (!t.footnotes.empty()) d.compare_note = t.footnotes.front();
  return d;
}

namespace {

std::string esc(const std::string& s) {
  return svg::escape(s);
}

std::string fmt(const char* f, double x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, x);
  return buf;
}

const char* verdict_class(const CaseVerdict& v) {
  if (!v.judged) return "single";
  switch (v.comparison.verdict) {
    case Verdict::Regressed:
      return "regressed";
    case Verdict::Improved:
      return "improved";
    case Verdict::TooFewTrials:
      return "few";
    case Verdict::Ok:
      return "ok";
  }
  return "ok";
}

std::string verdict_text(const CaseVerdict& v) {
  return v.judged ? verdict_name(v.comparison.verdict) : "one run";
}

std::string slowdown_text(const CaseVerdict& v) {
  if (!v.judged) return "—";
  const auto& s = v.comparison.slowdown;
  return fmt("%.3f", s.estimate) + " [" + fmt("%.3f", s.lo) + ", " + fmt("%.3f", s.hi) + "]";
}

std::string case_chart(const Dashboard& d, size_t i) {
  const CaseHistory& c = d.history.cases[i];
  const CaseVerdict& v = d.verdicts[i];
  LineChart ch;
  ch.title = c.label;
  ch.x_label = "Run (commit, start time UTC)";
  ch.y_label = metric_axis_label(d.history.metric);
  ch.x_scale = XScale::Category;
  for (const auto& r : d.history.runs) ch.categories.push_back(r.label());
  ChartSeries s{d.history.metric + " median", {}};
  for (const auto& val : c.values)
    s.points.push_back({double(val.run), val.median, val.lo, val.hi,
                        d.history.runs[val.run].label() + ": median " +
                            format_number(val.median, 4) + " [" + format_number(val.lo, 4) + ", " +
                            format_number(val.hi, 4) + "], n=" + std::to_string(val.n),
                        false});
  if (v.judged && v.comparison.verdict == Verdict::Regressed) s.points.back().flagged = true;
  ch.series.push_back(std::move(s));
  ch.plot_width = 420;
  ch.plot_height = 200;
  return line_chart_svg(ch, /*inline_svg=*/true);
}

constexpr const char* kStyle =
    R"(body{font-family:"DejaVu Sans",Arial,sans-serif;margin:24px;color:#1a1a1a}
table{border-collapse:collapse;margin:8px 0 20px}td,th{border:1px solid #ccc;padding:3px 8px;font-size:13px;text-align:left}
th{background:#f2f2f2}td.num{text-align:right;font-variant-numeric:tabular-nums}
.badge{padding:1px 6px;border-radius:3px;font-size:12px}
.regressed{background:#fde0e0;color:#a00000;font-weight:bold}.improved{background:#e0f5e6;color:#0a6b2a}
.ok{background:#eef2f7}.few{background:#fff4d6}.single{background:#f2f2f2;color:#666}
section{margin:18px 0;border-top:1px solid #ddd;padding-top:8px}p.note{font-size:12px;color:#555;max-width:70em}
)";

}  // namespace

std::string dashboard_html(const Dashboard& d, const DashboardOptions& opt) {
  const History& h = d.history;
  std::string o;
  o += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  o += "<title>accelbench dashboard: " + esc(h.metric) + "</title>\n<style>\n";
  o += kStyle;
  o += "</style>\n</head>\n<body>\n";
  o += "<h1>accelbench regression dashboard</h1>\n";
  size_t judged = 0;
  for (const auto& v : d.verdicts) judged += v.judged;
  o += "<p id=\"summary\"><b>" + esc(h.metric) + "</b> (" +
       (h.higher_is_better ? "higher is better" : "lower is better") +
       "): " + std::to_string(h.cases.size()) + " case(s) over " + std::to_string(h.runs.size()) +
       " run(s); " + std::to_string(judged) +
       " judged (latest run against the previous one): " + "<span class=\"badge regressed\">" +
       std::to_string(d.regressed()) + " regressed</span> <span class=\"badge improved\">" +
       std::to_string(d.improved()) + " improved</span></p>\n";
  if (judged > 0 && !d.compare_note.empty())
    o += "<p class=\"note\">" + esc(d.compare_note) + "</p>\n";
  if (!opt.history.where.empty())
    o += "<p class=\"note\">Trials selected by: <code>" + esc(opt.history.where) + "</code></p>\n";

  o += "<h2>Runs</h2>\n<table id=\"runs\"><tr><th>#</th><th>Commit</th><th>Started (UTC)</th>"
       "<th>Host</th><th>Store</th><th>Run</th></tr>\n";
  for (size_t i = 0; i < h.runs.size(); ++i) {
    const auto& r = h.runs[i];
    o += "<tr><td class=\"num\">" + std::to_string(i + 1) + "</td><td><code>" + esc(r.commit) +
         (r.dirty ? " (dirty)" : "") + "</code></td><td>" + esc(r.started_at) + "</td><td>" +
         esc(r.hostname) + "</td><td>" + esc(r.store) + "</td><td><code>" + esc(r.run_id) +
         "</code></td></tr>\n";
  }
  o += "</table>\n";

  // Regressions first, then the rest in label order (history order is by label).
  std::vector<size_t> order(h.cases.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const auto rank = [&](size_t i) {
      const auto& v = d.verdicts[i];
      if (!v.judged) return 3;
      return v.comparison.verdict == Verdict::Regressed  ? 0
             : v.comparison.verdict == Verdict::Improved ? 1
                                                         : 2;
    };
    return rank(a) < rank(b);
  });
  o += "<h2>Cases</h2>\n<table id=\"cases\"><tr><th>Verdict</th><th>Case</th><th>Previous "
       "median</th><th>Latest median</th><th>Slowdown [interval]</th><th>Runs</th></tr>\n";
  for (size_t i : order) {
    const auto& c = h.cases[i];
    const auto& v = d.verdicts[i];
    const std::string prev =
        c.values.size() > 1 ? format_number(c.values[c.values.size() - 2].median, 4) : "—";
    o += "<tr class=\"case-row\" data-verdict=\"" + std::string(verdict_class(v)) +
         "\"><td><span class=\"badge " + verdict_class(v) + "\">" + esc(verdict_text(v)) +
         "</span></td><td><a href=\"#case-" + std::to_string(i) + "\">" + esc(c.label) +
         "</a></td><td class=\"num\">" + prev + "</td><td class=\"num\">" +
         format_number(c.values.back().median, 4) + "</td><td class=\"num\">" + slowdown_text(v) +
         "</td><td class=\"num\">" + std::to_string(c.values.size()) + "</td></tr>\n";
  }
  o += "</table>\n";
  for (size_t i : order) {
    const auto& c = h.cases[i];
    const auto& v = d.verdicts[i];
    o += "<section id=\"case-" + std::to_string(i) + "\" class=\"" + verdict_class(v) +
         "-case\">\n<h3><span class=\"badge " + verdict_class(v) + "\">" + esc(verdict_text(v)) +
         "</span> " + esc(c.label) + "</h3>\n<p class=\"note\">case <code>" + esc(c.case_key) +
         "</code>; slowdown of the latest run (> 1 is worse): " + esc(slowdown_text(v)) + "</p>\n";
    o += case_chart(d, i);
    o += "</section>\n";
  }
  o += "</body>\n</html>\n";
  return o;
}

std::string write_dashboard(const std::string& html, const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw std::runtime_error("dashboard: cannot create '" + dir + "': " + ec.message());
  const std::string path = (fs::path(dir) / "index.html").string();
  svg::write_file(path, html);
  return path;
}

}  // namespace accel::reports
