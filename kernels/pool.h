// 1-D average pooling along one row (stride 1, odd kernel, output length = input length), with the
// two edge conventions in use: zero padding with a fixed divisor, or renormalising by the in-range
// count. A numeric building block only: it knows nothing of tokens, attention or SpecPrefill.
#pragma once
#include <cstddef>

namespace accel {

enum class PoolEdge {
  // PyTorch avg_pool1d(kernel_size=k, stride=1, padding=k/2, count_include_pad=True): out-of-range
  // neighbours count as zeros and every output is divided by k, so edges are attenuated.
  ZeroPad,
  // Divide by the number of in-range neighbours (min(i+r, n-1) - max(i-r, 0) + 1), no attenuation.
  Renormalize,
};

// out[i] = (sum of x[i-r .. i+r] that lie in [0, n)) / divisor, r = k/2, for i < n. The sum runs
// over the window in ascending index order in float, then is divided (not multiplied by a
// reciprocal, as PyTorch does) by the divisor, so every output is one fixed operation sequence
// whatever n is. k must be odd and >= 1 (k = 1 copies); throws std::invalid_argument otherwise.
// out must not alias x. n = 0 is a no-op.
void avg_pool1d(const float* x, size_t n, int k, PoolEdge edge, float* out);

// The same in double, written directly from the definition, for tests.
void avg_pool1d_reference(const double* x, size_t n, int k, PoolEdge edge, double* out);

}  // namespace accel
