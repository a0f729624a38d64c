// Analytic forward FLOPs (see ttft_flops.h).
#include "methods/ttft_flops.h"

namespace accel {

double attention_projection_macs(const ModelConfig& c) {
  const double E = c.n_embd, q = c.q_dim(), kv = c.kv_dim();
  // qwen35's attn_q emits the query and its output gate side by side: twice the query's rows.
  const double q_rows = c.attn_output_gate ? 2 * q : q;
  return E * q_rows + 2 * E * kv + q * E;
}

double ffn_macs_per_token(const ModelConfig& c) {
  const double E = c.n_embd;
  if (c.n_expert == 0) return 3 * E * c.n_ff;
  // A shared expert (qwen35moe) runs for every token, with its one-row gate.
  const double shared = c.n_ff_shexp > 0 ? 3 * E * c.n_ff_shexp + E : 0;
  return double(c.n_expert_used) * 3 * E * c.n_ff_expert + E * c.n_expert + shared;
}

double linear_macs_per_token(const ModelConfig& c) {
  return attention_projection_macs(c) + ffn_macs_per_token(c);
}

double mamba2_macs_per_token(const ModelConfig& c) {
  const Mamba2LayerDims d = mamba2_layer_dims(c);
  const double E = c.n_embd, inner = double(d.d_inner());
  return E * double(d.in_proj()) + inner * E + double(d.conv_channels()) * d.d_conv +
         3 * inner * d.d_state;
}

double nemotron_ffn_macs_per_token(const ModelConfig& c) {
  const double E = c.n_embd;
  if (c.n_expert == 0) return 2 * E * c.n_ff;
  const double width = c.moe_latent > 0 ? c.moe_latent : E;  // the experts' input and output
  return double(c.n_expert_used) * 2 * width * c.n_ff_expert + E * c.n_expert +
         (c.moe_latent > 0 ? 2 * E * c.moe_latent : 0) +
         (c.n_ff_shexp > 0 ? 2 * E * c.n_ff_shexp : 0);
}

double delta_net_macs_per_token(const ModelConfig& c) {
  const DeltaLayerDims d = delta_layer_dims(c);
  const double E = c.n_embd, conv = double(d.conv_channels()), V = double(d.value_dim());
  const double state = double(d.n_v_heads) * d.head_k_dim * d.head_v_dim;
  return E * (conv + V + 2.0 * d.n_v_heads) + V * E + conv * d.d_conv + 4 * state;
}

double attention_pair_flops(const ModelConfig& c) {
  return 2.0 * 2.0 * c.head_dim;
}

namespace {

// (query, key) pairs of n queries at entries past .. past + n - 1 (contiguous positions), each
// seeing the min(j, window) newest of the j = past + 1 .. past + n entries up to itself
// (window 0: all j): quadratic in n up to the window, linear beyond it.
double windowed_pairs(double n, double past, double window) {
  const double a = past + 1, b = past + n;
  if (window <= 0 || b <= window) return n * past + n * (n + 1) / 2;
  if (a > window) return n * window;
  return (a + window) * (window - a + 1) / 2 + (b - window) * window;
}

// Per-layer sum for configurations whose layers differ (sliding windows, Gemma 4's per-kind head
// sizes and KV heads): each layer's projections and its attention pairs at its own shape.
double per_layer_flops(const ModelConfig& c, double n, double past) {
  double total = 0;
  for (int il = 0; il < c.n_layer; ++il) {
    const LayerAttention a = layer_attention(c, il);
    ModelConfig l = c;
    l.head_dim = a.head_dim;
    l.n_head_kv = a.n_head_kv;
    total += 2 * n * linear_macs_per_token(l) +
             c.n_head * windowed_pairs(n, past, a.window) * attention_pair_flops(l);
  }
  return total;
}

// Hybrids: a recurrent layer costs its mixer's products per token, linear in n whatever the
// context; an attention layer its projections plus its pairs. qwen35's layers each add the FFN;
// Nemotron-H's blocks are one mixer each, its FFN-only blocks nemotron_ffn_macs_per_token.
double hybrid_flops(const ModelConfig& c, double n, double past) {
  const bool nemotron = is_nemotron_h_arch(c.arch);
  const double ffn = nemotron ? 0 : ffn_macs_per_token(c), pairs = n * past + n * (n + 1) / 2;
  double total = 0;
  for (int il = 0; il < c.n_layer; ++il) {
    if (is_recurrent_layer(c, il))
      total += 2 * n * (nemotron ? mamba2_macs_per_token(c) : delta_net_macs_per_token(c) + ffn);
    else if (is_ffn_only_layer(c, il))
      total += 2 * n * nemotron_ffn_macs_per_token(c);
    else
      total +=
          2 * n * (attention_projection_macs(c) + ffn) + c.n_head * pairs * attention_pair_flops(c);
  }
  return total;
}

}  // namespace

double forward_flops(const ModelConfig& c, double n, double past, double logit_rows) {
  const double head = 2 * logit_rows * double(c.n_embd) * c.n_vocab;
  if (has_recurrent_layers(c) || !c.ffn_layers.empty()) return hybrid_flops(c, n, past) + head;
  if (c.n_swa > 0 || !c.n_head_kv_layer.empty()) return per_layer_flops(c, n, past) + head;
  // Every layer alike: the one-term form (kept as it was, so existing figures keep their bits).
  const double L = c.n_layer, pairs = n * past + n * (n + 1) / 2;
  return 2 * n * L * linear_macs_per_token(c) + L * c.n_head * pairs * attention_pair_flops(c) +
         head;
}

}  // namespace accel
