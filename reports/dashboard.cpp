// The dashboard's data and its file (dashboard.h); the page is dashboard_page.cpp.
#include "reports/dashboard.h"

#include <filesystem>
#include <map>
#include <stdexcept>

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
  std::vector<int> ranks;
  for (const auto& v : d.verdicts) ranks.push_back(verdict_rank(v.judged, v.comparison.verdict));
  d.groups = group_cases(d.history, ranks);
  d.overviews.push_back(overview_of(d.history));
  for (const auto& m : metrics()) {
    if (m.name == d.history.metric) continue;
    HistoryOptions ho = opt.history;
    ho.metric = m.name;
    ho.resamples = 0;  // the overview needs medians only
    try {
      d.overviews.push_back(overview_of(load_history(stores, ho)));
    } catch (const std::invalid_argument&) {
      // no trial records this metric: no overview of it
    }
  }
  return d;
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
