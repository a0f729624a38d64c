// Naive reference forward (see reference_forward.h): full matrices in double, explicit loops.
#include "tests/support/reference_forward.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

#include "kernels/elementwise.h"
#include "kernels/fp16.h"
#include "kernels/kquant.h"
#include "kernels/mxfp4.h"
#include "kernels/quant.h"
#include "models/gguf.h"
#include "models/model_config.h"

namespace accel::test {

namespace {

// Row-major [rows][cols], with the file's type: the engine computes k-quant products on q8_K
// activations (kernels/kquant_panel.h) and MXFP4 and q8_0 products on q8_0 (kernels/mxfp4_panel.h,
// kernels/q8_0_panel.h), as llama.cpp does, so matvec rounds x the same way for those.
struct Mat : std::vector<double> {
  DType type = DType::F32;
};

bool is_kquant(DType t) {
  return t == DType::Q4_K || t == DType::Q5_K || t == DType::Q6_K;
}

// x as the engine's integer-dot GEMM sees it: rounded to float, then to the activation codes of
// `quantize` (q8_K for k-quants, q8_0 for MXFP4 and q8_0) times their per-`block` scale (`group`
// elements per code sum).
using ActQuantizer = void (*)(const float*, size_t, int8_t*, float*, int32_t*);
std::vector<double> codes_rounded(const std::vector<double>& x, ActQuantizer quantize, size_t block,
                                  size_t group) {
  const size_t n = x.size();
  std::vector<float> xf(x.begin(), x.end());
  std::vector<int8_t> q(n);
  std::vector<float> d(n / block);
  std::vector<int32_t> sums(n / group);
  quantize(xf.data(), n, q.data(), d.data(), sums.data());
  std::vector<double> out(n);
  for (size_t i = 0; i < n; ++i) out[i] = double(d[i / block]) * q[i];
  return out;
}

// A 2-D (or a slice of a 3-D) tensor as [rows][cols] doubles; cols = dims[0].
Mat load(const GgufFile& f, const std::string& name, size_t slice = 0) {
  const GgufTensorInfo* t = f.find_tensor(name);
  if (!t) throw std::runtime_error("reference: missing tensor " + name);
  const size_t cols = t->dims[0];
  const size_t rows = t->dims.size() > 1 ? t->dims[1] : 1;
  const size_t rb = dtype_row_bytes(t->type, cols);
  std::vector<float> row(cols);
  Mat m;
  m.resize(rows * cols);
  m.type = t->type;
  const uint8_t* base = f.tensor_data(*t) + slice * rows * rb;
  for (size_t r = 0; r < rows; ++r) {
    dequantize_row(t->type, base + r * rb, row.data(), cols);
    for (size_t c = 0; c < cols; ++c) m[r * cols + c] = row[c];
  }
  return m;
}

// y[rows] = W[rows][cols] x[cols]
std::vector<double> matvec(const Mat& W, const std::vector<double>& x_in) {
  const std::vector<double> x = is_kquant(W.type)
                                    ? codes_rounded(x_in, quantize_activations_q8_K, 256, 16)
                                : W.type == DType::MXFP4 || W.type == DType::Q8_0
                                    ? codes_rounded(x_in, quantize_activations_q8_0, 32, 32)
                                    : x_in;
  const size_t cols = x.size(), rows = W.size() / cols;
  std::vector<double> y(rows, 0.0);
  for (size_t r = 0; r < rows; ++r)
    for (size_t c = 0; c < cols; ++c) y[r] += W[r * cols + c] * x[c];
  return y;
}

std::vector<double> rmsnorm(const std::vector<double>& x, const Mat& w, double eps, size_t off = 0,
                            size_t n = 0) {
  if (n == 0) n = x.size();
  std::vector<double> y(x);
  double ss = 0;
  for (size_t i = 0; i < n; ++i) ss += x[off + i] * x[off + i];
  const double inv = 1.0 / std::sqrt(ss / double(n) + eps);
  for (size_t i = 0; i < n; ++i) y[off + i] = x[off + i] * inv * w[i];
  return y;
}

// base, scale and nr: the layer kind's (gemma's sliding layers: their own base, scale 1; gemma4's
// their own rotated width); ff: gemma4's full layers' frequency divisors (rope_freqs) or empty.
void rope_head(double* v, const ModelConfig& c, int pos, double base, double scale, int nr,
               const std::vector<double>& ff) {
  for (int i = 0; i < nr / 2; ++i) {
    const double theta =
        pos * scale * std::pow(base, -2.0 * i / nr) / (ff.empty() ? 1.0 : ff[size_t(i)]);
    const int a = c.arch == Arch::Llama ? 2 * i : i;
    const int b = c.arch == Arch::Llama ? 2 * i + 1 : i + nr / 2;
    const double x0 = v[a], x1 = v[b];
    v[a] = x0 * std::cos(theta) - x1 * std::sin(theta);
    v[b] = x0 * std::sin(theta) + x1 * std::cos(theta);
  }
}

double silu(double x) {
  return x / (1.0 + std::exp(-x));
}

std::vector<double> swiglu_ffn(const Mat& g, const Mat& u, const Mat& d,
                               const std::vector<double>& x) {
  std::vector<double> a = matvec(g, x), b = matvec(u, x);
  for (size_t i = 0; i < a.size(); ++i) a[i] = silu(a[i]) * b[i];
  return matvec(d, a);
}

// Gemma's gated GELU as ggml's CPU backend evaluates it (kernels/elementwise.h geglu_tanh): the
// tanh GELU in double at the fp16-rounded input, its result rounded to fp16, 0 / identity beyond
// +-10. The fp16 roundings are the reference arithmetic the engine reproduces, not an error.
double gelu_fp16(double x) {
  if (x <= -10.0) return 0.0;
  if (x >= 10.0) return x;
  const double h = fp16_to_f32(f32_to_fp16(float(x)));
  const double g =
      0.5 * h * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * h * (1.0 + 0.044715 * h * h)));
  return fp16_to_f32(f32_to_fp16(float(g)));
}

std::vector<double> geglu_ffn(const Mat& g, const Mat& u, const Mat& d,
                              const std::vector<double>& x) {
  std::vector<double> a = matvec(g, x), b = matvec(u, x);
  for (size_t i = 0; i < a.size(); ++i) a[i] = gelu_fp16(a[i]) * b[i];
  return matvec(d, a);
}

// gpt-oss's MoE (llama.cpp's build_moe_ffn for openai-moe): router logits plus bias, the top-k
// logits (ties to the lower index), softmax over those k, and per chosen expert the clamped
// SwiGLU (alpha 1.702, limit 7) of gate/up with biases, then down with its bias.
std::vector<double> moe_oai(const GgufFile& f, const std::string& p, const ModelConfig& c,
                            const std::vector<double>& x) {
  auto r = matvec(load(f, p + "ffn_gate_inp.weight"), x);
  const Mat rb = load(f, p + "ffn_gate_inp.bias");
  for (size_t e = 0; e < r.size(); ++e) r[e] += rb[e];
  std::vector<size_t> idx(r.size());
  std::iota(idx.begin(), idx.end(), 0);
  std::stable_sort(idx.begin(), idx.end(), [&](size_t a, size_t b) { return r[a] > r[b]; });
  const size_t K = size_t(c.n_expert_used), F = size_t(c.n_ff_expert), E = x.size();
  double mx = r[idx[0]], sum = 0;
  std::vector<double> w(K);
  for (size_t i = 0; i < K; ++i) sum += (w[i] = std::exp(r[idx[i]] - mx));
  const Mat gb = load(f, p + "ffn_gate_exps.bias"), ub = load(f, p + "ffn_up_exps.bias"),
            db = load(f, p + "ffn_down_exps.bias");
  std::vector<double> y(E, 0.0);
  for (size_t i = 0; i < K; ++i) {
    const size_t e = idx[i];
    auto g = matvec(load(f, p + "ffn_gate_exps.weight", e), x);
    auto u = matvec(load(f, p + "ffn_up_exps.weight", e), x);
    for (size_t j = 0; j < F; ++j) {
      const double gj = std::min(g[j] + gb[e * F + j], 7.0);
      const double uj = std::clamp(u[j] + ub[e * F + j], -7.0, 7.0);
      g[j] = gj / (1.0 + std::exp(-1.702 * gj)) * (uj + 1.0);
    }
    const auto d = matvec(load(f, p + "ffn_down_exps.weight", e), g);
    for (size_t j = 0; j < E; ++j) y[j] += w[i] / sum * (d[j] + db[e * E + j]);
  }
  return y;
}

// A top-k routed MoE FFN (llama's and qwen35moe's): softmax over the router, the top
// n_expert_used (ties to the lower index), their weights renormalised, SwiGLU experts summed.
std::vector<double> routed_moe(const GgufFile& f, const std::string& p, const ModelConfig& c,
                               const std::vector<double>& xn) {
  auto r = matvec(load(f, p + "ffn_gate_inp.weight"), xn);
  const double mx = *std::max_element(r.begin(), r.end());
  double sum = 0;
  for (auto& e : r) sum += (e = std::exp(e - mx));
  for (auto& e : r) e /= sum;
  std::vector<size_t> idx(r.size());
  std::iota(idx.begin(), idx.end(), 0);
  std::stable_sort(idx.begin(), idx.end(), [&](size_t a, size_t b) { return r[a] > r[b]; });
  double wsum = 0;
  for (int i = 0; i < c.n_expert_used; ++i) wsum += r[idx[size_t(i)]];
  std::vector<double> y(xn.size(), 0.0);
  for (int i = 0; i < c.n_expert_used; ++i) {
    const size_t e = idx[size_t(i)];
    const auto ye =
        swiglu_ffn(load(f, p + "ffn_gate_exps.weight", e), load(f, p + "ffn_up_exps.weight", e),
                   load(f, p + "ffn_down_exps.weight", e), xn);
    for (size_t j = 0; j < y.size(); ++j) y[j] += r[e] / wsum * ye[j];
  }
  return y;
}

// Token t's attention output [H * hd] over every token at a position <= its own (by position),
// query head h reading KV head h / (H / HKV), softmax of the scaled dot products.
std::vector<double> causal_attention(const std::vector<std::vector<double>>& q,
                                     const std::vector<std::vector<double>>& k,
                                     const std::vector<std::vector<double>>& v,
                                     const std::vector<int32_t>& positions, size_t t, size_t H,
                                     size_t HKV, size_t hd, double scale) {
  const size_t T = q.size();
  std::vector<double> att(H * hd, 0.0);
  for (size_t h = 0; h < H; ++h) {
    const size_t g = h / (H / HKV);
    std::vector<double> s(T, -INFINITY);
    double mx = -INFINITY, sum = 0;
    for (size_t j = 0; j < T; ++j) {
      if (positions[j] > positions[t]) continue;
      double dot = 0;
      for (size_t d = 0; d < hd; ++d) dot += q[t][h * hd + d] * k[j][g * hd + d];
      mx = std::max(mx, s[j] = dot * scale);
    }
    for (double& e : s) sum += (e = std::exp(e - mx));
    for (size_t j = 0; j < T; ++j)
      for (size_t d = 0; d < hd; ++d) att[h * hd + d] += s[j] / sum * v[j][g * hd + d];
  }
  return att;
}

// A Gated DeltaNet layer's input projections per token: the conv input [q | k | v] (q and k by key
// head, v by value head), the gate z and the pre-activation beta (b) and alpha (a) by value head.
// qwen35: attn_qkv, attn_gate, ssm_beta, ssm_alpha. qwen3next (llama.cpp qwen3next.cpp): ssm_ba's
// output per key-head group g of r value heads is [b for heads g*r .. g*r+r-1 | a for the same];
// legacy files have ssm_in, whose output per group g is [q of key head g | k of key head g | v of
// value heads g*r.. (r heads) | z of the same heads]; new ones attn_qkv and attn_gate.
class DeltaProjections {
 public:
  DeltaProjections(const GgufFile& f, const ModelConfig& c, const std::string& p)
      : next_(c.arch == Arch::Qwen3Next),
        legacy_(next_ && f.find_tensor(p + "ssm_in.weight") != nullptr),
        hk_(size_t(c.ssm_n_group)),
        hv_(size_t(c.ssm_dt_rank)),
        dk_(size_t(c.ssm_d_state)),
        dv_(size_t(c.ssm_d_inner) / hv_) {
    if (legacy_) {
      w_[0] = load(f, p + "ssm_in.weight");
    } else {
      w_[0] = load(f, p + "attn_qkv.weight");
      w_[1] = load(f, p + "attn_gate.weight");
    }
    if (next_) {
      w_[2] = load(f, p + "ssm_ba.weight");
    } else {
      w_[2] = load(f, p + "ssm_beta.weight");
      w_[3] = load(f, p + "ssm_alpha.weight");
    }
  }

  void apply(const std::vector<double>& xn, std::vector<double>& in, std::vector<double>& z,
             std::vector<double>& b, std::vector<double>& a) const {
    const size_t r = hv_ / hk_, Kd = hk_ * dk_;
    if (legacy_) {
      const auto m = matvec(w_[0], xn);
      const size_t group = 2 * dk_ + 2 * r * dv_;
      in.assign(2 * Kd + hv_ * dv_, 0.0);
      z.assign(hv_ * dv_, 0.0);
      for (size_t g = 0; g < hk_; ++g) {
        const double* blk = &m[g * group];
        for (size_t i = 0; i < dk_; ++i)
          in[g * dk_ + i] = blk[i], in[Kd + g * dk_ + i] = blk[dk_ + i];
        for (size_t i = 0; i < r * dv_; ++i) {
          in[2 * Kd + g * r * dv_ + i] = blk[2 * dk_ + i];
          z[g * r * dv_ + i] = blk[2 * dk_ + r * dv_ + i];
        }
      }
    } else {
      in = matvec(w_[0], xn);
      z = matvec(w_[1], xn);
    }
    if (!next_) {
      b = matvec(w_[2], xn);
      a = matvec(w_[3], xn);
      return;
    }
    const auto ba = matvec(w_[2], xn);
    b.assign(hv_, 0.0);
    a.assign(hv_, 0.0);
    for (size_t h = 0; h < hv_; ++h) {
      b[h] = ba[(h / r) * 2 * r + h % r];
      a[h] = ba[(h / r) * 2 * r + r + h % r];
    }
  }

 private:
  bool next_, legacy_;
  size_t hk_, hv_, dk_, dv_;
  Mat w_[4];
};

// qwen35 (llama.cpp src/models/qwen35.cpp), every layer x += mixer(rmsnorm(x)); x +=
// ffn(rmsnorm(x)) with the FFN norm named post_attention_norm. The mixer of a recurrent layer is
// Gated DeltaNet written from its definition in double: the depthwise causal conv (zero history)
// with SiLU over [q | k | v], per-head L2 norms of q and k (x / max(|x|, eps)), decay
// g = softplus(alpha + dt_bias) * A and beta = sigmoid(b), then per value head h (key head h mod
// key heads) the state S (head_v_dim x head_k_dim, zero at the start): S *= e^g; S += beta (v -
// S k) k^T; o = S q / sqrt(head_k_dim); and the gated norm rmsnorm(o_h) * w * silu(z_h) (qwen3next:
// key head h / (value heads / key heads), and the projections of DeltaProjections). The
// mixer of an attention layer splits attn_q's per-head [query | gate], norms Q and K per head,
// rotates them by NeoX RoPE over the first n_rot dimensions, attends causally by position, and
// multiplies the result by sigmoid(gate). Tokens enter the recurrence in the order given.
std::vector<std::vector<double>> hybrid_layers(const GgufFile& f, const ModelConfig& c,
                                               std::vector<std::vector<double>> x,
                                               const std::vector<int32_t>& positions) {
  const size_t T = x.size(), E = size_t(c.n_embd), hd = size_t(c.head_dim);
  const size_t H = size_t(c.n_head), HKV = size_t(c.n_head_kv);
  for (int l = 0; l < c.n_layer; ++l) {
    const std::string p = "blk." + std::to_string(l) + ".";
    const Mat an = load(f, p + "attn_norm.weight");
    std::vector<std::vector<double>> out(T);
    if (is_recurrent_layer(c, l)) {
      const size_t Hk = size_t(c.ssm_n_group), Hv = size_t(c.ssm_dt_rank);
      const size_t dk = size_t(c.ssm_d_state), dv = size_t(c.ssm_d_inner) / Hv;
      const size_t Kd = Hk * dk, ch = 2 * Kd + Hv * dv, K = size_t(c.ssm_d_conv);
      const Mat conv = load(f, p + "ssm_conv1d.weight"), dt = load(f, p + "ssm_dt.bias"),
                A = load(f, p + "ssm_a"), nw = load(f, p + "ssm_norm.weight"),
                wout = load(f, p + "ssm_out.weight");
      std::vector<std::vector<double>> in(T), z(T), b(T), a(T);
      const DeltaProjections proj(f, c, p);
      for (size_t t = 0; t < T; ++t)
        proj.apply(rmsnorm(x[t], an, c.rms_eps), in[t], z[t], b[t], a[t]);
      // qwen3next repeats each key head over r consecutive value heads; qwen35 tiles them.
      const size_t r = Hv / Hk;
      auto key_head = [&](size_t h) { return c.arch == Arch::Qwen3Next ? h / r : h % Hk; };
      std::vector<double> S(Hv * dv * dk, 0.0);
      for (size_t t = 0; t < T; ++t) {
        std::vector<double> u(ch, 0.0);
        for (size_t cc = 0; cc < ch; ++cc) {
          for (size_t k = 0; k < K; ++k)
            if (t + k + 1 >= K) u[cc] += conv[cc * K + k] * in[t + k + 1 - K][cc];
          u[cc] = silu(u[cc]);
        }
        for (size_t h = 0; h < 2 * Hk; ++h) {  // q heads, then k heads
          double ss = 0;
          for (size_t i = 0; i < dk; ++i) ss += u[h * dk + i] * u[h * dk + i];
          const double inv = 1.0 / std::max(std::sqrt(ss), double(c.rms_eps));
          for (size_t i = 0; i < dk; ++i) u[h * dk + i] *= inv;
        }
        std::vector<double> o(Hv * dv);
        for (size_t h = 0; h < Hv; ++h) {
          const double sp = std::log1p(std::exp(a[t][h] + dt[h]));
          const double decay = std::exp(sp * A[h]), beta = 1.0 / (1.0 + std::exp(-b[t][h]));
          const double* q = &u[key_head(h) * dk];
          const double* k = &u[Kd + key_head(h) * dk];
          const double* v = &u[2 * Kd + h * dv];
          double ss = 0;
          for (size_t j = 0; j < dv; ++j) {
            double* row = &S[(h * dv + j) * dk];
            double sk = 0;
            for (size_t i = 0; i < dk; ++i) sk += (row[i] *= decay) * k[i];
            const double d = beta * (v[j] - sk);
            double sq = 0;
            for (size_t i = 0; i < dk; ++i) sq += (row[i] += d * k[i]) * q[i];
            o[h * dv + j] = sq / std::sqrt(double(dk));
            ss += o[h * dv + j] * o[h * dv + j];
          }
          const double inv = 1.0 / std::sqrt(ss / double(dv) + c.rms_eps);
          for (size_t j = 0; j < dv; ++j) o[h * dv + j] *= inv * nw[j] * silu(z[t][h * dv + j]);
        }
        out[t] = matvec(wout, o);
      }
    } else {
      const Mat wq = load(f, p + "attn_q.weight"), wk = load(f, p + "attn_k.weight"),
                wv = load(f, p + "attn_v.weight"), wo = load(f, p + "attn_output.weight"),
                qn = load(f, p + "attn_q_norm.weight"), kn = load(f, p + "attn_k_norm.weight");
      std::vector<std::vector<double>> q(T), gate(T), k(T), v(T);
      for (size_t t = 0; t < T; ++t) {
        const auto xn = rmsnorm(x[t], an, c.rms_eps);
        const auto qg = matvec(wq, xn);
        for (size_t h = 0; h < H; ++h) {
          q[t].insert(q[t].end(), qg.begin() + long(2 * h * hd),
                      qg.begin() + long(2 * h * hd + hd));
          gate[t].insert(gate[t].end(), qg.begin() + long(2 * h * hd + hd),
                         qg.begin() + long(2 * h * hd + 2 * hd));
        }
        k[t] = matvec(wk, xn), v[t] = matvec(wv, xn);
        for (size_t h = 0; h < H; ++h) q[t] = rmsnorm(q[t], qn, c.rms_eps, h * hd, hd);
        for (size_t h = 0; h < HKV; ++h) k[t] = rmsnorm(k[t], kn, c.rms_eps, h * hd, hd);
        for (size_t h = 0; h < H; ++h)
          rope_head(&q[t][h * hd], c, positions[t], c.rope.freq_base, 1, c.rope.n_rot, {});
        for (size_t h = 0; h < HKV; ++h)
          rope_head(&k[t][h * hd], c, positions[t], c.rope.freq_base, 1, c.rope.n_rot, {});
      }
      const double scale = 1.0 / std::sqrt(double(hd));
      for (size_t t = 0; t < T; ++t) {
        std::vector<double> att = causal_attention(q, k, v, positions, t, H, HKV, hd, scale);
        for (size_t i = 0; i < H * hd; ++i) att[i] /= 1.0 + std::exp(-gate[t][i]);
        out[t] = matvec(wo, att);
      }
    }
    // The FFN: dense, or (qwen35moe) the shared expert scaled by sigmoid(x . gate_inp_shexp) plus
    // the top-k of the softmax over experts, renormalised.
    const bool moe = c.n_expert > 0;
    const std::string sh = moe ? "_shexp" : "";
    const Mat fn = load(f, p + "post_attention_norm.weight"),
              fg = load(f, p + "ffn_gate" + sh + ".weight"),
              fu = load(f, p + "ffn_up" + sh + ".weight"),
              fd = load(f, p + "ffn_down" + sh + ".weight");
    for (size_t t = 0; t < T; ++t) {
      for (size_t i = 0; i < E; ++i) x[t][i] += out[t][i];
      const auto xn = rmsnorm(x[t], fn, c.rms_eps);
      auto y = swiglu_ffn(fg, fu, fd, xn);
      if (moe) {
        const Mat sg = load(f, p + "ffn_gate_inp_shexp.weight");
        double dot = 0;
        for (size_t i = 0; i < E; ++i) dot += sg[i] * xn[i];
        for (double& e : y) e /= 1.0 + std::exp(-dot);
        const auto routed = routed_moe(f, p, c, xn);
        for (size_t j = 0; j < E; ++j) y[j] += routed[j];
      }
      for (size_t i = 0; i < E; ++i) x[t][i] += y[i];
    }
  }
  return x;
}

// x += b (when the file has the bias `name`).
void add_optional_bias(const GgufFile& f, const std::string& name, std::vector<double>& x) {
  if (!f.find_tensor(name)) return;
  const Mat b = load(f, name);
  for (size_t i = 0; i < x.size(); ++i) x[i] += b[i];
}

// One nemotron_h Mamba-2 mixer over the whole sequence, from mamba-base.cpp's definition in
// double: the in-projection [z | xBC | dt]; the depthwise causal conv over xBC (zero history)
// plus its bias, then SiLU; x, B, C split from it; per head h (B/C group h / (heads / groups)):
// dt' = softplus(dt + dt_bias), S = S e^(dt' A) + (x dt') B^T, y = S C + D x (S zero at the
// start); y *= silu(z); the RMS norm over each of the groups' d_inner / groups elements times
// ssm_norm; the out-projection. Tokens enter the recurrence in the order given.
std::vector<std::vector<double>> mamba2_mixer(const GgufFile& f, const ModelConfig& c,
                                              const std::string& p,
                                              const std::vector<std::vector<double>>& xn) {
  const size_t T = xn.size(), H = size_t(c.ssm_dt_rank), G = size_t(c.ssm_n_group);
  const size_t Di = size_t(c.ssm_d_inner), hd = Di / H, ds = size_t(c.ssm_d_state);
  const size_t ch = Di + 2 * G * ds, K = size_t(c.ssm_d_conv);
  const Mat win = load(f, p + "ssm_in.weight"), conv = load(f, p + "ssm_conv1d.weight"),
            dtb = load(f, p + "ssm_dt.bias"), A = load(f, p + "ssm_a"), D = load(f, p + "ssm_d"),
            nw = load(f, p + "ssm_norm.weight"), wout = load(f, p + "ssm_out.weight");
  Mat cb;
  cb.assign(ch, 0.0);
  if (f.find_tensor(p + "ssm_conv1d.bias")) cb = load(f, p + "ssm_conv1d.bias");
  std::vector<std::vector<double>> in(T), out(T);
  for (size_t t = 0; t < T; ++t) in[t] = matvec(win, xn[t]);
  std::vector<double> S(H * hd * ds, 0.0);
  for (size_t t = 0; t < T; ++t) {
    std::vector<double> u(ch, 0.0);
    for (size_t cc = 0; cc < ch; ++cc) {
      for (size_t k = 0; k < K; ++k)
        if (t + k + 1 >= K) u[cc] += conv[cc * K + k] * in[t + k + 1 - K][Di + cc];
      u[cc] = silu(u[cc] + cb[cc]);
    }
    std::vector<double> y(Di);
    for (size_t h = 0; h < H; ++h) {
      const size_t g = h / (H / G);
      const double z = in[t][Di + ch + h] + dtb[h];
      const double dt = z > 20.0 ? z : std::log1p(std::exp(z));
      const double decay = std::exp(dt * A[h]);
      const double* B = &u[Di + g * ds];
      const double* C = &u[Di + G * ds + g * ds];
      for (size_t i = 0; i < hd; ++i) {
        const double xi = u[h * hd + i];
        double* row = &S[(h * hd + i) * ds];
        double acc = 0;
        for (size_t n = 0; n < ds; ++n) acc += (row[n] = row[n] * decay + B[n] * xi * dt) * C[n];
        y[h * hd + i] = (acc + D[h] * xi) * silu(in[t][h * hd + i]);
      }
    }
    for (size_t g = 0; g < G; ++g) {
      const size_t n = Di / G;
      double ss = 0;
      for (size_t i = 0; i < n; ++i) ss += y[g * n + i] * y[g * n + i];
      const double inv = 1.0 / std::sqrt(ss / double(n) + c.rms_eps);
      for (size_t i = 0; i < n; ++i) y[g * n + i] *= inv * nw[g * n + i];
    }
    out[t] = matvec(wout, y);
  }
  return out;
}

// relu(W x)^2 for each row of W, then D times that.
std::vector<double> relu2(const Mat& up, const Mat& down, const std::vector<double>& x) {
  auto u = matvec(up, x);
  for (double& e : u) e = e > 0 ? e * e : 0.0;
  return matvec(down, u);
}

// nemotron_h_moe's FFN block (llama.cpp build_moe_ffn with sigmoid gating): p = sigmoid(router
// x); the top n_expert_used of p + exp_probs_b (ties to the lower index); their p, divided by
// max(sum, 2^-14) when expert_weights_norm, times expert_weights_scale (0 = 1); the chosen
// experts' relu^2 FFNs on x (through ffn_latent_down / ffn_latent_up when present), weighted
// and summed; plus the shared expert's relu^2 FFN on x.
std::vector<double> nemotron_moe(const GgufFile& f, const std::string& p, const ModelConfig& c,
                                 const std::vector<double>& x) {
  auto r = matvec(load(f, p + "ffn_gate_inp.weight"), x);
  const Mat b = load(f, p + "exp_probs_b.bias");
  std::vector<double> sel(r.size());
  for (size_t e = 0; e < r.size(); ++e) sel[e] = (r[e] = 1.0 / (1.0 + std::exp(-r[e]))) + b[e];
  std::vector<size_t> idx(r.size());
  std::iota(idx.begin(), idx.end(), 0);
  std::stable_sort(idx.begin(), idx.end(), [&](size_t a, size_t c2) { return sel[a] > sel[c2]; });
  const size_t K = size_t(c.n_expert_used);
  double sum = 0;
  for (size_t i = 0; i < K; ++i) sum += r[idx[i]];
  const double div = c.expert_weights_norm ? std::max(sum, 6.103515625e-5) : 1.0;
  const double scale = c.expert_weights_scale != 0.f ? double(c.expert_weights_scale) : 1.0;
  const bool latent = c.moe_latent > 0;
  const auto xl = latent ? matvec(load(f, p + "ffn_latent_down.weight"), x) : x;
  std::vector<double> y(xl.size(), 0.0);
  for (size_t i = 0; i < K; ++i) {
    const size_t e = idx[i];
    const auto ye =
        relu2(load(f, p + "ffn_up_exps.weight", e), load(f, p + "ffn_down_exps.weight", e), xl);
    for (size_t j = 0; j < y.size(); ++j) y[j] += r[e] / div * scale * ye[j];
  }
  if (latent) y = matvec(load(f, p + "ffn_latent_up.weight"), y);
  const auto sh =
      relu2(load(f, p + "ffn_up_shexp.weight"), load(f, p + "ffn_down_shexp.weight"), x);
  for (size_t j = 0; j < y.size(); ++j) y[j] += sh[j];
  return y;
}

// nemotron_h (llama.cpp src/models/nemotron-h.cpp): every block x += mixer(rmsnorm(x)) with the
// mixer by kind: Mamba-2 (mamba2_mixer); attention with optional Q/K/V/output biases, no RoPE and
// no Q/K norms, causal by position, scale attention.scale or 1/sqrt(head_dim); or the FFN
// down(relu(up x + b)^2) + b.
std::vector<std::vector<double>> nemotron_h_layers(const GgufFile& f, const ModelConfig& c,
                                                   std::vector<std::vector<double>> x,
                                                   const std::vector<int32_t>& positions) {
  const size_t T = x.size(), E = size_t(c.n_embd), hd = size_t(c.head_dim);
  const size_t H = size_t(c.n_head), HKV = size_t(c.n_head_kv);
  const double scale =
      c.attn_scale > 0.f ? double(c.attn_scale) : 1.0 / std::sqrt(double(c.head_dim));
  for (int l = 0; l < c.n_layer; ++l) {
    const std::string p = "blk." + std::to_string(l) + ".";
    const Mat an = load(f, p + "attn_norm.weight");
    std::vector<std::vector<double>> xn(T), out(T);
    for (size_t t = 0; t < T; ++t) xn[t] = rmsnorm(x[t], an, c.rms_eps);
    if (is_recurrent_layer(c, l)) {
      out = mamba2_mixer(f, c, p, xn);
    } else if (is_ffn_only_layer(c, l) && c.arch == Arch::NemotronHMoe) {
      for (size_t t = 0; t < T; ++t) out[t] = nemotron_moe(f, p, c, xn[t]);
    } else if (is_ffn_only_layer(c, l)) {
      const Mat up = load(f, p + "ffn_up.weight"), down = load(f, p + "ffn_down.weight");
      for (size_t t = 0; t < T; ++t) {
        auto u = matvec(up, xn[t]);
        add_optional_bias(f, p + "ffn_up.bias", u);
        for (double& e : u) e = e > 0 ? e * e : 0.0;
        out[t] = matvec(down, u);
        add_optional_bias(f, p + "ffn_down.bias", out[t]);
      }
    } else {
      const Mat wq = load(f, p + "attn_q.weight"), wk = load(f, p + "attn_k.weight"),
                wv = load(f, p + "attn_v.weight"), wo = load(f, p + "attn_output.weight");
      std::vector<std::vector<double>> q(T), k(T), v(T);
      for (size_t t = 0; t < T; ++t) {
        q[t] = matvec(wq, xn[t]), k[t] = matvec(wk, xn[t]), v[t] = matvec(wv, xn[t]);
        add_optional_bias(f, p + "attn_q.bias", q[t]);
        add_optional_bias(f, p + "attn_k.bias", k[t]);
        add_optional_bias(f, p + "attn_v.bias", v[t]);
      }
      for (size_t t = 0; t < T; ++t) {
        std::vector<double> att = causal_attention(q, k, v, positions, t, H, HKV, hd, scale);
        out[t] = matvec(wo, att);
        add_optional_bias(f, p + "attn_output.bias", out[t]);
      }
    }
    for (size_t t = 0; t < T; ++t)
      for (size_t i = 0; i < E; ++i) x[t][i] += out[t][i];
  }
  return x;
}

}  // namespace

std::vector<double> reference_forward(const std::string& path, const std::vector<int32_t>& tokens) {
  std::vector<int32_t> positions(tokens.size());
  std::iota(positions.begin(), positions.end(), 0);
  return reference_forward(path, tokens, positions);
}

std::vector<double> reference_forward(const std::string& path, const std::vector<int32_t>& tokens,
                                      const std::vector<int32_t>& positions) {
  if (positions.size() != tokens.size())
    throw std::invalid_argument("reference: " + std::to_string(tokens.size()) + " tokens but " +
                                std::to_string(positions.size()) + " positions");
  const GgufFile f = GgufFile::open(path);
  ModelConfig c = ModelConfig::from_gguf(f);
  const size_t T = tokens.size(), E = size_t(c.n_embd), H = size_t(c.n_head);
  // The file's {arch}.attention.scale when present, else the textbook 1/sqrt(head_dim).
  const double scale =
      c.attn_scale > 0.f ? double(c.attn_scale) : 1.0 / std::sqrt(double(c.head_dim));
  const Mat emb = load(f, "token_embd.weight");
  const size_t V = emb.size() / E;
  std::vector<std::vector<double>> x(T);
  const bool gemma4 = c.arch == Arch::Gemma4;
  const bool gemma = c.arch == Arch::Gemma3 || gemma4, gptoss = c.arch == Arch::GptOss;
  std::vector<double> rope_ff;  // gemma4: rope_freqs, its full layers' frequency divisors
  if (gemma4) {
    const Mat ff = load(f, "rope_freqs.weight");
    rope_ff.assign(ff.begin(), ff.end());
  }
  for (size_t t = 0; t < T; ++t) {
    x[t].assign(emb.begin() + long(tokens[t] * E), emb.begin() + long((tokens[t] + 1) * E));
    if (gemma)  // Gemma scales its embeddings by sqrt(n_embd)
      for (double& e : x[t]) e *= std::sqrt(double(E));
  }

  const bool hybrid = is_qwen35_arch(c.arch) || is_nemotron_h_arch(c.arch);
  if (is_qwen35_arch(c.arch)) x = hybrid_layers(f, c, std::move(x), positions);
  if (is_nemotron_h_arch(c.arch)) x = nemotron_h_layers(f, c, std::move(x), positions);
  for (int l = 0; l < (hybrid ? 0 : c.n_layer); ++l) {
    const std::string p = "blk." + std::to_string(l) + ".";
    // gpt-oss names its FFN input norm post_attention_norm.
    // gemma4's kinds differ in head size and KV heads; a layer without attn_v uses K's projection.
    const LayerAttention la = layer_attention(c, l);
    const size_t hd = size_t(la.head_dim), HKV = size_t(la.n_head_kv);
    const Mat an = load(f, p + "attn_norm.weight"), wq = load(f, p + "attn_q.weight"),
              wk = load(f, p + "attn_k.weight"),
              wv = f.find_tensor(p + "attn_v.weight") ? load(f, p + "attn_v.weight") : wk,
              wo = load(f, p + "attn_output.weight"),
              fn = load(f, p + (gptoss ? "post_attention_norm.weight" : "ffn_norm.weight"));
    Mat sinks, wo_b;
    if (gptoss) sinks = load(f, p + "attn_sinks.weight"), wo_b = load(f, p + "attn_output.bias");
    // The layer's kind: a sliding layer sees keys within its window and ropes with its own base
    // (and, for gemma3, frequency scale 1).
    const bool sliding = c.n_swa > 0 && c.swa_layers.at(size_t(l)) != 0;
    const int window = sliding ? c.n_swa : 0;
    const double base = sliding ? double(c.rope_base_swa) : double(c.rope.freq_base);
    const double fscale = sliding && gemma ? 1.0 : double(c.rope.freq_scale);
    std::vector<std::vector<double>> q(T), k(T), v(T);
    for (size_t t = 0; t < T; ++t) {
      const auto xn = rmsnorm(x[t], an, c.rms_eps);
      q[t] = matvec(wq, xn);
      k[t] = matvec(wk, xn);
      v[t] = matvec(wv, xn);
      if (c.qkv_bias) {
        const Mat bq = load(f, p + "attn_q.bias"), bk = load(f, p + "attn_k.bias"),
                  bv = load(f, p + "attn_v.bias");
        for (size_t i = 0; i < q[t].size(); ++i) q[t][i] += bq[i];
        for (size_t i = 0; i < k[t].size(); ++i) k[t][i] += bk[i], v[t][i] += bv[i];
      }
      if (c.qk_norm) {
        const Mat qn = load(f, p + "attn_q_norm.weight"), kn = load(f, p + "attn_k_norm.weight");
        for (size_t h = 0; h < H; ++h) q[t] = rmsnorm(q[t], qn, c.rms_eps, h * hd, hd);
        for (size_t h = 0; h < HKV; ++h) k[t] = rmsnorm(k[t], kn, c.rms_eps, h * hd, hd);
      }
      if (gemma4) {  // V RMS-normed per head without a weight
        Mat ones;
        ones.assign(hd, 1.0);
        for (size_t h = 0; h < HKV; ++h) v[t] = rmsnorm(v[t], ones, c.rms_eps, h * hd, hd);
      }
      if (gptoss) {  // YaRN: the kernels' double-precision RoPE reference
        RopeParams r = c.rope;
        r.freq_base = float(base);
        rope_reference(q[t].data(), 1, q[t].size(), int(H), &positions[t], r);
        rope_reference(k[t].data(), 1, k[t].size(), int(HKV), &positions[t], r);
        continue;
      }
      const std::vector<double> no_ff;
      const std::vector<double>& ff = gemma4 && !sliding ? rope_ff : no_ff;
      for (size_t h = 0; h < H; ++h)
        rope_head(&q[t][h * hd], c, positions[t], base, fscale, la.n_rot, ff);
      for (size_t h = 0; h < HKV; ++h)
        rope_head(&k[t][h * hd], c, positions[t], base, fscale, la.n_rot, ff);
    }
    for (size_t t = 0; t < T; ++t) {
      std::vector<double> att(H * hd, 0.0);
      for (size_t h = 0; h < H; ++h) {
        const size_t g = h / (H / HKV);
        // Visible keys: every token at a position <= this one's (by position, not index), and
        // on a sliding layer fewer than `window` positions back.
        std::vector<size_t> seen;
        for (size_t j = 0; j < T; ++j)
          if (positions[j] <= positions[t] && (window == 0 || positions[t] - positions[j] < window))
            seen.push_back(j);
        std::vector<double> s(seen.size());
        for (size_t i = 0; i < seen.size(); ++i) {
          double dot = 0;
          for (size_t d = 0; d < hd; ++d) dot += q[t][h * hd + d] * k[seen[i]][g * hd + d];
          s[i] = dot * scale;
        }
        // A sink joins the denominator as a logit with a zero value (unscaled).
        const double sink = gptoss ? sinks[h] : -INFINITY;
        const double mx = std::max(*std::max_element(s.begin(), s.end()), sink);
        double sum = gptoss ? std::exp(sink - mx) : 0.0;
        for (auto& e : s) sum += (e = std::exp(e - mx));
        for (size_t i = 0; i < seen.size(); ++i)
          for (size_t d = 0; d < hd; ++d) att[h * hd + d] += s[i] / sum * v[seen[i]][g * hd + d];
      }
      auto o = matvec(wo, att);
      if (gptoss)
        for (size_t i = 0; i < E; ++i) o[i] += wo_b[i];
      if (gemma) o = rmsnorm(o, load(f, p + "post_attention_norm.weight"), c.rms_eps);
      for (size_t i = 0; i < E; ++i) x[t][i] += o[i];
    }
    for (size_t t = 0; t < T; ++t) {
      const auto xn = rmsnorm(x[t], fn, c.rms_eps);
      std::vector<double> y(E, 0.0);
      if (gptoss) {
        y = moe_oai(f, p, c, xn);
      } else if (gemma) {
        y = geglu_ffn(load(f, p + "ffn_gate.weight"), load(f, p + "ffn_up.weight"),
                      load(f, p + "ffn_down.weight"), xn);
        y = rmsnorm(y, load(f, p + "post_ffw_norm.weight"), c.rms_eps);
      } else if (c.n_expert == 0) {
        y = swiglu_ffn(load(f, p + "ffn_gate.weight"), load(f, p + "ffn_up.weight"),
                       load(f, p + "ffn_down.weight"), xn);
      } else {
        y = routed_moe(f, p, c, xn);
      }
      for (size_t i = 0; i < E; ++i) x[t][i] += y[i];
      if (gemma4 && f.find_tensor(p + "layer_output_scale.weight"))
        for (double& e : x[t]) e *= load(f, p + "layer_output_scale.weight")[0];
    }
  }
  const Mat on = load(f, "output_norm.weight");
  const Mat out = f.find_tensor("output.weight") ? load(f, "output.weight") : emb;
  std::vector<double> logits;
  for (size_t t = 0; t < T; ++t) {
    auto lg = matvec(out, rmsnorm(x[t], on, c.rms_eps));
    if (c.final_softcap > 0.f)
      for (double& e : lg) e = std::tanh(e / c.final_softcap) * c.final_softcap;
    logits.insert(logits.end(), lg.begin(), lg.end());
  }
  (void)V;
  return logits;
}

}  // namespace accel::test
