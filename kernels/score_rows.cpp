// Implementations of score_rows.h: the transposed-key-tile dot-product micro-kernel, the scaled
// row softmax and the row reductions. Intrinsics come only from kernels/simd.h. Must not learn
// about heads, layers or what the scores are for, and no result may depend on the thread count.
#include "kernels/score_rows.h"

#include <algorithm>
#include <vector>

#include "kernels/simd.h"
#include "kernels/threading.h"

namespace accel {

namespace {

using namespace simd;

constexpr int kRows = 8;      // rows per micro-kernel call: 8 rows x 2 vectors = 16 accumulators
constexpr int kTile = 2 * W;  // keys per tile
constexpr size_t kAhead = 2;  // tiles between a prefetch and the tile's use

// kt[t][jj] = rows[jj][t] for jj < kTile, t < d. W x W blocks use the in-register transpose;
// leftover dims are copied one by one (the same bits either way).
void transpose_key_tile(const float* const* rows, int d, float* kt) {
  int t0 = 0;
  for (; t0 + W <= d; t0 += W)
    for (int jb = 0; jb < kTile; jb += W) {
      const float* src[W];
      for (int i = 0; i < W; ++i) src[i] = rows[jb + i] + t0;
      transpose_rows(src, kt + size_t(t0) * kTile + jb, kTile);
    }
  for (int t = t0; t < d; ++t)
    for (int jj = 0; jj < kTile; ++jj) kt[size_t(t) * kTile + jj] = rows[jj][t];
}

// NR rows of q (d floats each) against the transposed tile kt [d][kTile]: out rows of kTile
// scores, stride ldo. One accumulator lane per score, FMAs in ascending t.
template <int NR>
void score_tile(const float* const* q, const float* kt, int d, float* out, size_t ldo) {
  vf acc0[NR], acc1[NR];
  for (int r = 0; r < NR; ++r) acc0[r] = acc1[r] = zero();
  for (int t = 0; t < d; ++t) {
    const vf k0 = load(kt + size_t(t) * kTile);
    const vf k1 = load(kt + size_t(t) * kTile + W);
    for (int r = 0; r < NR; ++r) {
      const vf qb = set1(q[r][t]);
      acc0[r] = fma(qb, k0, acc0[r]);
      acc1[r] = fma(qb, k1, acc1[r]);
    }
  }
  for (int r = 0; r < NR; ++r) {
    store(out + size_t(r) * ldo, acc0[r]);
    store(out + size_t(r) * ldo + W, acc1[r]);
  }
}

void score_tile_n(int nr, const float* const* q, const float* kt, int d, float* out, size_t ldo) {
  switch (nr) {
    case 1:
      return score_tile<1>(q, kt, d, out, ldo);
    case 2:
      return score_tile<2>(q, kt, d, out, ldo);
    case 3:
      return score_tile<3>(q, kt, d, out, ldo);
    case 4:
      return score_tile<4>(q, kt, d, out, ldo);
    case 5:
      return score_tile<5>(q, kt, d, out, ldo);
    case 6:
      return score_tile<6>(q, kt, d, out, ldo);
    case 7:
      return score_tile<7>(q, kt, d, out, ldo);
    default:
      return score_tile<8>(q, kt, d, out, ldo);
  }
}

// Keys stream from memory once per call: ask for the tile kAhead tiles on ahead of time. Always
// inlined: GCC 12 drops calls it did not inline to a function of prefetches alone.
[[gnu::always_inline]] inline void prefetch_tile(const float* k, size_t ldk, size_t j0, int d) {
  for (size_t jj = 0; jj < size_t(kTile); ++jj)
    for (int t = 0; t < d; t += 16) prefetch(k + (j0 + jj) * ldk + size_t(t));
}

}  // namespace

size_t dot_scores_row_stride(size_t n_keys) {
  return (n_keys + kTile - 1) / kTile * kTile;
}

void dot_scores(const float* const* q, int n_rows, const float* k, size_t ldk, size_t n_keys,
                int dim, float* s, size_t lds) {
  if (n_rows < 1 || n_keys == 0) return;
  // Per-thread scratch, reused across calls: the transposed tile and the zero row that stands in
  // for keys past the end.
  static thread_local std::vector<float> kt, zero_row;
  kt.resize(size_t(dim) * kTile);
  zero_row.assign(size_t(dim), 0.f);
  const float* krow[kTile];
  for (size_t j0 = 0; j0 < n_keys; j0 += kTile) {
    for (size_t jj = 0; jj < size_t(kTile); ++jj)
      krow[jj] = j0 + jj < n_keys ? k + (j0 + jj) * ldk : zero_row.data();
    if (j0 + (kAhead + 1) * kTile <= n_keys) prefetch_tile(k, ldk, j0 + kAhead * kTile, dim);
    transpose_key_tile(krow, dim, kt.data());
    for (int i = 0; i < n_rows; i += kRows)
      score_tile_n(std::min(kRows, n_rows - i), q + i, kt.data(), dim, s + size_t(i) * lds + j0,
                   lds);
  }
}

void softmax_scaled(float* x, size_t n, float scale) {
  size_t j = 0;
  float m = x[0];
  if (n >= size_t(W)) {
    vf vm = load(x);
    for (j = W; j + W <= n; j += W) vm = max(vm, load(x + j));
    m = hmax(vm);
  }
  for (; j < n; ++j) m = x[j] > m ? x[j] : m;

  double lane[16];
  Lanes16d acc = lanes16d_zero();
  const vf vmx = set1(m), vsc = set1(scale);
  for (j = 0; j + 16 <= n; j += 16) {
    for (int u = 0; u < 16; u += W)
      store(x + j + u, exp_nonpos(mul(sub(load(x + j + u), vmx), vsc)));
    lanes16d_add(acc, x + j);
  }
  lanes16d_store(lane, acc);
  for (; j < n; ++j) {
    const float e = exp_nonpos((x[j] - m) * scale);
    x[j] = e;
    lane[j % 16] += double(e);
  }
  double sum = 0;
  for (double v : lane) sum += v;
  const float inv = float(1.0 / sum);
  for (size_t i = 0; i < n; ++i) x[i] *= inv;
}

void max_accumulate(float* acc, const float* x, size_t n) {
  for (size_t j = 0; j < n; ++j) acc[j] = x[j] > acc[j] ? x[j] : acc[j];
}

void mean_of_rows(const float* x, size_t rows, size_t n, float* out) {
  const float fr = float(rows);
  // Columns are independent and each sums its rows in order, so the split never changes a bit.
  parallel_ranges(n, double(n) * double(rows), [&](size_t j0, size_t j1, int) {
    for (size_t j = j0; j < j1; ++j) {
      float s = 0.f;
      for (size_t r = 0; r < rows; ++r) s += x[r * n + j];
      out[j] = s / fr;
    }
  });
}

}  // namespace accel
