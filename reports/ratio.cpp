// speedup_ratio and its cell, key and footnote (ratio.h).
#include "reports/ratio.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <tuple>

namespace accel::reports {

namespace {
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

std::vector<double> sorted(std::span<const double> x) {
  std::vector<double> v(x.begin(), x.end());
  std::sort(v.begin(), v.end());
  return v;
}

// A store holds one trial per (case key, trial index); run ids are left out so that the same data
// in another store (a merge, a rerun's copy) prints the same intervals.
std::string side_key(const std::vector<const results::TrialRecord*>& ts) {
  std::vector<std::pair<std::string, int64_t>> ids;
  for (const auto* t : ts) ids.emplace_back(t->case_key, t->trial_index);
  std::sort(ids.begin(), ids.end());
  std::string k;
  for (const auto& [c, i] : ids) k += c + "/" + std::to_string(i) + ";";
  return k;
}
}  // namespace

Ratio speedup_ratio(std::span<const double> baseline, std::span<const double> candidate,
                    Direction direction, const std::string& key, const RatioOptions& opt) {
  Ratio r;
  r.level = opt.level;
  r.resamples = opt.resamples;
  r.baseline_n = baseline.size();
  r.candidate_n = candidate.size();
  if (r.empty()) {
    r.ratio = r.lo = r.hi = kNaN;
    return r;
  }
  const std::vector<double> b = sorted(baseline), c = sorted(candidate);
  const bool time = direction == Direction::LowerIsBetter;
  const Interval iv = bootstrap_ratio(time ? b : c, time ? c : b, kRatioCenter, opt.resamples,
                                      opt.seed ^ stable_hash(key), opt.level);
  r.ratio = iv.estimate;
  r.lo = iv.lo;
  r.hi = iv.hi;
  return r;
}

Cell ratio_cell(const Ratio& r, int decimals) {
  if (r.empty() || !std::isfinite(r.ratio)) return Cell("—", nullptr);
  char buf[128];
  std::snprintf(buf, sizeof buf, "%.*f× [%.*f, %.*f]", decimals, r.ratio, decimals, r.lo, decimals,
                r.hi);
  return Cell(buf, {{"ratio", r.ratio},
                    {"lo", r.lo},
                    {"hi", r.hi},
                    {"level", r.level},
                    {"baseline_n", r.baseline_n},
                    {"n", r.candidate_n}});
}

Cell self_ratio_cell(bool has_trials) {
  return has_trials ? Cell("1.00×", {{"ratio", 1.0}}) : Cell("—", nullptr);
}

std::string trials_key(const std::string& metric,
                       const std::vector<const results::TrialRecord*>& baseline,
                       const std::vector<const results::TrialRecord*>& candidate) {
  return metric + "|" + side_key(baseline) + "|" + side_key(candidate);
}

TrialSample sample_of(const std::vector<const results::TrialRecord*>& trials, const MetricOf& get) {
  TrialSample s;
  for (const auto* t : trials)
    if (const auto v = get(*t)) {
      s.trials.push_back(t);
      s.values.push_back(*v);
    }
  return s;
}

Ratio trials_ratio(const TrialSample& baseline, const TrialSample& candidate, Direction direction,
                   const std::string& metric, const RatioOptions& opt) {
  return speedup_ratio(baseline.values, candidate.values, direction,
                       trials_key(metric, baseline.trials, candidate.trials), opt);
}

std::string interval_text(const RatioOptions& opt) {
  char buf[160];
  std::snprintf(buf, sizeof buf,
                "%g%% percentile-bootstrap interval, %d resamples of each side's trials",
                opt.level * 100, opt.resamples);
  return buf;
}

std::string ratio_footnote(const std::string& figure, const std::string& what, Direction direction,
                           const RatioOptions& opt) {
  const char* order =
      direction == Direction::LowerIsBetter ? "baseline / method" : "method / baseline";
  return figure + ": ratio of medians, " + order + " (" + what + "); " + interval_text(opt) + ".";
}

}  // namespace accel::reports
