// Double references for the recurrent kernels and the error bounds the tests hold them to. Each
// bound is first order in u = 2^-24 (float's unit roundoff) and follows the float kernel's exact
// operation sequence; the 1.05 on every bound covers the neglected O(u^2) terms, which are below
// 1e-6 of the first-order ones for the sizes tested. gamma(m) = m u / (1 - m u) bounds a sum of
// m + 1 terms accumulated with m roundings.
#include "tests/support/recurrent_reference.h"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace accel::test {
namespace {

constexpr double kU = 0x1p-24;
constexpr double kSecondOrder = 1.05;

double gamma(double m) {
  return m * kU / (1.0 - m * kU);
}
double sigmoid(double z) {
  return 1.0 / (1.0 + std::exp(-z));
}
double softplus(double z) {
  return z > 20.0 ? z : std::log1p(std::exp(z));
}
double silu(double z) {
  return z * sigmoid(z);
}
// Roundings on one lane's path through a vector dot product: ceil(n / 8) fused multiply-adds
// into a lane accumulator, then the tree over at most 16 lanes (4 levels) and one more operation
// after it. Covers 8- and 16-lane builds (16 lanes: fewer chain steps, one more tree level).
double dot_roundings(int n) {
  return std::ceil(n / 8.0) + 5.0;
}

}  // namespace

// Conv: mul then d_conv - 1 fmas, then the bias add: gamma(d_conv + 1) * (sum |w x| + |b|) on the
// pre-activation z. SiLU multiplies an input error by at most max|silu'| = 1.0998 and adds its own:
// exp_nonpos <= 2 ulp (4u relative), 1 + e (u), the division (u, and sigmoid's relative
// sensitivity to e's error is e/(1+e) <= 1) and the product (u): 7u, taken as 8u |silu(z)|.
ConvReference causal_conv1d_reference(const CausalConvShape& s, const float* x, size_t ldx,
                                      size_t n_tokens, const float* weight, const float* bias,
                                      bool silu_on, const float* window) {
  const size_t C = size_t(s.channels), K = size_t(s.d_conv), w_rows = K - 1;
  std::vector<double> seq((w_rows + n_tokens) * C);  // window ++ x
  for (size_t j = 0; j < w_rows * C; ++j) seq[j] = window[j];
  for (size_t t = 0; t < n_tokens; ++t)
    for (size_t c = 0; c < C; ++c) seq[(w_rows + t) * C + c] = x[t * ldx + c];
  ConvReference r;
  r.out.value.resize(n_tokens * C);
  r.out.bound.resize(n_tokens * C);
  for (size_t t = 0; t < n_tokens; ++t)
    for (size_t c = 0; c < C; ++c) {
      double z = 0, mag = 0;
      for (size_t k = 0; k < K; ++k) {
        const double term = double(weight[c * K + k]) * seq[(t + k) * C + c];
        z += term;
        mag += std::abs(term);
      }
      if (bias) z += bias[c], mag += std::abs(bias[c]);
      double err = gamma(double(K + 1)) * mag, val = z;
      if (silu_on) {
        val = silu(z);
        err = 1.0998 * err + 8 * kU * std::abs(val);
      }
      r.out.value[t * C + c] = val;
      r.out.bound[t * C + c] = kSecondOrder * err;
    }
  r.window.assign(seq.end() - std::ptrdiff_t(w_rows * C), seq.end());
  return r;
}

// Scan, per (token, head): z = dt + bias (u|z|), dt' = softplus(z) (libm log1p and exp: 2u, plus
// z's error times softplus'(z)/softplus(z) = sigmoid(z)/softplus(z)); so rho_dt = 3u +
// u|z| sigmoid(z)/softplus(z) bounds dt''s relative error. arg = dt' A adds u; a = exp(arg) has
// relative error |arg| (rho_dt + u) + 2u =: rho_a. x dt' has rho_x = rho_dt + u.
// Per state element: v = fma(B, x dt', s a). With E the bound on |s~ - s| before the token,
//   E' = a E + a|s| (rho_a + u) + |B x dt'| rho_x + u|v|
// (the product s a rounds once, the fma once). Output: y = fma(D, x, sum_n v C) with the sum in
// dot_roundings(d_state) roundings: |dy| <= sum_n |C| E'_n + gamma(m) sum_n |v C| + u|y|.
ScanReference ssm_scan_reference(const SsmScanShape& s, const SsmScanInputs& in, size_t n_tokens,
                                 const float* state) {
  const size_t nh = size_t(s.n_heads), hd = size_t(s.head_dim), ds = size_t(s.d_state);
  const size_t per_group = nh / size_t(s.n_groups);
  ScanReference r;
  r.state.value.assign(state, state + nh * hd * ds);
  r.state.bound.assign(nh * hd * ds, 0.0);
  r.y.value.assign(n_tokens * nh * hd, 0.0);
  r.y.bound.assign(n_tokens * nh * hd, 0.0);
  const double g_dot = gamma(dot_roundings(s.d_state));
  for (size_t t = 0; t < n_tokens; ++t)
    for (size_t h = 0; h < nh; ++h) {
      const double z = double(in.dt[t * in.lddt + h]) + (in.dt_bias ? in.dt_bias[h] : 0.0);
      const double dtp = softplus(z);
      const double rho_dt = 3 * kU + kU * std::abs(z) * (z > 20 ? 0.0 : sigmoid(z) / dtp);
      const double arg = dtp * double(in.A[h]), a = std::exp(arg);
      const double rho_a = std::abs(arg) * (rho_dt + kU) + 2 * kU, rho_x = rho_dt + kU;
      const size_t g = h / per_group;
      const float* B = in.B + t * in.ldb + g * ds;
      const float* C = in.C + t * in.ldc + g * ds;
      for (size_t i = 0; i < hd; ++i) {
        const double xv = in.x[t * in.ldx + h * hd + i], xdt = xv * dtp;
        double* S = &r.state.value[(h * hd + i) * ds];
        double* E = &r.state.bound[(h * hd + i) * ds];
        double y = 0, prop = 0, mag = 0;
        for (size_t n = 0; n < ds; ++n) {
          const double bx = double(B[n]) * xdt, v = S[n] * a + bx;
          E[n] = a * E[n] + a * std::abs(S[n]) * (rho_a + kU) + std::abs(bx) * rho_x +
                 kU * std::abs(v);
          S[n] = v;
          y += v * double(C[n]);
          prop += std::abs(double(C[n])) * E[n];
          mag += std::abs(v * double(C[n]));
        }
        if (in.D) y += double(in.D[h]) * xv;
        r.y.value[t * nh * hd + h * hd + i] = y;
        r.y.bound[t * nh * hd + h * hd + i] =
            kSecondOrder * (prop + g_dot * mag + kU * std::abs(y));
      }
    }
  for (double& e : r.state.bound) e *= kSecondOrder;
  return r;
}

// Delta rule, per value row j (a vector over the key index), one token: the map from the row's
// error before the token to after it is d -> e (I - beta k k^T) d plus local roundings, and with
// ||k|| ~ 1 and beta in (0, 1) the projection has 2-norm <= 1, so the 2-norm bound E of the row's
// error obeys E' = e E + local, where local (each term's norm, first order) is
//   s' = s e~ (e~ = expf(g): 2u; the product: u)                    (3u) e ||s||
//   p = s'.k in dot_roundings(dk) roundings, then d = (v - p) beta:   beta gamma(m) sum|s' k| ||k||
//   the two roundings of d                                            (u beta |v - p| + u |d|)
//   ||k|| s'' = fma(k, d, s'): one rounding per element                     u ||s''||
// Output o = (s''.q) scale: |do| <= scale (||q|| E' + gamma(m) sum|s'' q|) + u |o|.
DeltaReference gated_delta_rule_reference(const GatedDeltaShape& s, const GatedDeltaInputs& in,
                                          size_t n_tokens, const float* state) {
  const size_t nv = size_t(s.n_v_heads), dv = size_t(s.head_v_dim), dk = size_t(s.head_k_dim);
  const size_t nk = size_t(s.n_k_heads);
  DeltaReference r;
  r.state.value.assign(state, state + nv * dv * dk);
  std::vector<double> row_bound(nv * dv, 0.0);
  r.o.value.assign(n_tokens * nv * dv, 0.0);
  r.o.bound.assign(n_tokens * nv * dv, 0.0);
  const double g_dot = gamma(dot_roundings(s.head_k_dim));
  for (size_t t = 0; t < n_tokens; ++t)
    for (size_t h = 0; h < nv; ++h) {
      const size_t kh = s.map == DeltaHeadMap::Tiled ? h % nk : h / (nv / nk);
      const float* q = in.q + t * in.ldq + kh * dk;
      const float* k = in.k + t * in.ldk + kh * dk;
      const double e = std::exp(double(in.g[t * in.ldgate + h]));
      const double beta = in.beta[t * in.ldgate + h];
      double knorm = 0, qnorm = 0;
      for (size_t i = 0; i < dk; ++i) knorm += double(k[i]) * k[i], qnorm += double(q[i]) * q[i];
      knorm = std::sqrt(knorm), qnorm = std::sqrt(qnorm);
      for (size_t j = 0; j < dv; ++j) {
        double* S = &r.state.value[(h * dv + j) * dk];
        double snorm = 0, p = 0, pmag = 0;
        for (size_t i = 0; i < dk; ++i) {
          snorm += S[i] * S[i];
          S[i] *= e;
          p += S[i] * k[i];
          pmag += std::abs(S[i] * k[i]);
        }
        const double v = in.v[t * in.ldv + h * dv + j], d = beta * (v - p);
        double o = 0, omag = 0, s2norm = 0;
        for (size_t i = 0; i < dk; ++i) {
          S[i] += d * k[i];
          s2norm += S[i] * S[i];
          o += S[i] * q[i];
          omag += std::abs(S[i] * q[i]);
        }
        o *= double(in.q_scale);
        double& E = row_bound[h * dv + j];
        E = e * E + 3 * kU * e * std::sqrt(snorm) +
            (beta * g_dot * pmag + kU * beta * std::abs(v - p) + kU * std::abs(d)) * knorm +
            kU * std::sqrt(s2norm);
        r.o.value[t * nv * dv + h * dv + j] = o;
        r.o.bound[t * nv * dv + h * dv + j] =
            kSecondOrder * (double(in.q_scale) * (qnorm * E + g_dot * omag) + kU * std::abs(o));
      }
    }
  r.state.bound.resize(nv * dv * dk);
  for (size_t row = 0; row < nv * dv; ++row)
    std::fill_n(&r.state.bound[row * dk], dk, kSecondOrder * row_bound[row]);
  return r;
}

// Gated norms. silu_f = z / (1 + expf(-z)): expf (2u, entering with weight e/(1+e) <= 1), the
// add and the division: 4u relative. rmsnorm sums squares in double (negligible) and rounds
// inv = 1/sqrt(.) once to float (u); then x inv w rounds twice (2u).
//   Mamba-2: g = y silu(z) carries 5u; through the mean of squares that is <= 5u on inv, so the
//   output carries 5u + 5u + u + 2u = 13u.
//   Gated DeltaNet: the norm of exact inputs carries 3u, times silu (4u) and the product (u): 8u.
Bounded gated_rmsnorm_reference(bool mamba2, const float* y, const float* z, size_t n_rows,
                                int width, int group_size, const float* weight, float eps) {
  Bounded r;
  r.value.resize(n_rows * size_t(width));
  r.bound.resize(n_rows * size_t(width));
  const double rel = mamba2 ? 13 * kU : 8 * kU;
  for (size_t row = 0; row < n_rows; ++row)
    for (int g0 = 0; g0 < width; g0 += group_size) {
      std::vector<double> x(static_cast<size_t>(group_size));
      double ss = 0;
      for (int i = 0; i < group_size; ++i) {
        const size_t e = row * size_t(width) + size_t(g0 + i);
        x[size_t(i)] = mamba2 ? double(y[e]) * silu(z[e]) : double(y[e]);
        ss += x[size_t(i)] * x[size_t(i)];
      }
      const double inv = 1.0 / std::sqrt(ss / group_size + double(eps));
      for (int i = 0; i < group_size; ++i) {
        const size_t e = row * size_t(width) + size_t(g0 + i);
        const double w = mamba2 ? weight[g0 + i] : weight[i];
        double v = x[size_t(i)] * inv * w;
        if (!mamba2) v *= silu(z[e]);
        r.value[e] = v;
        r.bound[e] = kSecondOrder * rel * std::abs(v);
      }
    }
  return r;
}

::testing::AssertionResult within_bound(std::span<const float> got, const Bounded& want,
                                        double* ratio) {
  if (got.size() != want.value.size())
    return ::testing::AssertionFailure()
           << "size " << got.size() << " != reference size " << want.value.size();
  size_t out = 0, worst = 0;
  double worst_ratio = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const double err = std::abs(double(got[i]) - want.value[i]);
    const double q = want.bound[i] > 0 ? err / want.bound[i] : (err > 0 ? INFINITY : 0.0);
    if (!(err <= want.bound[i])) ++out;
    if (!(q <= worst_ratio)) worst_ratio = q, worst = i;
  }
  if (ratio) *ratio = worst_ratio;
  if (out == 0) return ::testing::AssertionSuccess();
  std::ostringstream m;
  m.precision(9);
  m << out << " of " << got.size() << " outside the bound; worst [" << worst << "]: got "
    << got[worst] << ", want " << want.value[worst] << ", bound " << want.bound[worst]
    << " (error / bound " << worst_ratio << ")";
  return ::testing::AssertionFailure() << m.str();
}

}  // namespace accel::test
