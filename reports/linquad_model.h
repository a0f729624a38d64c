// The linear + quadratic prefill cost model (issue 14): a model's prefill time as
// a * linear GFLOPs + b * attention GFLOPs + c, fitted by weighted least squares on stored phase
// timings, so a sparse prefill that keeps k of n tokens costs its linear part times k but its
// attention part times ~k^2 (what the ratio model's 1/(r + k + eps) cannot express). Reads stored
// records only; the `costmodel` table (cost_model.cpp) shows its predictions beside the paper's.
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <span>

namespace accel::reports {

// Analytic FLOPs (2 per multiply-add) of a causal prefill of `tokens` tokens spread over `context`
// positions (a dense prefill: tokens = context), split into the matrix products (plus the output
// layer for the last row) and attention (q.k and p.v; prefill_attention_flops, which counts
// sliding-window layers' pairs within their windows). `cfg` is a ModelRef::config object.
struct PrefillFlops {
  double linear = 0, attention = 0;
};
PrefillFlops prefill_flops_split(const nlohmann::json& cfg, int64_t tokens, int64_t context);

// One observed prefill: its FLOPs and its measured seconds.
struct PrefillObservation {
  PrefillFlops flops;
  double seconds = 0;
};

// seconds = a * linear GFLOPs + b * attention GFLOPs + c. Fitted by least squares on relative
// residuals ((prediction - seconds) / seconds), so short and long prefills weigh alike; `ok` is
// false with fewer than 3 observations or when they do not determine the three constants (e.g.
// every observation at one size). rms_rel is the root-mean-square relative residual.
struct LinQuadFit {
  double a = 0, b = 0, c = 0, rms_rel = 0;
  int n = 0;
  bool ok = false;
  double seconds(const PrefillFlops& f) const {
    return a * f.linear * 1e-9 + b * f.attention * 1e-9 + c;
  }
};
LinQuadFit fit_linquad(std::span<const PrefillObservation> obs);

}  // namespace accel::reports
