// Vectorised over channels (W lanes, a masked last block), parallel over channel blocks: each
// block owns its columns of the window, so blocks never share a byte. See causal_conv1d.h for the
// definition and the batch-invariance contract this code keeps.
#include "kernels/causal_conv1d.h"

#include <algorithm>
#include <vector>

#include "kernels/check.h"
#include "kernels/recurrent_simd.h"
#include "kernels/simd.h"
#include "kernels/threading.h"

namespace accel {
namespace {

using namespace simd;

struct ConvArgs {
  const CausalConvShape& s;
  const float* x;
  size_t ldx, n;
  const float* wt;  // [d_conv][channels]: the weight transposed so a tap is a contiguous row
  const float* bias;
  bool silu;
  float* window;
  float* out;
  size_t ldo;
};

// Input row tau - (d_conv - 1) + k for output token t, tap k: window rows come first.
inline const float* input_row(const ConvArgs& a, size_t t, int k) {
  const size_t j = t + size_t(k);  // index into (window ++ x)
  const size_t w_rows = size_t(a.s.d_conv - 1);
  return j < w_rows ? a.window + j * size_t(a.s.channels) : a.x + (j - w_rows) * a.ldx;
}

// Outputs of channels [c0, c1) for every token (row by row, so each row's segment is read
// contiguously), then that range's new window. c0 is a multiple of W; only the last vector of the
// last range is partial.
void conv_range(const ConvArgs& a, int c0, int c1) {
  const size_t C = size_t(a.s.channels);
  const int K = a.s.d_conv;
  for (size_t t = 0; t < a.n; ++t)
    for (int c = c0; c < c1; c += W) {
      const vmask m = first(std::min(W, c1 - c));
      vf acc = mul(load_n(a.wt + c, m), load_n(input_row(a, t, 0) + c, m));
      for (int k = 1; k < K; ++k)
        acc = fma(load_n(a.wt + size_t(k) * C + c, m), load_n(input_row(a, t, k) + c, m), acc);
      if (a.bias) acc = add(acc, load_n(a.bias + c, m));
      if (a.silu) acc = silu(acc);
      store_n(a.out + t * a.ldo + c, acc, m);
    }
  // New window row i is (window ++ x)[n + i]; ascending i reads only rows at or after the one it
  // writes, so the shift is safe in place.
  const size_t w_rows = size_t(K - 1);
  for (size_t i = 0; i < w_rows; ++i) {
    const size_t j = a.n + i;
    const float* src = j < w_rows ? a.window + j * C : a.x + (j - w_rows) * a.ldx;
    for (int c = c0; c < c1; c += W) {
      const vmask m = first(std::min(W, c1 - c));
      store_n(a.window + i * C + c, load_n(src + c, m), m);
    }
  }
}

}  // namespace

void causal_conv1d(const CausalConvShape& s, const float* x, size_t ldx, size_t n_tokens,
                   const float* weight, const float* bias, bool silu, float* window, float* out,
                   size_t ldo) {
  ACCEL_CHECK(s.channels >= 1 && s.d_conv >= 1, "channels %d, d_conv %d", s.channels, s.d_conv);
  ACCEL_CHECK(n_tokens == 0 || (ldx >= size_t(s.channels) && ldo >= size_t(s.channels)),
              "ldx %zu, ldo %zu < channels %d", ldx, ldo, s.channels);
  if (n_tokens == 0) return;
  const size_t C = size_t(s.channels), K = size_t(s.d_conv);
  std::vector<float> wt(K * C);
  for (size_t c = 0; c < C; ++c)
    for (size_t k = 0; k < K; ++k) wt[k * C + c] = weight[c * K + k];
  const ConvArgs a{s, x, ldx, n_tokens, wt.data(), bias, silu, window, out, ldo};
  const size_t n_blocks = (C + W - 1) / W;
  const double work = 2.0 * double(n_tokens) * double(C) * double(K + (silu ? 8 : 0));
  parallel_ranges(n_blocks, work, [&](size_t b0, size_t b1, int) {
    conv_range(a, int(b0 * W), std::min(s.channels, int(b1 * W)));
  });
}

}  // namespace accel
