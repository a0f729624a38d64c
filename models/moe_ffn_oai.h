// GPT-OSS's mixture-of-experts FFN as one unit (llama.cpp's build_moe_ffn with the openai-moe
// arguments): router with bias, top-k, softmax over the chosen logits, per-expert gate/up/down
// with biases and the clamped SwiGLU. Owns the expert weights and this arithmetic only; knows
// nothing about layers, norms, residuals or GGUF names (the model loader slices the tensors).
#pragma once
#include <cstddef>
#include <vector>

#include "kernels/dtype.h"
#include "kernels/gemm.h"

namespace accel {

// ggml_swiglu_oai's constants as build_moe_ffn hard-codes them for gpt-oss.
struct SwigluOaiParams {
  float alpha = 1.702f;
  float limit = 7.0f;
};

// The raw weights of one layer's experts as GGUF stores them (ggml row-major; for the 3-D expert
// tensors expert e's rows start at e * rows_per_expert * row_bytes). Biases are f32.
struct MoeOaiSource {
  int n_embd = 0, n_ff = 0, n_expert = 0, n_expert_used = 0;
  DType router_type = DType::F32;
  const void* router = nullptr;        // ffn_gate_inp.weight: n_expert rows x n_embd
  const float* router_bias = nullptr;  // ffn_gate_inp.bias:  n_expert
  DType expert_type = DType::F32;      // gate, up and down share it in every gpt-oss file
  const void* gate = nullptr;          // ffn_gate_exps.weight: n_expert x n_ff rows x n_embd
  const void* up = nullptr;            // ffn_up_exps.weight:   n_expert x n_ff rows x n_embd
  const void* down = nullptr;          // ffn_down_exps.weight: n_expert x n_embd rows x n_ff
  const float* gate_bias = nullptr;    // n_expert x n_ff
  const float* up_bias = nullptr;      // n_expert x n_ff
  const float* down_bias = nullptr;    // n_expert x n_embd
  SwigluOaiParams act;
};

// One layer's packed experts. Build once per layer (pack() checks the shapes), then call forward.
class MoeFfnOai {
 public:
  MoeFfnOai() = default;
  // Packs the router and each expert's gate and up into one weight of 2 n_ff rows (gate first).
  // Throws std::invalid_argument naming the field when a size or pointer is missing or wrong.
  static MoeFfnOai pack(const MoeOaiSource& src);

  // out[t] = sum over the token's top-k experts s (in descending router-logit order, ties to the
  // lower index) of w_s * down_s(swiglu_oai(gate_s(x[t]), up_s(x[t]))), with w the softmax of the
  // chosen logits (router(x) + bias) and each projection + its bias. x: T rows of n_embd (stride
  // ldx); out: T rows of n_embd (stride ldo), must not alias x. A token's output depends only on
  // its own row: bit-identical for any T, position in the batch, or thread count.
  void forward(const float* x, size_t T, size_t ldx, float* out, size_t ldo) const;

  // The experts chosen for one row of router logits (bias included), in the order forward() sums
  // them; exposed for the tests and for routing statistics.
  std::vector<int> select(const float* logits) const;

  int n_embd() const { return n_embd_; }
  int n_ff() const { return n_ff_; }
  int n_expert() const { return n_expert_; }
  int n_expert_used() const { return n_used_; }
  size_t bytes() const;  // packed bytes of the router and all experts (what decode may stream)

 private:
  int n_embd_ = 0, n_ff_ = 0, n_expert_ = 0, n_used_ = 0;
  SwigluOaiParams act_;
  PackedWeight router_;
  std::vector<float> router_bias_;
  std::vector<PackedWeight> gate_up_, down_;  // per expert
  std::vector<float> gate_up_bias_;           // [n_expert][2 n_ff]: gate bias, then up bias
  std::vector<float> down_bias_;              // [n_expert][n_embd]
};

}  // namespace accel
