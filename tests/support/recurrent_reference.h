// Plain double-precision references for the recurrent-layer kernels (kernels/causal_conv1d,
// ssm_scan, gated_delta_rule), written from the formulas in those headers, each returning beside
// its values a first-order bound on the error of the float kernel's operation sequence (a running
// error bound, Higham-style, derived in recurrent_reference.cpp). Tests only: nothing here is fast.
#pragma once
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <span>
#include <vector>

#include "kernels/causal_conv1d.h"
#include "kernels/gated_delta_rule.h"
#include "kernels/ssm_scan.h"
#include "kernels/threading.h"
#include "tests/support/test_support.h"

namespace accel::test {

// Values with a per-element bound on |float kernel - value|.
struct Bounded {
  std::vector<double> value, bound;
};

// Outputs [n_tokens][channels] (dense) and the window after the call ([d_conv - 1][channels]).
struct ConvReference {
  Bounded out;
  std::vector<double> window;
};
ConvReference causal_conv1d_reference(const CausalConvShape& s, const float* x, size_t ldx,
                                      size_t n_tokens, const float* weight, const float* bias,
                                      bool silu, const float* window);

// y [n_tokens][n_heads * head_dim] (dense) and the final state [n_heads][head_dim][d_state].
struct ScanReference {
  Bounded y, state;
};
ScanReference ssm_scan_reference(const SsmScanShape& s, const SsmScanInputs& in, size_t n_tokens,
                                 const float* state);

// o [n_tokens][n_v_heads * head_v_dim] (dense) and the final state [n_v_heads][head_v_dim]
// [head_k_dim]. The state bound is the 2-norm bound of each row's error, repeated per element.
struct DeltaReference {
  Bounded o, state;
};
DeltaReference gated_delta_rule_reference(const GatedDeltaShape& s, const GatedDeltaInputs& in,
                                          size_t n_tokens, const float* state);

// The gated norms of kernels/gated_norm.h over dense [n_rows][width] rows: Mamba-2's
// (norm_groups groups, weight per element) when mamba2, else Gated DeltaNet's (heads of
// group_size, one head's weight shared).
Bounded gated_rmsnorm_reference(bool mamba2, const float* y, const float* z, size_t n_rows,
                                int width, int group_size, const float* weight, float eps);

// |got[i] - want.value[i]| <= want.bound[i] for all i; on failure names how many were out and
// the worst element by ratio error / bound. `ratio`, when given, receives that worst ratio.
::testing::AssertionResult within_bound(std::span<const float> got, const Bounded& want,
                                        double* ratio = nullptr);

// Calls step(t0, m) for consecutive calls that cover [0, n): call sizes from `chunks` in turn
// (cycled), the last cut to what remains. How the tests split one sequence into prefill chunks
// and decode steps.
template <class Step>
void in_calls(size_t n, const std::vector<size_t>& chunks, Step step) {
  for (size_t t = 0, i = 0; t < n; ++i) {
    const size_t m = std::min(chunks[i % chunks.size()], n - t);
    step(t, m);
    t += m;
  }
}

// The recurrent kernels' contract: run(chunks), returning {outputs, final state} for one sequence
// fed in calls of those sizes, gives the bits of one call on one thread for every chunking in
// `chunkings`, on 1 and on 2 threads (the pool's back-off off, so 2 threads really run).
template <class Run>
void expect_same_bits_for_any_split(size_t n, const std::vector<std::vector<size_t>>& chunkings,
                                    Run run) {
  ScopedParallelBackoff no_backoff(false);
  const int t0 = num_threads();
  set_num_threads(1);
  const auto one = run(std::vector<size_t>{n});
  for (int threads : {1, 2})
    for (const std::vector<size_t>& chunks : chunkings) {
      set_num_threads(threads);
      const auto got = run(chunks);
      EXPECT_TRUE(bit_equal(got.first, one.first))
          << threads << " threads, first call " << chunks[0];
      EXPECT_TRUE(bit_equal(got.second, one.second))
          << threads << " threads, first call " << chunks[0];
    }
  set_num_threads(t0);
}

}  // namespace accel::test
