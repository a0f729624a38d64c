// The report tables built from a results store: `ttft`, `phases`, `ablation`, `runs` and the raw
// `trials` export. Each builder reads trials through ResultStore and returns a Table; means,
// deviations, speedups and bootstrap intervals are computed here, from raw per-trial values.
// KV cache types: the ttft, phases, ablation, agreement, costmodel and decode tables key rows by
// the trial's kv_dtype as well, show a "KV" column when the selection (the trials --where picks)
// holds any type other than f32 (so f32-only stores print as before KV types existed), and take
// every speedup against the baseline method with an f32 cache.
// Timing tables (ttft, phases, ablation, decode, costmodel, pld, pareto, paper, compare) take every
// ratio from ratio.h (ratio of medians, one footnote wording), split rows by build when the
// selection spans several (build_key.h) and mark cells with pool back-offs (backoff_mark.h).
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "reports/backoff_mark.h"
#include "reports/build_key.h"
#include "reports/ratio.h"
#include "reports/table.h"
#include "reports/varying_params.h"
#include "results/result_store.h"

namespace accel::reports {

struct ReportOptions {
  std::string where;   // SQL expression over trials columns (--where)
  std::string param;   // ablation: the swept parameter name (--param)
  std::string metric;  // pareto: the quality score (--metric; default a "<suite>.score")
  std::string baseline_method = "baseline";
  int resamples = 2000;      // bootstrap resamples per speedup interval
  uint64_t seed = 20240601;  // combined with a hash of each cell's key
  double level = 0.95;
  RatioOptions ratio() const { return {resamples, seed, level}; }
};

// A trial fell back when its method says so in its stats ("fallback": reason, e.g.
// "below_threshold"): it ran the method's fallback path (a full prefill), not the method. The
// ttft, ablation and agreement tables exclude such trials from a cell's timings, speedup and
// scores, and show "Fallback n/N" per cell when any trial of the selection fell back.
bool fell_back(const results::TrialRecord& t);

// A trial's target KV cache type; stores written before the type was recorded say "" (= "f32").
std::string kv_dtype_of(const results::TrialRecord& t);
// Whether any trial uses a KV cache type other than f32: the tables then show a "KV" column.
bool has_non_f32_kv(const std::vector<results::TrialRecord>& trials);
// Row order of KV types: f32 first, then by name.
inline auto kv_rank(const std::string& kv) {
  return std::make_pair(kv != "f32", kv);
}

// Row = method (+ params that vary within the method; + KV type, target model / workload when the
// selection has more than one; + build when it spans several) x column pair per context length:
// "TTFT <ctx> (s)" as mean ± std over trials and samples, and "Speedup <ctx>" = the ratio.h
// speedup of the row's TTFTs against the baseline method's with an f32 KV cache at the same
// (build, target model, context length, workload). Fallback trials: see fell_back().
Table ttft_table(const results::ResultStore& store, const ReportOptions& opt);
// Row = method (x KV type) x context length; mean seconds per phase in timing-protocol order
// (draft_prefill, lookahead, score, select, prefill, first_token, decode, then others by name) and
// mean TTFT.
Table phases_table(const results::ResultStore& store, const ReportOptions& opt);
// Row = value of opt.param x context length (per method and KV type): TTFT, speedup against the
// f32 baseline with interval, and the mean
// of every score present (fallback trials excluded, see fell_back()). Throws when opt.param is
// empty or no trial has that parameter.
Table ablation_table(const results::ResultStore& store, const ReportOptions& opt);
// One row per run: provenance and trial counts.
Table runs_table(const results::ResultStore& store, const ReportOptions& opt);
// Raw trials, one row per trial, columns = the TrialRecord field list (failed trials included).
Table trials_table(const results::ResultStore& store, const ReportOptions& opt);

// Agreement with the baseline (agreement.* scores): first-token and top-1 agreement and mean KL per
// method x KV type x context, labelled "agreement only, not quality" for synthetic targets (every
// KV type is scored against the reference run with an f32 cache). Fallback trials agree by
// construction and are excluded (see fell_back()).
Table agreement_table(const results::ResultStore& store, const ReportOptions& opt);
// Decode speed and KV memory (decode_table.cpp): per (target, workload, method, params, KV type,
// context) decode tokens/s (mean ± sample std and median over trials), KV cache bytes per token of
// context (kv_bytes / (prompt_tokens + decode_tokens - 1): the cache's entries at the end of a
// trial), the ratio.h speedup of tokens/s against the baseline method's with an f32 cache at the
// same (build, target, context, workload), and the memory ratio (that
// baseline's bytes per token / the row's). Rows with trials run while the 1-minute load average
// exceeded the run's thread count are counted in a "Busy" column. Fallback trials: see
// fell_back().
Table decode_table(const results::ResultStore& store, const ReportOptions& opt);
// Every suite metric per (suite, method, params, KV type, target, context), aggregated over samples
// by the metric's stored declaration (suite_table.cpp).
Table suite_table(const results::ResultStore& store, const ReportOptions& opt);
// Greedy parity (parity_table.cpp): per (target, method, the params that vary within the method,
// KV type) and context the share of samples with parity.exact and the earliest first divergence
// with its two tokens; then an N×N matrix, cell (A, B) = share of shared samples (content hash,
// context) with identical output tokens, the diagonal = share of samples whose trials all repeat
// the first trial's tokens.
Table parity_table(const results::ResultStore& store, const ReportOptions& opt);
// Prompt Lookup Decoding's decode speed (pld_table.cpp): per (target, prompt class, context, KV
// type, PLD configuration) baseline and PLD tokens/s, the speedup with its interval, acceptance,
// tokens per verify step, the ceiling acceptance allows, the share of it reached, the drafter's
// share of decode time and greedy parity. Throws when the selection has no PLD trial.
Table pld_table(const results::ResultStore& store, const ReportOptions& opt);
// Quality against TTFT cost (pareto_table.cpp), the KV Prediction paper's accuracy-vs-TTFT-FLOPs
// front as a table: per (target, workload, context) and (method, varying params, KV type) the mean
// of opt.metric over samples, mean TTFT, mean stats.ttft_flops and its ratio to the f32 baseline,
// and whether the row is on the Pareto front by FLOPs and by measured TTFT. Throws when no trial
// has the metric.
Table pareto_table(const results::ResultStore& store, const ReportOptions& opt);
// The same as SVG scatter plots, one per (target, workload, context): x = TTFT GFLOPs, y = the
// metric, one series per method (its configurations joined by cost), front points ringed. Writes
// DIR/pareto-<target>-<workload>-<context>.svg and returns the paths.
std::vector<std::string> write_pareto_plots(const results::ResultStore& store,
                                            const ReportOptions& opt, const std::string& dir);
// SpecPrefill's state drift on hybrid targets (drift_table.cpp): per (target, method, varying
// params, KV type, context) the kept fraction, agreement.kl_mean when scored, the drift's mean and
// max over recurrent layers and each layer's median over trials, from stats.state_drift
// (methods/state_drift.h). Fallback trials (full prefills) are counted, not averaged.
Table drift_table(const results::ResultStore& store, const ReportOptions& opt);
// The names above plus "costmodel" (cost_model.h), "niah" (niah_report.h) and "serve"
// (serve_table.h), and dispatch by name.
const std::vector<std::string>& report_names();
Table make_report(const results::ResultStore& store, const std::string& name,
                  const ReportOptions& opt);

// Helpers shared with compare: short model name (file stem, prefixed with "family/" for synthetic
// models), the timing-protocol phase order, and
// a "k=v, k2=v2" label of a params object limited to `keys` (all keys when empty).
std::string model_label(const results::ModelRef& m);
const std::vector<std::string>& protocol_phases();
std::string params_label(const nlohmann::json& params, const std::vector<std::string>& keys = {});
// "Fallback n/N" support shared by the tables: the cell "n/N" (data {fallback, trials}; "—" when
// total is 0), and the footnote naming the reasons and what is excluded (empty when none fell
// back).
Cell fallback_cell(size_t fallbacks, size_t total);
std::string fallback_footnote(const std::vector<results::TrialRecord>& trials,
                              const std::string& excluded_from);
// "0.412 ± 0.010" with three significant digits in the mean and the std at the same decimals.
std::string format_mean_std(double mean, double std);
std::string format_number(double x, int significant = 3);

}  // namespace accel::reports
