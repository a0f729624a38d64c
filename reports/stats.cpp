// Implementations of stats.h. Resampling uses a local SplitMix64 so that intervals are identical
// across platforms and standard libraries (std::uniform_int_distribution is not portable).
#include "reports/stats.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace accel::reports {

namespace {
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

struct SplitMix64 {
  uint64_t s;
  uint64_t next() {
    uint64_t z = (s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  // Uniform in [0, n) by rejection, so small n carry no modulo bias.
  size_t below(size_t n) {
    const uint64_t limit = UINT64_MAX - UINT64_MAX % n;
    uint64_t v;
    do v = next();
    while (v >= limit);
    return size_t(v % n);
  }
};

double sorted_percentile(const std::vector<double>& s, double q) {
  if (s.empty()) return kNaN;
  const double pos = std::clamp(q, 0.0, 1.0) * double(s.size() - 1);
  const size_t i = size_t(std::floor(pos));
  const double frac = pos - double(i);
  if (i + 1 >= s.size()) return s.back();
  return s[i] + frac * (s[i + 1] - s[i]);
}

double center_of(std::vector<double>& v, Center c) {
  if (c == Center::Mean) return mean(v);
  std::sort(v.begin(), v.end());
  return sorted_percentile(v, 0.5);
}
}  // namespace

double mean(std::span<const double> x) {
  if (x.empty()) return kNaN;
  double s = 0;
  for (double v : x) s += v;
  return s / double(x.size());
}

double sample_std(std::span<const double> x) {
  if (x.size() < 2) return kNaN;
  const double m = mean(x);
  double ss = 0;
  for (double v : x) ss += (v - m) * (v - m);
  return std::sqrt(ss / double(x.size() - 1));
}

double percentile(std::span<const double> x, double q) {
  std::vector<double> s(x.begin(), x.end());
  std::sort(s.begin(), s.end());
  return sorted_percentile(s, q);
}

double median(std::span<const double> x) {
  return percentile(x, 0.5);
}

Interval bootstrap_ratio(std::span<const double> num, std::span<const double> den, Center center,
                         int resamples, uint64_t seed, double level) {
  Interval out;
  if (num.empty() || den.empty()) return {kNaN, kNaN, kNaN};
  {
    std::vector<double> a(num.begin(), num.end()), b(den.begin(), den.end());
    out.estimate = center_of(a, center) / center_of(b, center);
  }
  SplitMix64 rng{seed};
  std::vector<double> ratios;
  ratios.reserve(size_t(std::max(resamples, 1)));
  std::vector<double> a(num.size()), b(den.size());
  for (int r = 0; r < resamples; ++r) {
    for (auto& v : a) v = num[rng.below(num.size())];
    for (auto& v : b) v = den[rng.below(den.size())];
    ratios.push_back(center_of(a, center) / center_of(b, center));
  }
  std::sort(ratios.begin(), ratios.end());
  const double alpha = (1.0 - level) / 2.0;
  out.lo = sorted_percentile(ratios, alpha);
  out.hi = sorted_percentile(ratios, 1.0 - alpha);
  return out;
}

MannWhitney mann_whitney(std::span<const double> a, std::span<const double> b) {
  MannWhitney r;
  const double na = double(a.size()), nb = double(b.size());
  if (a.empty() || b.empty()) return r;
  // Ranks of the pooled sample with mid-ranks for ties; T collects sum(t^3 - t) over tie groups.
  std::vector<std::pair<double, int>> all;
  for (double v : a) all.push_back({v, 0});
  for (double v : b) all.push_back({v, 1});
  std::sort(all.begin(), all.end(), [](auto& x, auto& y) { return x.first < y.first; });
  double rank_sum_a = 0, ties = 0;
  for (size_t i = 0; i < all.size();) {
    size_t j = i;
    while (j < all.size() && all[j].first == all[i].first) ++j;
    const double mid = (double(i + 1) + double(j)) / 2.0;
    for (size_t k = i; k < j; ++k)
      if (all[k].second == 0) rank_sum_a += mid;
    const double t = double(j - i);
    ties += t * t * t - t;
    i = j;
  }
  r.u_a = rank_sum_a - na * (na + 1) / 2.0;
  r.u_b = na * nb - r.u_a;
  const double n = na + nb;
  const double mu = na * nb / 2.0;
  const double var = na * nb / 12.0 * ((n + 1) - ties / (n * (n - 1)));
  if (var <= 0) return r;  // all values tied: no evidence either way
  r.z = (r.u_a - mu) / std::sqrt(var);
  r.p = std::erfc(std::fabs(r.z) / std::sqrt(2.0));
  return r;
}

uint64_t stable_hash(std::span<const char> s) {
  uint64_t h = 1469598103934665603ull;
  for (char c : s) {
    h ^= uint8_t(c);
    h *= 1099511628211ull;
  }
  return h;
}

}  // namespace accel::reports
