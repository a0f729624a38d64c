// How the recurrent scans (ssm_scan, gated_delta_rule) split their work: items of (head, 8 state
// rows) that walk blocks of tokens in order, with a zero-padded scratch copy for a head's short
// last group. For those kernels' .cpp files only. Owns the schedule, never an operation: a row's
// arithmetic is the caller's, and it is the same whichever item, block or thread runs it.
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstring>
#include <vector>

#include "kernels/threading.h"

namespace accel::recurrent {

constexpr int kRows = 8;  // state rows per item (one hsum8 per token)
// Inside a token block every item of a head reads the same block of inputs, which stays in L2.
// Whole-sequence items read each token's inputs once per item from memory: at 4K tokens on one
// thread that took 2.6-2.8x the CPU time (measured together with causal_conv1d's earlier
// column-strip order).
constexpr size_t kTokenBlock = 64;

// Calls rows(h, r0, nr, st, t0, t1) for every head h < n_heads, every group of kRows of its
// `rows_per_head` state rows (r0 the first, nr <= kRows of them real) and every token block
// [t0, t1) of [0, n_tokens), blocks in order. st points at kRows rows of `row_len` floats: the
// state's own rows, or for a short group a zero-padded copy written back afterwards, so the
// callee always runs kRows rows. `flops_per_row_token` sizes the parallel regions.
template <class Rows>
void for_each_row_group(size_t n_tokens, int n_heads, int rows_per_head, size_t row_len,
                        float* state, double flops_per_row_token, Rows rows) {
  const size_t groups = size_t(rows_per_head + kRows - 1) / kRows;
  for (size_t t0 = 0; t0 < n_tokens; t0 += kTokenBlock) {
    const size_t t1 = std::min(n_tokens, t0 + kTokenBlock);
    const double work =
        flops_per_row_token * double(t1 - t0) * double(n_heads) * double(rows_per_head);
    parallel_for(size_t(n_heads) * groups, work, [&](size_t item, int) {
      const int h = int(item / groups), r0 = int(item % groups) * kRows;
      const int nr = std::min(kRows, rows_per_head - r0);
      float* st = state + (size_t(h) * size_t(rows_per_head) + size_t(r0)) * row_len;
      if (nr == kRows) return rows(h, r0, nr, st, t0, t1);
      std::vector<float> pad(kRows * row_len, 0.f);
      std::memcpy(pad.data(), st, size_t(nr) * row_len * sizeof(float));
      rows(h, r0, nr, pad.data(), t0, t1);
      std::memcpy(st, pad.data(), size_t(nr) * row_len * sizeof(float));
    });
  }
}

}  // namespace accel::recurrent
