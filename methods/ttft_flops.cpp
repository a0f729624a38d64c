// Analytic forward FLOPs (see ttft_flops.h).
#include "methods/ttft_flops.h"

namespace accel {

double linear_macs_per_token(const ModelConfig& c) {
  const double E = c.n_embd, q = c.q_dim(), kv = c.kv_dim();
  const double ffn = c.n_expert > 0
                         ? double(c.n_expert_used) * 3 * E * c.n_ff_expert + E * c.n_expert
                         : 3 * E * c.n_ff;
  return E * q + 2 * E * kv + q * E + ffn;
}

double attention_pair_flops(const ModelConfig& c) {
  return 2.0 * 2.0 * c.head_dim;
}

double forward_flops(const ModelConfig& c, double n, double past, double logit_rows) {
  const double L = c.n_layer, pairs = n * past + n * (n + 1) / 2;
  return 2 * n * L * linear_macs_per_token(c) + L * c.n_head * pairs * attention_pair_flops(c) +
         2 * logit_rows * double(c.n_embd) * c.n_vocab;
}

}  // namespace accel
