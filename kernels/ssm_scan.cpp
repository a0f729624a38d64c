// Mamba-2 scan: per-token scalars (softplus, decay) first, then parallel items of (head, 8 state
// rows) that walk the tokens in order, block by block (recurrent_rows.h), with their rows in L1.
// The decay and the dt product are per (token, head) scalars computed once, so every path sees the
// same bits for them.
#include "kernels/ssm_scan.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/check.h"
#include "kernels/recurrent_rows.h"
#include "kernels/recurrent_simd.h"
#include "kernels/simd.h"

namespace accel {
namespace {

using namespace simd;

using recurrent::kRows;

struct ScanArgs {
  const SsmScanShape& s;
  const SsmScanInputs& in;
  size_t n;
  const float* dtp;    // [n][n_heads]: softplus(dt + bias)
  const float* decay;  // [n][n_heads]: exp(dt' * A)
  float* y;
  size_t ldy;
};

// Advances rows st[0..8) (stride d_state) of head h over all tokens; rows >= nr are padding with
// x = 0 (their state stays 0 and their output is dropped), so a row's bits do not depend on nr.
void scan_rows(const ScanArgs& a, int h, int i0, int nr, float* st, size_t t0, size_t t1) {
  const int ds = a.s.d_state, hd = a.s.head_dim, nh = a.s.n_heads;
  const int g = h / (nh / a.s.n_groups);
  const int full = ds / W * W, tail = ds - full;
  const vmask m = first(tail);
  const float d_skip = a.in.D ? a.in.D[h] : 0.f;
  for (size_t t = t0; t < t1; ++t) {
    const float* x = a.in.x + t * a.in.ldx + size_t(h) * hd + i0;
    const float* B = a.in.B + t * a.in.ldb + size_t(g) * ds;
    const float* C = a.in.C + t * a.in.ldc + size_t(g) * ds;
    const float dtp = a.dtp[t * nh + h];
    const vf da = set1(a.decay[t * nh + h]);
    vf xdt[kRows], acc[kRows];
    for (int r = 0; r < kRows; ++r) {
      xdt[r] = set1(r < nr ? x[r] * dtp : 0.f);
      acc[r] = zero();
    }
    for (int n = 0; n < full; n += W) {
      const vf b = load(B + n), c = load(C + n);
      for (int r = 0; r < kRows; ++r) {
        float* p = st + size_t(r) * ds + n;
        const vf v = fma(b, xdt[r], mul(load(p), da));
        store(p, v);
        acc[r] = fma(v, c, acc[r]);
      }
    }
    if (tail) {
      const vf b = load_n(B + full, m), c = load_n(C + full, m);
      for (int r = 0; r < kRows; ++r) {
        float* p = st + size_t(r) * ds + full;
        const vf v = fma(b, xdt[r], mul(load_n(p, m), da));
        store_n(p, v, m);
        acc[r] = fma(v, c, acc[r]);
      }
    }
    float sums[kRows];
    hsum8(acc, sums);
    float* yo = a.y + t * a.ldy + size_t(h) * hd + i0;
    for (int r = 0; r < nr; ++r) yo[r] = a.in.D ? std::fma(d_skip, x[r], sums[r]) : sums[r];
  }
}

void check_shape(const SsmScanShape& s) {
  ACCEL_CHECK(s.n_heads >= 1 && s.head_dim >= 1 && s.d_state >= 1 && s.n_groups >= 1 &&
                  s.n_heads % s.n_groups == 0,
              "ssm_scan shape: n_heads %d, head_dim %d, d_state %d, n_groups %d", s.n_heads,
              s.head_dim, s.d_state, s.n_groups);
}

}  // namespace

float softplus(float z) {
  return z > 20.f ? z : std::log1p(std::exp(z));
}

size_t ssm_state_elements(const SsmScanShape& s) {
  return size_t(s.n_heads) * size_t(s.head_dim) * size_t(s.d_state);
}

void ssm_scan(const SsmScanShape& s, const SsmScanInputs& in, size_t n_tokens, float* state,
              float* y, size_t ldy) {
  check_shape(s);
  if (n_tokens == 0) return;
  const size_t nh = size_t(s.n_heads), hd = size_t(s.head_dim), ds = size_t(s.d_state);
  ACCEL_CHECK(in.ldx >= nh * hd && in.lddt >= nh && in.ldb >= s.n_groups * ds &&
                  in.ldc >= s.n_groups * ds && ldy >= nh * hd,
              "ssm_scan strides: ldx %zu, lddt %zu, ldb %zu, ldc %zu, ldy %zu", in.ldx, in.lddt,
              in.ldb, in.ldc, ldy);
  std::vector<float> dtp(n_tokens * nh), decay(n_tokens * nh);
  for (size_t t = 0; t < n_tokens; ++t)
    for (size_t h = 0; h < nh; ++h) {
      const float z = in.dt[t * in.lddt + h] + (in.dt_bias ? in.dt_bias[h] : 0.f);
      dtp[t * nh + h] = softplus(z);
      decay[t * nh + h] = std::exp(dtp[t * nh + h] * in.A[h]);
    }
  const ScanArgs a{s, in, n_tokens, dtp.data(), decay.data(), y, ldy};
  recurrent::for_each_row_group(n_tokens, s.n_heads, s.head_dim, ds, state, 6.0 * double(ds),
                                [&](int h, int r0, int nr, float* st, size_t t0, size_t t1) {
                                  scan_rows(a, h, r0, nr, st, t0, t1);
                                });
}

}  // namespace accel
