// Mamba-2 scan: per-token scalars (softplus, decay) first, then parallel items of (head, 8 state
// rows) that walk the tokens in order, block by block (recurrent_rows.h), each state vector of
// their rows in registers across a block.
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

// Advances rows st[0..8) (stride d_state) of head h over tokens [t0, t1); rows >= nr are padding
// with x = 0 (their state stays 0 and their output is dropped), so a row's bits do not depend on
// nr. Per (token, row) the arithmetic is one fixed sequence: for each state vector n in order,
// v = fma(B_n, x dt, st_n * decay), st_n = v, acc = fma(v, C_n, acc) from acc = 0, then hsum8.
// The loops run state vectors outermost and tokens inside, so a vector's rows stay in registers
// across the block and each token's partial sums wait in L1 (acc), where the state used to go
// through memory from one token to the next. Same sequence, same bits. With the register hsum8
// (recurrent_simd.h) this took small-nemotron-h's prefill of 2,048 tokens from 1.08K to 1.37K
// tok/s on a 2-core Zen 5 (2026-11-28), about half of that from this order.
void scan_rows(const ScanArgs& a, int h, int i0, int nr, float* st, size_t t0, size_t t1) {
  const int ds = a.s.d_state, hd = a.s.head_dim, nh = a.s.n_heads;
  const int g = h / (nh / a.s.n_groups);
  const int full = ds / W * W, tail = ds - full;
  const vmask m = first(tail);
  const float d_skip = a.in.D ? a.in.D[h] : 0.f;
  const size_t nt = t1 - t0;
  ACCEL_CHECK(nt <= recurrent::kTokenBlock, "scan block of %zu tokens", nt);
  alignas(64) float xdt[recurrent::kTokenBlock][kRows];
  alignas(64) vf acc[recurrent::kTokenBlock][kRows];
  for (size_t j = 0; j < nt; ++j) {
    const size_t t = t0 + j;
    const float* x = a.in.x + t * a.in.ldx + size_t(h) * hd + i0;
    const float dtp = a.dtp[t * nh + h];
    for (int r = 0; r < kRows; ++r) {
      xdt[j][r] = r < nr ? x[r] * dtp : 0.f;
      acc[j][r] = zero();
    }
  }
  const auto step = [&](int n, auto load_v, auto store_v) {
    vf v[kRows];
    for (int r = 0; r < kRows; ++r) v[r] = load_v(st + size_t(r) * ds + n);
    for (size_t j = 0; j < nt; ++j) {
      const size_t t = t0 + j;
      const vf b = load_v(a.in.B + t * a.in.ldb + size_t(g) * ds + n);
      const vf c = load_v(a.in.C + t * a.in.ldc + size_t(g) * ds + n);
      const vf da = set1(a.decay[t * nh + h]);
      for (int r = 0; r < kRows; ++r) {
        v[r] = fma(b, set1(xdt[j][r]), mul(v[r], da));
        acc[j][r] = fma(v[r], c, acc[j][r]);
      }
    }
    for (int r = 0; r < kRows; ++r) store_v(st + size_t(r) * ds + n, v[r]);
  };
  for (int n = 0; n < full; n += W)
    step(
        n, [](const float* p) { return load(p); }, [](float* p, vf x) { store(p, x); });
  if (tail)
    step(
        full, [&](const float* p) { return load_n(p, m); },
        [&](float* p, vf x) { store_n(p, x, m); });
  for (size_t j = 0; j < nt; ++j) {
    const size_t t = t0 + j;
    const float* x = a.in.x + t * a.in.ldx + size_t(h) * hd + i0;
    float sums[kRows];
    hsum8(acc[j], sums);
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
