// GPT-OSS's MoE FFN (see moe_ffn_oai.h). The arithmetic follows llama.cpp's build_moe_ffn for
// openai-moe (LLAMA_EXPERT_GATING_FUNC_TYPE_SOFTMAX_WEIGHT, LLM_FFN_SWIGLU_OAI_MOE, no weight
// normalisation or scale) step for step, so the sum order over experts is ggml's: selection order.
#include "models/moe_ffn_oai.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <stdexcept>
#include <string>

#include "kernels/elementwise.h"

namespace accel {

namespace {

void need(bool ok, const std::string& what) {
  if (!ok) throw std::invalid_argument("gpt-oss MoE: " + what);
}

const uint8_t* expert_rows(const void* base, DType t, size_t e, size_t rows, size_t cols) {
  return static_cast<const uint8_t*>(base) + e * rows * dtype_row_bytes(t, cols);
}

}  // namespace

MoeFfnOai MoeFfnOai::pack(const MoeOaiSource& s) {
  need(s.n_embd > 0 && s.n_ff > 0, "n_embd and n_ff (expert_feed_forward_length) must be > 0");
  need(s.n_expert > 0 && s.n_expert_used > 0 && s.n_expert_used <= s.n_expert,
       "expert_used_count " + std::to_string(s.n_expert_used) + " must be in [1, expert_count " +
           std::to_string(s.n_expert) + "]");
  need(s.router && s.router_bias, "ffn_gate_inp weight and bias are required");
  need(s.gate && s.up && s.down, "ffn_gate_exps, ffn_up_exps and ffn_down_exps are required");
  need(s.gate_bias && s.up_bias && s.down_bias, "the expert biases are required");
  const size_t E = size_t(s.n_embd), F = size_t(s.n_ff), NE = size_t(s.n_expert);
  need(E % dtype_block_elems(s.router_type) == 0 && E % dtype_block_elems(s.expert_type) == 0 &&
           F % dtype_block_elems(s.expert_type) == 0,
       "n_embd " + std::to_string(E) + " / n_ff " + std::to_string(F) +
           " is not a whole number of " + std::string(dtype_name(s.expert_type)) + " blocks");
  MoeFfnOai m;
  m.n_embd_ = s.n_embd;
  m.n_ff_ = s.n_ff;
  m.n_expert_ = s.n_expert;
  m.n_used_ = s.n_expert_used;
  m.act_ = s.act;
  m.router_ = PackedWeight::pack(s.router_type, s.router, NE, E);
  m.router_bias_.assign(s.router_bias, s.router_bias + NE);
  m.gate_up_bias_.resize(NE * 2 * F);
  m.down_bias_.assign(s.down_bias, s.down_bias + NE * E);
  for (size_t e = 0; e < NE; ++e) {
    m.gate_up_.push_back(PackedWeight::pack(s.expert_type,
                                            {{expert_rows(s.gate, s.expert_type, e, F, E), F},
                                             {expert_rows(s.up, s.expert_type, e, F, E), F}},
                                            E));
    m.down_.push_back(
        PackedWeight::pack(s.expert_type, expert_rows(s.down, s.expert_type, e, E, F), E, F));
    std::copy_n(s.gate_bias + e * F, F, m.gate_up_bias_.begin() + long(e * 2 * F));
    std::copy_n(s.up_bias + e * F, F, m.gate_up_bias_.begin() + long(e * 2 * F + F));
  }
  return m;
}

size_t MoeFfnOai::bytes() const {
  size_t b = router_.bytes();
  for (size_t e = 0; e < gate_up_.size(); ++e) b += gate_up_[e].bytes() + down_[e].bytes();
  return b;
}

std::vector<int> MoeFfnOai::select(const float* logits) const {
  std::vector<int> order(static_cast<size_t>(n_expert_));
  std::iota(order.begin(), order.end(), 0);
  // ggml sorts with std::sort (ties unspecified); ties go to the lower index here, so the choice
  // is a function of the logits alone. NaN logits sort last.
  std::partial_sort(order.begin(), order.begin() + n_used_, order.end(), [&](int a, int b) {
    const float la = logits[a], lb = logits[b];
    if (std::isnan(la) != std::isnan(lb)) return std::isnan(lb);
    return la > lb || (!(la < lb) && a < b);
  });
  order.resize(size_t(n_used_));
  return order;
}

void MoeFfnOai::forward(const float* x, size_t T, size_t ldx, float* out, size_t ldo) const {
  if (T == 0) return;
  const size_t E = size_t(n_embd_), F = size_t(n_ff_), NE = size_t(n_expert_), K = size_t(n_used_);
  std::vector<float> logits(T * NE);
  gemm(x, T, ldx, router_, logits.data(), NE, router_bias_.data());
  // Per token: the chosen experts and their softmax weights, slot by slot.
  std::vector<int> chosen(T * K);
  std::vector<float> weight(T * K);
  for (size_t t = 0; t < T; ++t) {
    const std::vector<int> sel = select(&logits[t * NE]);
    for (size_t s = 0; s < K; ++s) {
      chosen[t * K + s] = sel[s];
      weight[t * K + s] = logits[t * NE + size_t(sel[s])];
    }
    softmax(&weight[t * K], K);
  }
  // Expert by expert over the tokens routed to it (each GEMM row is batch-invariant), into the
  // token's slot; then per token the slots are weighted and summed in slot order as ggml does:
  // out = w0 y0 + w1 y1 + ... left to right.
  std::vector<float> ys(T * K * E);
  std::vector<float> xs, gu, act;
  std::vector<size_t> rows;  // t * K + slot
  for (size_t e = 0; e < NE; ++e) {
    rows.clear();
    for (size_t i = 0; i < T * K; ++i)
      if (size_t(chosen[i]) == e) rows.push_back(i);
    if (rows.empty()) continue;
    const size_t M = rows.size();
    xs.resize(M * E);
    for (size_t i = 0; i < M; ++i) std::memcpy(&xs[i * E], x + rows[i] / K * ldx, E * 4);
    gu.resize(M * 2 * F);
    gemm(xs.data(), M, E, gate_up_[e], gu.data(), 2 * F, &gate_up_bias_[e * 2 * F]);
    act.resize(M * F);
    for (size_t i = 0; i < M; ++i)
      swiglu_oai(&gu[i * 2 * F], &gu[i * 2 * F + F], &act[i * F], F, act_.alpha, act_.limit);
    xs.resize(M * E);  // reused as the down projection's output
    gemm(act.data(), M, F, down_[e], xs.data(), E, &down_bias_[e * E]);
    for (size_t i = 0; i < M; ++i) std::memcpy(&ys[rows[i] * E], &xs[i * E], E * 4);
  }
  for (size_t t = 0; t < T; ++t) {
    float* o = out + t * ldo;
    for (size_t j = 0; j < E; ++j) o[j] = ys[t * K * E + j] * weight[t * K];
    for (size_t s = 1; s < K; ++s) {
      const float w = weight[t * K + s];
      const float* y = &ys[(t * K + s) * E];
      for (size_t j = 0; j < E; ++j) o[j] += y[j] * w;
    }
  }
}

}  // namespace accel
