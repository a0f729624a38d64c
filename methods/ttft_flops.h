// Analytic FLOPs of the forward passes a prefill method runs before its first token, recorded per
// trial as stats.ttft_flops (the x axis of the KV Prediction paper's accuracy-vs-TTFT-FLOPs
// front, `report --table pareto`). Counts matrix multiply-adds as 2 FLOPs; norms, RoPE, softmax
// and sampling are left out, as the papers' counts leave them out. Owns no timing.
#pragma once
#include "models/model_config.h"

namespace accel {

// Multiply-adds per token outside attention: Q, K, V, O projections and the FFN (routed experts
// count the ones a token uses, plus the router).
double linear_macs_per_token(const ModelConfig& c);

// FLOPs of n tokens at positions past..past+n-1 attending causally over a cache of `past`
// entries plus themselves, with the output head for `logit_rows` rows. A sliding-window layer
// counts min(j, window) keys for the query at entry j - 1: linear in n beyond the window.
double forward_flops(const ModelConfig& c, double n, double past, double logit_rows);

// FLOPs of one (query head, key) attention pair: q·k and the weighted sum of v, 2 x head_dim
// multiply-adds.
double attention_pair_flops(const ModelConfig& c);

}  // namespace accel
