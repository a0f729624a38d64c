// Gated RMS norms: the gate is applied element by element around rmsnorm's rows (one group or one
// head per rmsnorm row), in the order each model defines.
#include "kernels/gated_norm.h"

#include <cmath>

#include "kernels/check.h"
#include "kernels/elementwise.h"

namespace accel {
namespace {

inline float silu(float z) {
  return z / (1.f + std::exp(-z));
}

}  // namespace

void gated_rmsnorm_mamba2(const float* y, size_t ldy, const float* z, size_t ldz, size_t n_rows,
                          int dim, int n_groups, const float* weight, float eps, float* out,
                          size_t ldo) {
  ACCEL_CHECK(dim >= 1 && n_groups >= 1 && dim % n_groups == 0, "dim %d, n_groups %d", dim,
              n_groups);
  const size_t gs = size_t(dim / n_groups);
  for (size_t r = 0; r < n_rows; ++r) {
    float* o = out + r * ldo;
    for (int i = 0; i < dim; ++i) o[i] = y[r * ldy + i] * silu(z[r * ldz + i]);
    for (int g = 0; g < n_groups; ++g)
      rmsnorm(o + g * gs, 1, gs, gs, weight + g * gs, eps, o + g * gs, gs);
  }
}

void gated_rmsnorm_delta(const float* o, size_t ldo_in, const float* z, size_t ldz, size_t n_rows,
                         int n_heads, int head_dim, const float* weight, float eps, float* out,
                         size_t ldo) {
  ACCEL_CHECK(n_heads >= 1 && head_dim >= 1, "n_heads %d, head_dim %d", n_heads, head_dim);
  const size_t hd = size_t(head_dim), width = size_t(n_heads) * hd;
  for (size_t r = 0; r < n_rows; ++r) {
    float* dst = out + r * ldo;
    rmsnorm(o + r * ldo_in, size_t(n_heads), hd, hd, weight, eps, dst, hd);
    for (size_t i = 0; i < width; ++i) dst[i] *= silu(z[r * ldz + i]);
  }
}

}  // namespace accel
