// The Mamba-2 selective scan (SSD recurrence with a scalar decay per head) with grouped B/C, dt
// bias + softplus and the D skip, over a caller-owned state. Knows nothing of layers or caches;
// the in-projection split, conv, gate and norm around it belong to the model.
//
// Definition (llama.cpp ggml_ssm_scan for a {1, n_head} A, plus mamba-base.cpp's dt bias and D):
// for token t, head h in group g = h / (n_heads / n_groups), row i < head_dim, state column n:
//   dt' = softplus(dt[t][h] + dt_bias[h])        (softplus(z) = z for z > 20, else log(1 + e^z))
//   a   = exp(dt' * A[h])                         (A as stored in GGUF: -exp(A_log), so a <= 1)
//   S[h][i][n] = S[h][i][n] * a + B[t][g][n] * (x[t][h][i] * dt')
//   y[t][h][i] = sum_n S[h][i][n] * C[t][g][n]  +  D[h] * x[t][h][i]
//
// Batch-invariance contract (tested in tests/kernels/ssm_scan_test.cpp): the scan runs in
// sequential token order on every path. Each state row S[h][i] is advanced token by token by the
// same operation sequence whatever the call, so y and the final state are bit-identical for any
// split of a sequence into calls (a decode step is a call with one token), any thread count, and
// any position of the token inside the call. Within one binary: an AVX-512 build sums in a
// different lane tree than an AVX2 build. Prefill is blocked, not the quadratic SSD chunk form:
// heads x row groups of 8 are the parallel items, each keeps its 8 state rows in L1 over all
// tokens; tests/bench/bench_recurrent.cpp measures it against attention of the same width.
#pragma once
#include <cstddef>

namespace accel {

struct SsmScanShape {
  int n_heads = 0;   // ssm_dt_rank in GGUF
  int head_dim = 0;  // d_inner / n_heads
  int d_state = 0;
  int n_groups = 0;  // must divide n_heads
};

// Row-major inputs with explicit row strides (they are usually views into one xBC buffer).
struct SsmScanInputs {
  const float* x = nullptr;  // [n_tokens][n_heads * head_dim]
  size_t ldx = 0;
  const float* dt = nullptr;  // [n_tokens][n_heads], before the bias
  size_t lddt = 0;
  const float* B = nullptr;  // [n_tokens][n_groups * d_state]
  size_t ldb = 0;
  const float* C = nullptr;  // [n_tokens][n_groups * d_state]
  size_t ldc = 0;
  const float* dt_bias = nullptr;  // [n_heads] or nullptr (zero)
  const float* A = nullptr;        // [n_heads]
  const float* D = nullptr;        // [n_heads] or nullptr (no skip)
};

// state: [n_heads][head_dim][d_state], advanced in place over n_tokens tokens.
// y: [n_tokens][n_heads * head_dim], row stride ldy; must not overlap the inputs or the state.
void ssm_scan(const SsmScanShape& s, const SsmScanInputs& in, size_t n_tokens, float* state,
              float* y, size_t ldy);

// Elements of one layer's scan state: n_heads * head_dim * d_state.
size_t ssm_state_elements(const SsmScanShape& s);

// softplus as above, in float: the one definition the scan and the gated-delta gates use.
float softplus(float z);

}  // namespace accel
