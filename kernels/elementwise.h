// Row-wise kernels of a transformer block that are not GEMM or attention: RMSNorm, RoPE at explicit
// positions, softmax, SwiGLU, residual add. Each row is computed by the same code whatever the
// batch size, so these are batch invariant by construction. Double-precision references sit
// beside each kernel for the tests.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

namespace accel {

// out[r] = x[r] / sqrt(mean(x[r]^2) + eps) * weight, for n_rows rows of `dim` (strides in floats).
// out may alias x.
void rmsnorm(const float* x, size_t n_rows, size_t dim, size_t ldx, const float* weight, float eps,
             float* out, size_t ldo);
void rmsnorm_reference(const float* x, size_t n_rows, size_t dim, size_t ldx, const float* weight,
                       float eps, double* out, size_t ldo);

// How the rotated pairs are laid out within a head, as in llama.cpp: Adjacent (mode 0, "norm",
// used for `llama`) rotates (x[2i], x[2i+1]); HalfSplit (NeoX, used for `qwen2`/`qwen3`) rotates
// (x[i], x[i + n_rot/2]). Dimensions from n_rot to head_dim are left as they are (partial rotary).
enum class RopeLayout { Adjacent, HalfSplit };

// RoPE with the scalings llama.cpp's ggml_rope_ext applies (ggml-cpu rope_yarn). For pair i
// (0 <= i < n_rot/2) at position p:
//   theta_extrap = p * freq_base^(-2i/n_rot) / freq_factors[i]      (factors default to 1)
//   theta_interp = freq_scale * theta_extrap
//   without YaRN (ext_factor == 0): theta = theta_interp, m = attn_factor
//   with YaRN: r = ext_factor * (1 - clamp((i - low) / max(0.001, high - low), 0, 1)),
//              theta = theta_interp * (1 - r) + theta_extrap * r,
//              m = attn_factor * (1 + 0.1 * ln(1 / freq_scale))
//   where low = max(0, floor(corr(beta_fast))), high = min(n_rot - 1, ceil(corr(beta_slow))),
//   corr(b) = n_rot * ln(n_ctx_orig / (2 pi b)) / (2 ln freq_base);
//   (x_a, x_b) -> (m (x_a cos theta - x_b sin theta), m (x_a sin theta + x_b cos theta)).
// Linear scaling is freq_scale = 1/factor alone; Llama 3.x's frequency factors are the
// `rope_freqs.weight` tensor.
struct RopeParams {
  int head_dim = 0;
  int n_rot = 0;  // rotated dimensions per head (<= head_dim, even)
  float freq_base = 10000.f;
  float freq_scale = 1.f;  // linear and YaRN interpolation: position scaled by 1/factor
  RopeLayout layout = RopeLayout::Adjacent;
  float ext_factor = 0.f;   // YaRN extrapolation mix; 0 = no YaRN
  float attn_factor = 1.f;  // magnitude multiplier on cos and sin (YaRN's mscale)
  float beta_fast = 32.f;   // YaRN ramp ends, in rotations over n_ctx_orig
  float beta_slow = 1.f;
  int n_ctx_orig = 0;               // YaRN: the context the model was trained at
  std::vector<float> freq_factors;  // empty, or n_rot/2 divisors of each pair's frequency
};

// YaRN's correction range [low, high] in pair indices (the `corr_dims` of
// ggml_rope_yarn_corr_dims).
void rope_yarn_corr_dims(const RopeParams& p, double& low, double& high);

// Rotates, in place, n_heads heads of each of n_rows rows (row stride ld floats); row r is at
// absolute position pos[r]. Angles are computed in double from (position, pair index) alone, so a
// row's result does not depend on the batch it is in.
void rope(float* x, size_t n_rows, size_t ld, int n_heads, const int32_t* pos, const RopeParams& p);
void rope_reference(double* x, size_t n_rows, size_t ld, int n_heads, const int32_t* pos,
                    const RopeParams& p);

// In-place numerically stable softmax of one row.
void softmax(float* x, size_t n);
// log(sum(exp(x))) of one row, computed stably in double; for log-likelihoods.
double log_sum_exp(const float* x, size_t n);

// out[i] = silu(gate[i]) * up[i] over n elements; out may alias gate or up.
void swiglu(const float* gate, const float* up, float* out, size_t n);

// GPT-OSS's clamped SwiGLU (ggml_swiglu_oai): with g = min(gate[i], limit) and
// u = clamp(up[i], -limit, limit), out[i] = g / (1 + exp(-alpha g)) * (u + 1), in float in that
// order (alpha * -g, exp, 1 +, divide, u + 1, multiply). out may alias gate or up.
void swiglu_oai(const float* gate, const float* up, float* out, size_t n, float alpha, float limit);

// Gemma's gated GELU (ggml_geglu on CPU, what llama.cpp 3f545bec runs for gemma3):
// out[i] = gelu_tanh(gate[i]) * up[i], where gelu_tanh(x) = 0.5 x (1 + tanh(sqrt(2/pi) x
// (1 + 0.044715 x^2))) is evaluated as ggml's CPU backend does: 0 for x <= -10, x for x >= 10,
// otherwise at x rounded to fp16 with the result rounded to fp16 (its lookup table). The fp16
// rounding is part of the reference's arithmetic (relative 2^-11 per activation): a GELU without
// it moves tiny-gemma3's logits 2.8e-4 (relative) off llama.cpp's. The table stays sensitive to the
// last bit of the gate (a gate one float ulp away can land in the next fp16 step), which is why
// gemma3 agrees with llama.cpp to ~1e-4, not ~1e-6. out may alias gate or up.
void geglu_tanh(const float* gate, const float* up, float* out, size_t n);
// One table entry computed directly (x rounded to fp16, the formula, the result rounded to fp16),
// for the test that the table geglu_tanh reads holds exactly these values.
float gelu_tanh_table_entry(float x);

// y[i] += x[i].
void add_inplace(float* y, const float* x, size_t n);

}  // namespace accel
