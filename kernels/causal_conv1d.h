// The short depthwise causal convolution of recurrent layers (Mamba-2's conv over xBC, Gated
// DeltaNet's conv over qkv) with its carried window of the last d_conv - 1 inputs, plus the SiLU
// that follows it in both. Knows nothing of layers or caches: the caller owns the window buffer.
//
// Definition (llama.cpp ggml_ssm_conv + bias + silu): for token t and channel c,
//   u[t][c] = sum_{k=0}^{d_conv-1} w[c][k] * in(t - (d_conv - 1) + k)[c]  (+ bias[c]),
//   out[t][c] = silu ? u / (1 + e^-u) : u,
// where in(tau) is x[tau] for tau >= 0 and window[tau + d_conv - 1] for tau < 0. Afterwards the
// window holds the last d_conv - 1 rows of (window ++ x), oldest first.
//
// Batch invariance: every output element is computed by the same operation sequence from its
// d_conv inputs (taps in ascending k: one multiply, then fused multiply-adds; then the bias add;
// then SiLU lane-wise), so out[t] is bit-identical whether token t arrives alone (decode), inside
// any prefill chunk, or with any thread count; and the window after a split call equals the window
// after one call over the same tokens.
#pragma once
#include <cstddef>

namespace accel {

struct CausalConvShape {
  int channels = 0;  // >= 1
  int d_conv = 0;    // kernel width >= 1 (4 in every model seen); the window has d_conv - 1 rows
};

// x: [n_tokens][channels], row stride ldx. weight: [channels][d_conv] (GGUF `ssm_conv1d.weight`,
// ne0 = d_conv, so tap k of channel c is weight[c * d_conv + k]; tap d_conv - 1 meets the newest
// input). bias: [channels] or nullptr. window: [d_conv - 1][channels], oldest first, updated in
// place. out: [n_tokens][channels], row stride ldo; must not overlap x or window.
void causal_conv1d(const CausalConvShape& s, const float* x, size_t ldx, size_t n_tokens,
                   const float* weight, const float* bias, bool silu, float* window, float* out,
                   size_t ldo);

}  // namespace accel
