// The ratio cost model of SpecPrefill-style methods, speedup = 1 / (r + k + eps)
// (ARCHITECTURE.md "Cost-model vocabulary"): analytic FLOP counts from stored model configs, the
// `costmodel` report table, the least-squares eps fit, and draft ranking by predicted speedup.
// Reads the store only; never runs or opens a model.
#pragma once
#include <cmath>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <vector>

#include "reports/linquad_model.h"
#include "reports/table.h"
#include "reports/tables.h"
#include "results/result_store.h"

namespace accel::reports {

// Analytic multiply-add FLOPs (2 per MAC) of the matrix products and attention of a causal prefill
// of n tokens (query i sees i + 1 keys, or at most its window in a sliding-window layer), plus the
// output layer for the last row only. Norms, RoPE, softmax and routing are left out (a few percent
// at most). `cfg` is a ModelRef::config object; throws std::invalid_argument naming a missing or
// non-positive field.
double prefill_flops(const nlohmann::json& cfg, int64_t n_tokens);
// Its parts: the matrix products of n tokens plus the output row, and attention's FLOPs per
// (query, key) pair over the attention layers, as if every one were full (then prefill_flops =
// linear + per-pair x n (n + 1) / 2; with sliding layers the attention part is
// prefill_attention_flops). A hybrid's recurrent layers (recurrent_layers, ssm_* in the config:
// qwen35's Gated DeltaNet, nemotron_h's Mamba-2) are all linear: their projections, conv and
// state products per token; so are Nemotron-H's FFN-only blocks (ffn_layers).
double prefill_linear_flops(const nlohmann::json& cfg, int64_t n_tokens);
double attention_pair_flops(const nlohmann::json& cfg);
// Attention FLOPs of a causal prefill of `tokens` tokens spread evenly over `context` positions
// (tokens = context: a dense prefill; fewer: a sparse one's kept tokens attending among
// themselves). A full layer counts tokens (tokens + 1) / 2 pairs; a sliding-window layer (n_swa,
// swa_layers, head_dim_swa in the config) counts the pairs within a window that holds
// n_swa * tokens / context of them.
double prefill_attention_flops(const nlohmann::json& cfg, int64_t tokens, int64_t context);
// One decode step attending `context` keys, with the output layer.
double decode_step_flops(const nlohmann::json& cfg, int64_t context);
// Draft scoring of SpecPrefill: prefill of n tokens, lookahead - 1 decode steps, and the lookahead
// queries' scores over the n prompt keys in every layer and head.
double scoring_flops(const nlohmann::json& draft_cfg, int64_t n_tokens, int lookahead);
// r_flops = scoring_flops(draft) / prefill_flops(target).
double analytic_ratio(const nlohmann::json& draft_cfg, const nlohmann::json& target_cfg,
                      int64_t n_tokens, int lookahead);

// predicted speedup 1 / (r + k + eps).
inline double predicted_speedup(double r, double k, double eps = 0) {
  return 1.0 / (r + k + eps);
}

// One measured configuration: r, k and measured speedup S give eps = 1/S - r - k.
struct CostPoint {
  double r = 0, k = 0, measured = 0;
};
struct EpsFit {
  int n = 0;
  double eps = 0;  // least-squares constant in 1/S = r + k + eps: the mean of the per-point eps
  double rms = 0;  // root-mean-square residual of 1/S around the fit
};
EpsFit fit_eps(std::span<const CostPoint> points);  // n = 0 (eps NaN) when points is empty

// One configuration of the cost model: trials with draft-scoring phases of one (build, target,
// draft, workload, method, varying params, KV type, context), against the baseline method with an
// f32 cache at the same (build, target, context, workload). NaN where a figure is not available.
struct CostModelRow {
  std::string build;  // BuildIndex key (builds.label() shows it); "" unless several builds
  std::string target, target_sha, draft, draft_sha, workload, method, params, kv;
  std::string arch;  // the target's architecture (eps is fitted per architecture)
  bool synthetic = false;
  int64_t ctx = 0;
  nlohmann::json keep;  // the method's keep parameter, null when it has none
  double k = NAN;       // realised keep ratio (kept / prompt tokens)
  double r = NAN;       // mean draft scoring time / mean baseline prefill time
  double r_flops = NAN, predicted = NAN, eps = NAN, predicted_lq = NAN, predicted_loco = NAN;
  Ratio measured;      // the ratio.h TTFT speedup against the baseline
  Cell measured_cell;  // its cell, back-off mark included
  size_t n = 0;        // trials
  double G() const { return predicted / measured.ratio; }
};
struct CostModel {
  std::vector<CostModelRow> rows;
  bool show_kv = false;
  BuildIndex builds;
  std::vector<std::string> footnotes;  // fits, missing baselines, fallbacks, builds, back-offs
  std::string backoff_note;            // the back-off footnote alone ("" when no cell is marked)
};
// Trials that fell back to full prefill are left out and counted in a footnote.
CostModel cost_model(const results::ResultStore& store, const ReportOptions& opt);

// `costmodel` table of cost_model's rows: keep, realised k, r measured (C_d / C_t), r analytic,
// predicted 1/(r + k), measured speedup with its interval, eps, G = predicted / measured, the
// linear + quadratic model's prediction. Footnotes give the eps fit per target architecture.
Table costmodel_table(const CostModel& model, const ReportOptions& opt);
Table costmodel_table(const results::ResultStore& store, const ReportOptions& opt);

// Draft selection before running: candidates ranked by predicted speedup 1/(r_flops + k + eps).
struct DraftCandidate {
  std::string name;
  nlohmann::json config;  // ModelRef::config layout
};
Table draft_ranking_table(const nlohmann::json& target_cfg, const std::string& target_name,
                          const std::vector<DraftCandidate>& drafts,
                          const std::vector<int64_t>& contexts, double keep, int lookahead,
                          double eps);

// The same ranked by the linear + quadratic model (linquad_model.h) with constants fitted on a
// store (fit_store_prefills); the draft's scoring is charged at the target's fitted rates.
Table draft_ranking_table_linquad(const nlohmann::json& target_cfg, const std::string& target_name,
                                  const std::vector<DraftCandidate>& drafts,
                                  const std::vector<int64_t>& contexts, double keep, int lookahead,
                                  const LinQuadFit& fit);
// One linear + quadratic fit over every f32-cache baseline and sparse prefill the selection holds
// (all targets pooled).
LinQuadFit fit_store_prefills(const results::ResultStore& store, const ReportOptions& opt);

}  // namespace accel::reports
