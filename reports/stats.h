// Statistics for reports and compare: mean, sample standard deviation, median and percentiles,
// seeded percentile-bootstrap intervals for ratios of means or medians, and the Mann-Whitney U
// test. Pure functions over spans of doubles; no store access here.
#pragma once
#include <cstdint>
#include <span>

namespace accel::reports {

double mean(std::span<const double> x);        // NaN when empty
double sample_std(std::span<const double> x);  // n-1 denominator; NaN when n < 2
double median(std::span<const double> x);      // NaN when empty
// Linear interpolation between order statistics (R type 7 / numpy default), q in [0, 1].
double percentile(std::span<const double> x, double q);

struct Interval {
  double estimate = 0;  // the statistic on the original samples
  double lo = 0;        // NaN when either side is empty
  double hi = 0;
};

enum class Center { Mean, Median };

// Percentile bootstrap of center(num) / center(den): each resample draws |num| values from num
// and |den| values from den independently with replacement (the two sides are unpaired trials).
// `level` is the two-sided coverage (0.95 -> 2.5th and 97.5th percentiles). Deterministic in seed.
Interval bootstrap_ratio(std::span<const double> num, std::span<const double> den, Center center,
                         int resamples = 2000, uint64_t seed = 1, double level = 0.95);

struct MannWhitney {
  double u_a = 0;  // U statistic of sample a (number of pairs with a > b, ties count 1/2)
  double u_b = 0;  // n_a * n_b - u_a
  double z = 0;    // normal approximation, tie-corrected, no continuity correction
  double p = 1;    // two-sided p-value of the normal approximation
};
MannWhitney mann_whitney(std::span<const double> a, std::span<const double> b);

// FNV-1a of a string: stable seeds for bootstrap cells independent of iteration order.
uint64_t stable_hash(std::span<const char> s);

}  // namespace accel::reports
