// How the recurrent scans (ssm_scan, gated_delta_rule) split their work: items of (head, 8 state
// rows) that walk blocks of tokens in order on an aligned scratch copy of their rows (zero-padded
// for a head's short last group). For those kernels' .cpp files only. Owns the schedule, never an
// operation: a row's arithmetic is the caller's, and it is the same whichever item, block or thread
// runs it.
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <new>

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
// A thread's 64-byte-aligned scratch of at least n floats (kept for the thread's lifetime).
inline float* aligned_rows(size_t n) {
  struct Buffer {
    float* p = nullptr;
    size_t n = 0;
    ~Buffer() { std::free(p); }
  };
  thread_local Buffer b;
  if (n > b.n) {
    std::free(b.p);
    b.p = static_cast<float*>(std::aligned_alloc(64, (n * sizeof(float) + 63) / 64 * 64));
    if (!b.p) throw std::bad_alloc();
    b.n = n;
  }
  return b.p;
}

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
      // The rows run in a 64-byte-aligned copy, since the state lives wherever its owner
      // allocated it; full-vector stores that split cache lines (and then forward poorly to the
      // next token's loads) are the likely reason the unaligned rows were slower
      // (bench_recurrent, 4096 tokens, 2 threads, Zen 5, 2026-11-28: Mamba-2 160 -> 128 ms,
      // Gated DeltaNet 263 -> 174 ms). Rows past nr are zero padding.
      float* rows_buf = aligned_rows(kRows * row_len);
      std::memcpy(rows_buf, st, size_t(nr) * row_len * sizeof(float));
      std::fill(rows_buf + size_t(nr) * row_len, rows_buf + kRows * row_len, 0.f);
      rows(h, r0, nr, rows_buf, t0, t1);
      std::memcpy(st, rows_buf, size_t(nr) * row_len * sizeof(float));
    });
  }
}

}  // namespace accel::recurrent
