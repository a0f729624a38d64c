// The one ratio every table, compare and the dashboard print: the centre statistic (median), its
// percentile-bootstrap interval, the cell text and the footnote that states both. Pure functions
// over samples; callers choose which trials form each side and never compute a ratio themselves.
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "reports/stats.h"
#include "reports/table.h"
#include "results/records.h"

namespace accel::reports {

// The centre of each side of every ratio. The median, because on a small shared machine a trial
// now and then runs while another process takes a core and comes out several times slower; one
// such trial moves a mean by its full excess over n, the median not at all.
inline constexpr Center kRatioCenter = Center::Median;

// Which way a metric improves: a time or a size shrinks, a throughput grows.
enum class Direction { LowerIsBetter, HigherIsBetter };

struct RatioOptions {
  int resamples = 2000;
  uint64_t seed = 20240601;  // combined with a hash of each cell's key
  double level = 0.95;       // two-sided coverage of the interval
};

// A ratio oriented so that > 1 means the candidate is better: baseline / candidate for a time,
// candidate / baseline for a throughput. NaN ratio when either side is empty.
struct Ratio {
  double ratio = 0, lo = 0, hi = 0;
  double level = 0.95;
  int resamples = 0;
  size_t baseline_n = 0, candidate_n = 0;
  bool empty() const { return baseline_n == 0 || candidate_n == 0; }
};

// Ratio of medians with a percentile-bootstrap interval resampling each side independently,
// seeded by opt.seed ^ stable_hash(key). Each side is sorted first, so the result depends only on
// the two sets of values and the key, never on the order a table collected them in.
Ratio speedup_ratio(std::span<const double> baseline, std::span<const double> candidate,
                    Direction direction, const std::string& key, const RatioOptions& opt);

// "2.00× [1.80, 2.25]" with JSON {ratio, lo, hi, level, baseline_n, n}; "—" (null) when empty.
// `decimals` sets the digits of all three numbers.
Cell ratio_cell(const Ratio& r, int decimals = 2);
// The baseline's own row: "1.00×" (data {ratio: 1}), or "—" when it has no trial.
Cell self_ratio_cell(bool has_trials);

// A cell key that names the trials on both sides (metric, then each side's sorted case keys and
// trial indexes), so the same trials get the same interval in every table.
std::string trials_key(const std::string& metric,
                       const std::vector<const results::TrialRecord*>& baseline,
                       const std::vector<const results::TrialRecord*>& candidate);

// One side of a ratio taken from trials: those with a value of the metric, and the values.
using MetricOf = std::function<std::optional<double>(const results::TrialRecord&)>;
struct TrialSample {
  std::vector<const results::TrialRecord*> trials;
  std::vector<double> values;
};
TrialSample sample_of(const std::vector<const results::TrialRecord*>& trials, const MetricOf& get);
// speedup_ratio of two trial samples keyed by trials_key(metric, ...): what every table calls, so
// the same trials print the same cell wherever they appear.
Ratio trials_ratio(const TrialSample& baseline, const TrialSample& candidate, Direction direction,
                   const std::string& metric, const RatioOptions& opt);

// The footnote every table with ratios prints: "<figure>: ratio of medians, baseline / method
// (<what>); 95% percentile-bootstrap interval, 2000 resamples of each side's trials."
std::string ratio_footnote(const std::string& figure, const std::string& what, Direction direction,
                           const RatioOptions& opt);
// Its interval part alone: "95% percentile-bootstrap interval, 2000 resamples of each side's
// trials".
std::string interval_text(const RatioOptions& opt);

}  // namespace accel::reports
