// Analytic FLOPs of the forward passes a prefill method runs before its first token, recorded per
// trial as stats.ttft_flops (the x axis of the KV Prediction paper's accuracy-vs-TTFT-FLOPs
// front, `report --table pareto`). Counts matrix multiply-adds as 2 FLOPs; norms, RoPE, softmax
// and sampling are left out, as the papers' counts leave them out. Owns no timing.
#pragma once
#include "models/model_config.h"

namespace accel {

// Multiply-adds per token outside attention: Q, K, V, O projections and the FFN (routed experts
// count the ones a token uses, plus the router and any shared expert with its gate). For an
// attention layer; hybrids' recurrent layers replace the projections by
// delta_net_macs_per_token.
double linear_macs_per_token(const ModelConfig& c);
// Its parts: the attention projections (qwen35's query rows twice over, for the output gate) and
// the FFN.
double attention_projection_macs(const ModelConfig& c);
double ffn_macs_per_token(const ModelConfig& c);
// A Gated DeltaNet layer's mixer (qwen35) per token: the in-projection to qkv, z, beta and alpha,
// the out-projection, the short conv, and the delta rule's four state products per value head
// (decay, S^T k, the rank-1 update, S^T q; head_k_dim x head_v_dim each). Independent of the
// context: recurrent layers are linear in n.
double delta_net_macs_per_token(const ModelConfig& c);
// A Mamba-2 layer (nemotron_h) per token: the in-projection to z, xBC and dt, the out-projection,
// the conv over xBC, and the scan's three products per state element (decay, update, output C).
double mamba2_macs_per_token(const ModelConfig& c);
// A Nemotron-H FFN-only block per token: relu^2 up and down without a gate; with experts
// (nemotron_h_moe) the ones a token uses at the latent width when there is one, the router, the
// latent projections and the shared expert.
double nemotron_ffn_macs_per_token(const ModelConfig& c);

// FLOPs of n tokens at positions past..past+n-1 attending causally over a cache of `past`
// entries plus themselves, with the output head for `logit_rows` rows. A sliding-window layer
// counts min(j, window) keys for the query at entry j - 1: linear in n beyond the window. A
// hybrid's recurrent layer counts no pairs (delta_net_macs_per_token or mamba2_macs_per_token per
// token instead), and Nemotron-H's blocks are one mixer each (an FFN-only block counts no pairs).
double forward_flops(const ModelConfig& c, double n, double past, double logit_rows);

// FLOPs of one (query head, key) attention pair: q·k and the weighted sum of v, 2 x head_dim
// multiply-adds.
double attention_pair_flops(const ModelConfig& c);

}  // namespace accel
