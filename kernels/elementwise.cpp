// Implementations of elementwise.h. Each loop is written so that a row's result depends only on
// that row; no cross-row reductions, no batch-dependent branches.
#include "kernels/elementwise.h"

#include <cassert>
#include <cmath>
#include <vector>

#include "kernels/threading.h"

namespace accel {

namespace {
// Work estimates for parallel_for's threshold, in its flop-like units (GEMM's multiply-add = 2,
// 0.0080 ns of one thread's CPU time on the 2-core Xeon of issue 9), from each loop's serial CPU
// time in tests/bench/bench_threads_under_load BM_SerialCost: rmsnorm 0.63 ns per element; rope
// 1071 ns per row of 32 angles and 12 heads, 1020 ns with 1 head, so 0.145 ns per rotated pair
// and 31.7 ns per angle (one pow, one cos, one sin in double).
constexpr double kRmsnormWorkPerElement = 80;
constexpr double kRopeWorkPerAngle = 4000;
constexpr double kRopeWorkPerPair = 18;
}  // namespace

void rmsnorm(const float* x, size_t n_rows, size_t dim, size_t ldx, const float* weight, float eps,
             float* out, size_t ldo) {
  const double work = double(n_rows) * double(dim) * kRmsnormWorkPerElement;
  parallel_ranges(n_rows, work, [&](size_t r0, size_t r1, int) {
    for (size_t r = r0; r < r1; ++r) {
      const float* xr = x + r * ldx;
      float* o = out + r * ldo;
      // Sum of squares in double: one fixed sequential order, and no loss at 32K-wide activations.
      double ss = 0;
      for (size_t i = 0; i < dim; ++i) ss += double(xr[i]) * double(xr[i]);
      const float inv = float(1.0 / std::sqrt(ss / double(dim) + double(eps)));
      for (size_t i = 0; i < dim; ++i) o[i] = xr[i] * inv * weight[i];
    }
  });
}

void rmsnorm_reference(const float* x, size_t n_rows, size_t dim, size_t ldx, const float* weight,
                       float eps, double* out, size_t ldo) {
  for (size_t r = 0; r < n_rows; ++r) {
    double ss = 0;
    for (size_t i = 0; i < dim; ++i) ss += double(x[r * ldx + i]) * x[r * ldx + i];
    const double inv = 1.0 / std::sqrt(ss / dim + eps);
    for (size_t i = 0; i < dim; ++i) out[r * ldo + i] = x[r * ldx + i] * inv * weight[i];
  }
}

namespace {
// Pair (a, b) offsets of rotation pair i within a head.
inline void rope_pair(const RopeParams& p, int i, int& a, int& b) {
  if (p.layout == RopeLayout::Adjacent) {
    a = 2 * i;
    b = 2 * i + 1;
  } else {
    a = i;
    b = i + p.n_rot / 2;
  }
}
inline double rope_theta(const RopeParams& p, int32_t pos, int i) {
  return double(pos) * double(p.freq_scale) *
         std::pow(double(p.freq_base), -2.0 * double(i) / double(p.n_rot));
}
}  // namespace

void rope(float* x, size_t n_rows, size_t ld, int n_heads, const int32_t* pos,
          const RopeParams& p) {
  assert(p.n_rot % 2 == 0 && p.n_rot <= p.head_dim);
  const int half = p.n_rot / 2;
  const double work = double(n_rows) * (double(half) * kRopeWorkPerAngle +
                                        double(n_heads) * double(half) * kRopeWorkPerPair);
  parallel_ranges(n_rows, work, [&](size_t r0, size_t r1, int) {
    std::vector<float> cs(size_t(half) * 2);
    for (size_t r = r0; r < r1; ++r) {
      for (int i = 0; i < half; ++i) {
        const double th = rope_theta(p, pos[r], i);
        cs[2 * i] = float(std::cos(th));
        cs[2 * i + 1] = float(std::sin(th));
      }
      for (int h = 0; h < n_heads; ++h) {
        float* v = x + r * ld + size_t(h) * p.head_dim;
        for (int i = 0; i < half; ++i) {
          int a, b;
          rope_pair(p, i, a, b);
          const float x0 = v[a], x1 = v[b], c = cs[2 * i], s = cs[2 * i + 1];
          v[a] = x0 * c - x1 * s;
          v[b] = x0 * s + x1 * c;
        }
      }
    }
  });
}

void rope_reference(double* x, size_t n_rows, size_t ld, int n_heads, const int32_t* pos,
                    const RopeParams& p) {
  for (size_t r = 0; r < n_rows; ++r)
    for (int h = 0; h < n_heads; ++h)
      for (int i = 0; i < p.n_rot / 2; ++i) {
        int a, b;
        rope_pair(p, i, a, b);
        double* v = x + r * ld + size_t(h) * p.head_dim;
        const double th = rope_theta(p, pos[r], i), x0 = v[a], x1 = v[b];
        v[a] = x0 * std::cos(th) - x1 * std::sin(th);
        v[b] = x0 * std::sin(th) + x1 * std::cos(th);
      }
}

void softmax(float* x, size_t n) {
  if (n == 0) return;
  float m = x[0];
  for (size_t i = 1; i < n; ++i) m = std::fmax(m, x[i]);
  double sum = 0;
  for (size_t i = 0; i < n; ++i) {
    x[i] = std::exp(x[i] - m);
    sum += x[i];
  }
  const float inv = float(1.0 / sum);
  for (size_t i = 0; i < n; ++i) x[i] *= inv;
}

double log_sum_exp(const float* x, size_t n) {
  if (n == 0) return -INFINITY;
  double m = x[0];
  for (size_t i = 1; i < n; ++i) m = std::fmax(m, double(x[i]));
  // All -inf (log 0) or any +inf: the answer is m; x - m below would be inf - inf = NaN.
  if (std::isinf(m)) return m;
  double sum = 0;
  for (size_t i = 0; i < n; ++i) sum += std::exp(double(x[i]) - m);
  return m + std::log(sum);
}

void swiglu(const float* gate, const float* up, float* out, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    const float g = gate[i];
    out[i] = g / (1.f + std::exp(-g)) * up[i];
  }
}

void add_inplace(float* y, const float* x, size_t n) {
  for (size_t i = 0; i < n; ++i) y[i] += x[i];
}

}  // namespace accel
