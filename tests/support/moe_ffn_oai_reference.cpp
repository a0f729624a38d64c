// Double-precision GPT-OSS MoE and its error bound (see moe_ffn_oai_reference.h).
//
// The bound, first order in u = 2^-24, for non-k-quant weights (the GEMM's per-output error is
// (K + 2) u S with S the sum of |terms| + |bias|; kernels/gemm.h):
//   router logit l_e:  d_e = (n_embd + 2) u S_e;  D = max over the chosen d_e
//   softmax weight:    |dw_s| <= w_s (2 D + 2 u G + 8 u), G = the largest |l - max l| among the
//                      chosen (the subtraction's rounding), 8 u for expf (< 1 ulp), 1/sum, scale
//   gate / up h_j:     dh_j = (n_embd + 2) u S_j
//   swiglu_oai a_j:    |da_j| <= 1.1 (|u_c| + 1) dg_j + |glu_j| du_j + (8 + |alpha g|) u |a_j|,
//                      where 1.1 bounds
//                      the slope of g sigmoid(alpha g) in alpha g, u_c the clamped up value, glu_j
//                      = g sigmoid(alpha g); clamping is 1-Lipschitz; 8 u for its six roundings +
//                      exp, and |alpha g| u for the rounding of alpha * -g that exp amplifies
//   down d_i:          |dd_i| <= sum_j |W_ij| |da_j| + (n_ff + 2) u (sum_j |W_ij a_j| + |b_i|)
//   out o_i = sum_s w_s d_si:  sum_s (w_s |dd_si| + |dw_s| |d_si|) + (k + 1) u sum_s |w_s d_si|
// doubled to cover the second-order terms and the double reference's own rounding.
// MXFP4 and q8_0 experts multiply q8_0 codes of their input (kernels/mxfp4_panel.h,
// kernels/q8_0_panel.h, as llama.cpp does), so
// gate / up / down each add C_r = sum_k |W_rk| step_b(k), step_b = amax_b / 127 (1/2 + 127 2^-11)
// (1 + 2^-20), the most a code can stand off its input (gemm_test's GemmQ8_0Activations bound);
// the reference itself multiplies the unrounded inputs.
#include "tests/support/moe_ffn_oai_reference.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "kernels/quant.h"
#include "tests/support/test_support.h"

namespace accel::test {

namespace {

std::vector<float> dequant_rows(DType t, const void* base, size_t row0, size_t rows, size_t cols) {
  std::vector<float> w(rows * cols);
  const size_t rb = dtype_row_bytes(t, cols);
  dequantize_row(t, static_cast<const uint8_t*>(base) + row0 * rb, w.data(), rows * cols);
  return w;
}

// y = W x + b in double, and S = sum |W x| + |b|, over `rows` rows of `cols`.
void matvec(const std::vector<float>& W, const double* x, const float* b, size_t rows, size_t cols,
            std::vector<double>& y, std::vector<double>& S) {
  y.assign(rows, 0);
  S.assign(rows, 0);
  for (size_t r = 0; r < rows; ++r) {
    double acc = b[r], mag = std::fabs(double(b[r]));
    for (size_t k = 0; k < cols; ++k) {
      acc += double(W[r * cols + k]) * x[k];
      mag += std::fabs(double(W[r * cols + k]) * x[k]);
    }
    y[r] = acc;
    S[r] = mag;
  }
}

// C_r above for `rows` rows of W times x (zero unless the weights are MXFP4 or q8_0).
std::vector<double> code_error(DType t, const std::vector<float>& W, const double* x, size_t rows,
                               size_t cols) {
  std::vector<double> c(rows, 0);
  if (t != DType::MXFP4 && t != DType::Q8_0) return c;
  std::vector<double> step(cols / 32);
  for (size_t b = 0; b < cols / 32; ++b) {
    double amax = 0;
    for (size_t k = 0; k < 32; ++k) amax = std::max(amax, std::fabs(x[b * 32 + k]));
    step[b] = amax / 127 * (0.5 + 127 * std::ldexp(1.0, -11)) * (1 + std::ldexp(1.0, -20));
  }
  for (size_t r = 0; r < rows; ++r)
    for (size_t k = 0; k < cols; ++k) c[r] += std::fabs(double(W[r * cols + k])) * step[k / 32];
  return c;
}

}  // namespace

MoeOaiReference moe_ffn_oai_reference(const MoeOaiSource& s, const float* x) {
  const double u = std::ldexp(1.0, -24);
  const size_t E = size_t(s.n_embd), F = size_t(s.n_ff), NE = size_t(s.n_expert),
               K = size_t(s.n_expert_used);
  const std::vector<double> xd(x, x + E);
  std::vector<double> logit, Sl;
  matvec(dequant_rows(s.router_type, s.router, 0, NE, E), xd.data(), s.router_bias, NE, E, logit,
         Sl);
  MoeOaiReference r;
  std::vector<int> order(NE);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return logit[a] > logit[b]; });
  r.chosen.assign(order.begin(), order.begin() + long(K));
  auto err = [&](size_t e) { return double(E + 2) * u * Sl[e]; };
  r.selection_margin =
      K < NE ? logit[order[K - 1]] - logit[order[K]] - err(order[K - 1]) - err(order[K]) : INFINITY;
  double mx = -INFINITY, D = 0, G = 0;
  for (int e : r.chosen) {
    mx = std::max(mx, logit[e]);
    D = std::max(D, err(e));
  }
  std::vector<double> w(K), dw(K);
  double sum = 0;
  for (size_t i = 0; i < K; ++i) {
    G = std::max(G, mx - logit[r.chosen[i]]);
    sum += w[i] = std::exp(logit[r.chosen[i]] - mx);
  }
  for (size_t i = 0; i < K; ++i) {
    w[i] /= sum;
    dw[i] = w[i] * (2 * D + 2 * u * G + 8 * u);
  }
  r.out.assign(E, 0);
  r.bound.assign(E, 0);
  std::vector<double> mag(E, 0);
  const double alpha = s.act.alpha, limit = s.act.limit;
  for (size_t i = 0; i < K; ++i) {
    const size_t e = size_t(r.chosen[i]);
    std::vector<double> g, Sg, up, Su, a(F), da(F), d, Sd;
    const std::vector<float> Wg = dequant_rows(s.expert_type, s.gate, e * F, F, E);
    const std::vector<float> Wu = dequant_rows(s.expert_type, s.up, e * F, F, E);
    matvec(Wg, xd.data(), s.gate_bias + e * F, F, E, g, Sg);
    matvec(Wu, xd.data(), s.up_bias + e * F, F, E, up, Su);
    const std::vector<double> Cg = code_error(s.expert_type, Wg, xd.data(), F, E);
    const std::vector<double> Cu = code_error(s.expert_type, Wu, xd.data(), F, E);
    for (size_t j = 0; j < F; ++j) {
      const double gc = std::min(g[j], limit), uc = std::clamp(up[j], -limit, limit);
      const double glu = gc / (1 + std::exp(-alpha * gc));
      a[j] = glu * (uc + 1);
      da[j] = 1.1 * (std::fabs(uc) + 1) * (double(E + 2) * u * Sg[j] + Cg[j]) +
              std::fabs(glu) * (double(E + 2) * u * Su[j] + Cu[j]) +
              (8 + std::fabs(alpha * gc)) * u * std::fabs(a[j]);
    }
    const std::vector<float> Wd = dequant_rows(s.expert_type, s.down, e * E, E, F);
    matvec(Wd, a.data(), s.down_bias + e * E, E, F, d, Sd);
    const std::vector<double> Cd = code_error(s.expert_type, Wd, a.data(), E, F);
    for (size_t o = 0; o < E; ++o) {
      double prop = 0;
      for (size_t j = 0; j < F; ++j) prop += std::fabs(double(Wd[o * F + j])) * da[j];
      const double dd = prop + double(F + 2) * u * Sd[o] + Cd[o];
      r.out[o] += w[i] * d[o];
      r.bound[o] += w[i] * dd + dw[i] * std::fabs(d[o]);
      mag[o] += std::fabs(w[i] * d[o]);
    }
  }
  for (size_t o = 0; o < E; ++o) r.bound[o] = 2 * (r.bound[o] + double(K + 1) * u * mag[o]);
  return r;
}

namespace {

std::vector<uint8_t> quantized(DType t, size_t rows, size_t cols, uint64_t seed, float sd) {
  const std::vector<float> w = random_normal(rows * cols, seed, sd);
  std::vector<uint8_t> raw(rows * dtype_row_bytes(t, cols));
  quantize_row(t, w.data(), raw.data(), rows * cols);
  return raw;
}

}  // namespace

MoeOaiLayer random_moe_oai_layer(DType t, int E, int F, int NE, int K, uint64_t seed,
                                 MoeOaiLayerScales sd) {
  MoeOaiLayer l;
  const size_t e = size_t(E), f = size_t(F), ne = size_t(NE);
  l.router = quantized(DType::F32, ne, e, seed, sd.router);
  l.gate = quantized(t, ne * f, e, seed + 1, sd.gate_up);
  l.up = quantized(t, ne * f, e, seed + 2, sd.gate_up);
  l.down = quantized(t, ne * e, f, seed + 3, sd.down);
  l.router_b = random_normal(ne, seed + 4, sd.bias);
  l.gate_b = random_normal(ne * f, seed + 5, sd.bias);
  l.up_b = random_normal(ne * f, seed + 6, sd.bias);
  l.down_b = random_normal(ne * e, seed + 7, sd.bias);
  MoeOaiSource& s = l.src;
  s.n_embd = E;
  s.n_ff = F;
  s.n_expert = NE;
  s.n_expert_used = K;
  s.router = l.router.data();
  s.router_bias = l.router_b.data();
  s.expert_type = t;
  s.gate = l.gate.data();
  s.up = l.up.data();
  s.down = l.down.data();
  s.gate_bias = l.gate_b.data();
  s.up_bias = l.up_b.data();
  s.down_bias = l.down_b.data();
  return l;
}

}  // namespace accel::test
