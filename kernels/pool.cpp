// 1-D average pooling (see pool.h). The interior is vectorised across outputs while each output
// still accumulates its window in ascending order from 0, the same order the edge outputs use; no
// running (sliding) sum, whose error would grow with n and make an output depend on its
// neighbours' history. Must not learn about tokens or attention.
#include "kernels/pool.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "kernels/simd.h"

namespace accel {

namespace {

void check_kernel(int k) {
  if (k < 1 || k % 2 == 0)
    throw std::invalid_argument("[avg_pool1d] kernel size k must be odd and >= 1, got " +
                                std::to_string(k));
}

}  // namespace

void avg_pool1d(const float* x, size_t n, int k, PoolEdge edge, float* out) {
  check_kernel(k);
  if (n == 0) return;
  const size_t r = size_t(k / 2);
  const float fk = float(k);

  // Edge outputs: [0, lo) and [hi, n), where the window leaves the row. Out-of-range terms are
  // skipped; in ZeroPad mode that equals adding 0.0f, which is exact.
  const size_t lo = std::min(r, n);
  const size_t hi = n > r ? std::max(n - r, lo) : lo;
  auto edge_out = [&](size_t i) {
    const size_t a = i >= r ? i - r : 0;
    const size_t b = std::min(i + r, n - 1);
    float s = 0.f;
    for (size_t t = a; t <= b; ++t) s += x[t];
    out[i] = edge == PoolEdge::ZeroPad ? s / fk : s / float(b - a + 1);
  };
  for (size_t i = 0; i < lo; ++i) edge_out(i);
  for (size_t i = hi; i < n; ++i) edge_out(i);

  // Interior [lo, hi): full windows, divisor k in both modes. A vector of outputs keeps its
  // partial sums in a register across the k window offsets; the SIMD lanes and the scalar tail
  // perform the same adds in the same order and one correctly rounded division, so they agree.
  if (hi > lo) {
    float* o = out + lo;
    const size_t m = hi - lo;
    const float* base = x + lo - r;  // window of output lo starts here
    size_t i = 0;
    const simd::vf vk = simd::set1(fk);
    for (; i + simd::W <= m; i += simd::W) {
      simd::vf acc = simd::zero();
      for (int t = 0; t < k; ++t) acc = simd::add(acc, simd::load(base + i + size_t(t)));
      simd::store(o + i, simd::div(acc, vk));
    }
    for (; i < m; ++i) {
      float acc = 0.f;
      for (int t = 0; t < k; ++t) acc += base[i + size_t(t)];
      o[i] = acc / fk;
    }
  }
}

void avg_pool1d_reference(const double* x, size_t n, int k, PoolEdge edge, double* out) {
  check_kernel(k);
  const long r = k / 2;
  for (long i = 0; i < long(n); ++i) {
    double s = 0;
    long count = 0;
    for (long t = i - r; t <= i + r; ++t) {
      if (t < 0 || t >= long(n)) continue;
      s += x[t];
      ++count;
    }
    out[i] = s / double(edge == PoolEdge::ZeroPad ? k : count);
  }
}

}  // namespace accel
