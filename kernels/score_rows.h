// Dense rows of query-key scores, for callers that need whole probability rows rather than the
// attention output: dot products of query rows with strided key rows, a scaled row softmax with a
// polynomial exp, and the elementwise reductions that combine such rows. Numeric building blocks
// only: they know nothing of heads, layers, drafts or token selection.
#pragma once
#include <cstddef>

namespace accel {

// Floats per output row that dot_scores writes for n_keys keys: n_keys rounded up to its key
// tile. The padding columns hold scores against zero rows (0.0f) and are for the caller to ignore.
size_t dot_scores_row_stride(size_t n_keys);

// s[r * lds + j] = q[r] . k_j for r < n_rows, j < n_keys, where q[r] points at `dim` floats and
// key j is the `dim` floats at k + j * ldk. Every score is the fused chain
//   acc = 0; for t = 0..dim-1: acc = fma(q[r][t], k_j[t], acc)
// so it depends only on its own query and key, never on n_rows, n_keys or the tile it fell in.
// lds >= dot_scores_row_stride(n_keys); columns [n_keys, dot_scores_row_stride(n_keys)) are
// written too. Query rows sharing a call share each transposed key tile, so the keys are read
// once per call: callers pass as many rows as they can keep in cache (the per-row cost is one
// output row). Single-threaded; safe to call from several threads at once.
void dot_scores(const float* const* q, int n_rows, const float* k, size_t ldk, size_t n_keys,
                int dim, float* s, size_t lds);

// x[j] = softmax_j(x[j] * scale) over n > 0 entries, in place, with e^x from simd::exp_nonpos
// (~1-2 ulp; probabilities below e^-87 of the maximum become exactly 0). The maximum is exact in
// any order; the normaliser is summed in double over 16 fixed lanes (j mod 16) and then the lanes
// in order, so the vector width and the tail split never change a bit of the result.
void softmax_scaled(float* x, size_t n, float scale);

// acc[j] = x[j] > acc[j] ? x[j] : acc[j] for j < n (exact; a NaN on either side keeps acc[j]).
void max_accumulate(float* acc, const float* x, size_t n);

// out[j] = (x[0][j] + x[1][j] + ... + x[rows-1][j]) / rows, summed in float in ascending row order
// (row r at x + r * n), for j < n. rows >= 1. Parallel over j for long rows; each output's
// arithmetic is the same for any thread count.
void mean_of_rows(const float* x, size_t rows, size_t n, float* out);

}  // namespace accel
