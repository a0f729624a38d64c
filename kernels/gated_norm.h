// The gated RMS norms that end both recurrent layers, before their out-projection. Owns only the
// order of gate and norm and the grouping; the norm itself is rmsnorm (elementwise.h).
//
//   Mamba-2 (mamba-base.cpp): out = rmsnorm_g(y * silu(z)) * w, where the norm runs over each of
//     the row's n_groups contiguous groups of dim / n_groups and w has one weight per element of
//     the row (`ssm_norm.weight` {dim / n_groups, n_groups}).
//   Gated DeltaNet (qwen35.cpp build_norm_gated): out = rmsnorm_h(o) * w * silu(z), the norm over
//     each head of head_dim and w one head's weights shared by every head (`ssm_norm.weight`
//     {head_dim}).
// silu(z) = z / (1 + e^-z). Row-wise, so batch invariant by construction.
#pragma once
#include <cstddef>

namespace accel {

// y, z, out: [n_rows][dim] with row strides ldy, ldz, ldo; weight [dim]. out may alias y.
// n_groups must divide dim.
void gated_rmsnorm_mamba2(const float* y, size_t ldy, const float* z, size_t ldz, size_t n_rows,
                          int dim, int n_groups, const float* weight, float eps, float* out,
                          size_t ldo);

// o, z, out: [n_rows][n_heads * head_dim] with row strides; weight [head_dim]. out may alias o.
void gated_rmsnorm_delta(const float* o, size_t ldo_in, const float* z, size_t ldz, size_t n_rows,
                         int n_heads, int head_dim, const float* weight, float eps, float* out,
                         size_t ldo);

}  // namespace accel
