// Test-only brute-force reference for methods/specprefill_scoring: the importance and chunk
// selection of methods.md §1.2.2-1.2.3 written plainly from the definition in double (explicit
// loops, the full [L,H,A,N] tensor, two-pass softmax, explicit pooling sums, a full sort for
// top-k). Deliberately shares no code with the fast path; must never be linked into the library.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <span>
#include <vector>

#include "methods/specprefill_scoring.h"

namespace accel::specprefill::reference {

// Pool one row in double: zero padding with divisor k, or divide by the in-range count.
inline std::vector<double> pool_row(const std::vector<double>& x, int k, PoolEdge edge) {
  const long n = long(x.size()), r = k / 2;
  std::vector<double> out(x.size());
  for (long i = 0; i < n; ++i) {
    double s = 0;
    long count = 0;
    for (long t = i - r; t <= i + r; ++t)
      if (t >= 0 && t < n) {
        s += x[size_t(t)];
        ++count;
      }
    out[size_t(i)] = edge == PoolEdge::ZeroPad ? s / k : s / double(count);
  }
  return out;
}

// Importance in double. Same input conventions as token_importance (strides 0 = dense).
inline std::vector<double> importance(std::span<const LayerQK> layers, const DraftShape& sh,
                                      const ScoringOptions& opt) {
  const size_t L = layers.size(), H = size_t(sh.n_heads), Hkv = size_t(sh.n_kv_heads);
  const size_t d = size_t(sh.head_dim), A = size_t(sh.n_queries), N = sh.n_keys;
  const size_t group = H / Hkv;
  const bool pool = opt.pool_kernel > 1;
  // P[l][h][a][j]
  std::vector<double> P(L * H * A * N);
  auto at = [&](size_t l, size_t h, size_t a, size_t j) -> double& {
    return P[((l * H + h) * A + a) * N + j];
  };
  for (size_t l = 0; l < L; ++l) {
    const size_t qs = layers[l].q_stride ? layers[l].q_stride : H * d;
    const size_t ks = layers[l].k_stride ? layers[l].k_stride : Hkv * d;
    for (size_t h = 0; h < H; ++h) {
      const size_t g = h / group;
      for (size_t a = 0; a < A; ++a) {
        const float* q = layers[l].q + a * qs + h * d;
        for (size_t j = 0; j < N; ++j) {
          const float* k = layers[l].k + j * ks + g * d;
          double dot = 0;
          for (size_t t = 0; t < d; ++t) dot += double(q[t]) * double(k[t]);
          at(l, h, a, j) = dot / std::sqrt(double(d));
        }
        double m = -INFINITY;  // pass 1: max
        for (size_t j = 0; j < N; ++j) m = std::max(m, at(l, h, a, j));
        double sum = 0;  // pass 2: exp and sum
        for (size_t j = 0; j < N; ++j) sum += std::exp(at(l, h, a, j) - m);
        for (size_t j = 0; j < N; ++j) at(l, h, a, j) = std::exp(at(l, h, a, j) - m) / sum;
      }
    }
  }
  const bool pool_first = pool && opt.order == AggregationOrder::PoolMaxMean;
  if (pool_first)
    for (size_t l = 0; l < L; ++l)
      for (size_t h = 0; h < H; ++h)
        for (size_t a = 0; a < A; ++a) {
          std::vector<double> row(&at(l, h, a, 0), &at(l, h, a, 0) + N);
          row = pool_row(row, opt.pool_kernel, opt.pool_edge);
          std::copy(row.begin(), row.end(), &at(l, h, a, 0));
        }
  std::vector<double> imp(N, 0.0);
  for (size_t j = 0; j < N; ++j) {
    for (size_t a = 0; a < A; ++a) {
      double m = -INFINITY;
      for (size_t l = 0; l < L; ++l)
        for (size_t h = 0; h < H; ++h) m = std::max(m, at(l, h, a, j));
      imp[j] += m;
    }
    imp[j] /= double(A);
  }
  if (pool && !pool_first) imp = pool_row(imp, opt.pool_kernel, opt.pool_edge);
  return imp;
}

// Chunk scores: mean over each chunk's actual length.
inline std::vector<double> chunk_scores(const std::vector<double>& imp, int chunk) {
  std::vector<double> s;
  for (size_t a = 0; a < imp.size(); a += size_t(chunk)) {
    const size_t b = std::min(imp.size(), a + size_t(chunk));
    double sum = 0;
    for (size_t j = a; j < b; ++j) sum += imp[j];
    s.push_back(sum / double(b - a));
  }
  return s;
}

inline size_t budget(size_t n_chunks, double keep, KeepRounding rounding) {
  const double want = double(n_chunks) * keep;
  return rounding == KeepRounding::Ceil ? size_t(std::ceil(want))
                                        : std::max<size_t>(1, size_t(std::floor(want)));
}

// Selection: forced tail chunks (any chunk with a position in [n - T, n)), then the best of the
// rest by (score desc, index asc) from a full sort, up to the budget; sorted positions.
inline Selection select(const std::vector<double>& imp, int chunk, double keep,
                        const SelectOptions& opt = {}) {
  Selection sel;
  const size_t n = imp.size();
  const std::vector<double> score = chunk_scores(imp, chunk);
  const size_t nc = score.size();
  sel.n_chunks = int32_t(nc);
  if (nc == 0) return sel;
  const size_t want = budget(nc, keep, opt.keep_rounding);
  sel.budget_chunks = int32_t(want);
  const size_t T = std::min<size_t>(size_t(opt.force_tail_tokens), n);
  std::vector<bool> keep_c(nc, false);
  size_t forced = 0;
  for (size_t c = 0; c < nc; ++c) {
    const size_t end = std::min(n, (c + 1) * size_t(chunk));  // exclusive
    if (T > 0 && end > n - T) {
      keep_c[c] = true;
      ++forced;
    }
  }
  sel.forced_chunks = int32_t(forced);
  sel.tail_exceeded_budget = forced > want;
  std::vector<size_t> order;
  for (size_t c = 0; c < nc; ++c)
    if (!keep_c[c]) order.push_back(c);
  std::sort(order.begin(), order.end(), [&](size_t x, size_t y) {
    if (score[x] != score[y]) return score[x] > score[y];
    return x < y;
  });
  for (size_t i = 0; i + forced < want && i < order.size(); ++i) keep_c[order[i]] = true;
  for (size_t c = 0; c < nc; ++c) {
    if (!keep_c[c]) continue;
    sel.kept_chunks.push_back(int32_t(c));
    for (size_t j = c * size_t(chunk); j < std::min(n, (c + 1) * size_t(chunk)); ++j)
      sel.kept_positions.push_back(int32_t(j));
  }
  return sel;
}

// The k-th best minus the (k+1)-th best non-forced chunk score (infinity when there is no
// (k+1)-th): selections are only comparable between implementations when this gap exceeds their
// numeric disagreement.
inline double selection_gap(const std::vector<double>& imp, int chunk, double keep,
                            const SelectOptions& opt = {}) {
  const Selection sel = select(imp, chunk, keep, opt);
  const std::vector<double> score = chunk_scores(imp, chunk);
  const size_t take = size_t(std::max(0, sel.budget_chunks - sel.forced_chunks));
  const size_t ranked = score.size() - size_t(sel.forced_chunks);
  if (take == 0 || take >= ranked) return INFINITY;
  std::vector<double> s(score.begin(), score.begin() + std::ptrdiff_t(ranked));
  std::sort(s.begin(), s.end(), std::greater<>());
  return s[take - 1] - s[take];
}

}  // namespace accel::specprefill::reference
