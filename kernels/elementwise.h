// Row-wise kernels of a transformer block that are not GEMM or attention: RMSNorm, RoPE at explicit
// positions, softmax, SwiGLU, residual add. Each row is computed by the same code whatever the
// batch size, so these are batch invariant by construction. Double-precision references sit
// beside each kernel for the tests.
#pragma once
#include <cstddef>
#include <cstdint>

namespace accel {

// out[r] = x[r] / sqrt(mean(x[r]^2) + eps) * weight, for n_rows rows of `dim` (strides in floats).
// out may alias x.
void rmsnorm(const float* x, size_t n_rows, size_t dim, size_t ldx, const float* weight, float eps,
             float* out, size_t ldo);
void rmsnorm_reference(const float* x, size_t n_rows, size_t dim, size_t ldx, const float* weight,
                       float eps, double* out, size_t ldo);

// How the rotated pairs are laid out within a head, as in llama.cpp: Adjacent (mode 0, "norm",
// used for `llama`) rotates (x[2i], x[2i+1]); HalfSplit (NeoX, used for `qwen2`/`qwen3`) rotates
// (x[i], x[i + n_rot/2]).
enum class RopeLayout { Adjacent, HalfSplit };

struct RopeParams {
  int head_dim = 0;
  int n_rot = 0;  // rotated dimensions per head (<= head_dim, even)
  float freq_base = 10000.f;
  float freq_scale = 1.f;  // linear scaling: position is multiplied by this (1/factor)
  RopeLayout layout = RopeLayout::Adjacent;
};

// Rotates, in place, n_heads heads of each of n_rows rows (row stride ld floats); row r is at
// absolute position pos[r]. Angles are computed in double from (position, pair index) alone.
void rope(float* x, size_t n_rows, size_t ld, int n_heads, const int32_t* pos, const RopeParams& p);
void rope_reference(double* x, size_t n_rows, size_t ld, int n_heads, const int32_t* pos,
                    const RopeParams& p);

// In-place numerically stable softmax of one row.
void softmax(float* x, size_t n);
// log(sum(exp(x))) of one row, computed stably in double; for log-likelihoods.
double log_sum_exp(const float* x, size_t n);

// out[i] = silu(gate[i]) * up[i] over n elements; out may alias gate or up.
void swiglu(const float* gate, const float* up, float* out, size_t n);

// y[i] += x[i].
void add_inplace(float* y, const float* x, size_t n);

}  // namespace accel
