// The ratio cost model (cost_model.h). Grouping here is by (target, draft, context, workload,
// params, KV type) because r and G are properties of that pairing; the baseline side of every
// ratio is the same (target, context, workload) pool of f32-cache baseline trials that the ttft
// table uses.
#include "reports/cost_model.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <tuple>

#include "reports/linquad_model.h"
#include "reports/stats.h"

namespace accel::reports {

using results::TrialRecord;

namespace {

double field(const nlohmann::json& cfg, const char* key, bool positive = true) {
  if (!cfg.is_object() || !cfg.contains(key) || !cfg[key].is_number())
    throw std::invalid_argument(std::string("cost model: model config has no numeric '") + key +
                                "' (stores written before schema v3 lack model configs)");
  const double v = cfg[key].get<double>();
  if (positive ? !(v > 0) : !(v >= 0))
    throw std::invalid_argument(std::string("cost model: model config field '") + key + "' is " +
                                std::to_string(v));
  return v;
}

// Multiply-adds per token outside attention: Q, K, V, O projections and the FFN (routed experts
// count only the ones a token uses, plus the router).
double linear_macs_per_token(const nlohmann::json& c) {
  const double E = field(c, "n_embd"), q = field(c, "n_head") * field(c, "head_dim"),
               kv = field(c, "n_head_kv") * field(c, "head_dim");
  const double n_expert = c.contains("n_expert") ? field(c, "n_expert", false) : 0;
  const double ffn =
      n_expert > 0 ? field(c, "n_expert_used") * 3 * E * field(c, "n_ff_expert") + E * n_expert
                   : 3 * E * field(c, "n_ff");
  return E * q + 2 * E * kv + q * E + ffn;
}

// Multiply-adds of one query against one key in one layer: q.k and p.v over every head.
double attention_macs_per_pair(const nlohmann::json& c) {
  return 2 * field(c, "n_head") * field(c, "head_dim");
}

double output_macs(const nlohmann::json& c) {
  return field(c, "n_embd") * field(c, "n_vocab");
}

}  // namespace

double prefill_linear_flops(const nlohmann::json& c, int64_t n) {
  return 2 * (double(n) * field(c, "n_layer") * linear_macs_per_token(c) + output_macs(c));
}

double attention_pair_flops(const nlohmann::json& c) {
  return 2 * field(c, "n_layer") * attention_macs_per_pair(c);
}

double prefill_flops(const nlohmann::json& c, int64_t n) {
  const double N = double(n);
  return prefill_linear_flops(c, n) + attention_pair_flops(c) * N * (N + 1) / 2;
}

double decode_step_flops(const nlohmann::json& c, int64_t context) {
  const double L = field(c, "n_layer");
  return 2 * (L * (linear_macs_per_token(c) + attention_macs_per_pair(c) * double(context)) +
              output_macs(c));
}

double scoring_flops(const nlohmann::json& c, int64_t n, int lookahead) {
  double f = prefill_flops(c, n);
  for (int j = 1; j < lookahead; ++j) f += decode_step_flops(c, n + j);
  // Each lookahead query's q.k against the n prompt keys in every layer and head.
  f += 2 * field(c, "n_layer") * field(c, "n_head") * field(c, "head_dim") * double(lookahead) *
       double(n);
  return f;
}

double analytic_ratio(const nlohmann::json& draft, const nlohmann::json& target, int64_t n,
                      int lookahead) {
  return scoring_flops(draft, n, lookahead) / prefill_flops(target, n);
}

EpsFit fit_eps(std::span<const CostPoint> pts) {
  EpsFit f;
  f.n = int(pts.size());
  if (pts.empty()) {
    f.eps = f.rms = NAN;
    return f;
  }
  // min over eps of sum (1/S - r - k - eps)^2: eps is the mean residual.
  double sum = 0;
  for (const auto& p : pts) sum += 1 / p.measured - p.r - p.k;
  f.eps = sum / f.n;
  double ss = 0;
  for (const auto& p : pts) {
    const double e = 1 / p.measured - p.r - p.k - f.eps;
    ss += e * e;
  }
  f.rms = std::sqrt(ss / f.n);
  return f;
}

namespace {

double phase(const TrialRecord& t, const char* name) {
  auto it = t.phases.find(name);
  return it == t.phases.end() ? 0 : it->second;
}

bool has_scoring_phases(const TrialRecord& t) {
  return t.draft && t.phases.count("draft_prefill") && t.phases.count("score");
}

std::string fmt(double x, const char* f) {
  if (!std::isfinite(x)) return "—";
  char buf[64];
  std::snprintf(buf, sizeof buf, f, x);
  return buf;
}

Cell num(double x, const char* f) {
  return std::isfinite(x) ? Cell(fmt(x, f), x) : Cell("—", nullptr);
}

std::string varying_label(const nlohmann::json& params,
                          const std::map<std::string, std::vector<std::string>>& varying,
                          const std::string& method) {
  std::vector<std::string> keys;
  if (const auto it = varying.find(method); it != varying.end())
    for (const auto& k : it->second)
      if (k != "keep") keys.push_back(k);
  return keys.empty() ? "" : params_label(params, keys);
}

// The target's own prefill in a trial: the baseline's whole prompt, or the kept tokens of a
// sparse prefill (attending among themselves), with the prefill and first-token phases' seconds.
struct TargetPrefill {
  std::string target_sha;
  int64_t ctx = 0;
  PrefillObservation obs;
};

std::optional<TargetPrefill> target_prefill(const TrialRecord& t, bool baseline) {
  if (!t.phases.count("prefill")) return std::nullopt;
  const int64_t m = baseline ? t.prompt_tokens : t.kept_tokens;
  if (m <= 0) return std::nullopt;
  try {
    return TargetPrefill{t.target.sha256,
                         t.context_len,
                         {prefill_flops_split(t.target.config, m, causal_pairs(m)),
                          phase(t, "prefill") + phase(t, "first_token")}};
  } catch (const std::invalid_argument&) {
    return std::nullopt;  // no stored model config (pre-v3 store)
  }
}

// The linear + quadratic fit of one target's prefills, leaving out those at context `skip` (0:
// none), for the leave-one-context-out check.
LinQuadFit fit_target(const std::vector<TargetPrefill>& all, const std::string& sha, int64_t skip) {
  std::vector<PrefillObservation> obs;
  for (const auto& p : all)
    if (p.target_sha == sha && p.ctx != skip) obs.push_back(p.obs);
  return fit_linquad(obs);
}

// Speedup the linear + quadratic model predicts, shaped like the ratio model (which charges the
// sparse prefill k x the measured full one and measures the rest): the measured baseline TTFT over
// the method's measured time outside the target's prefill (draft scoring, selection, overhead)
// plus the fitted cost of the sparse prefill. Only the sparse prefill is modelled in both.
double linquad_speedup(const LinQuadFit& f, const nlohmann::json& cfg, double base_ttft,
                       double kept, double other_seconds) {
  if (!f.ok) return NAN;
  const auto m = int64_t(std::llround(kept));
  return base_ttft / (other_seconds + f.seconds(prefill_flops_split(cfg, m, causal_pairs(m))));
}

}  // namespace

Table costmodel_table(const results::ResultStore& store, const ReportOptions& opt) {
  results::TrialFilter filter;
  filter.where = opt.where;
  const std::vector<TrialRecord> trials = store.trials(filter);
  const bool show_kv = has_non_f32_kv(trials);

  using Setting = std::tuple<std::string, int64_t, std::string>;  // target sha, context, workload
  std::map<Setting, std::vector<double>> base_ttft, base_prefill;
  struct Key {
    std::string target, target_sha, draft, draft_sha, workload, method, params;
    std::pair<bool, std::string> kv;  // kv_rank()
    int64_t ctx;
    auto tie() const {
      return std::tie(target, target_sha, workload, method, params, draft, draft_sha, kv, ctx);
    }
    bool operator<(const Key& o) const { return tie() < o.tie(); }
  };
  // A resolved SpecPrefill configuration has a dozen parameters, most at their preset: only
  // those that vary within the method (keep has its own column) label a row.
  const auto varying = varying_params_by_method(trials);
  std::map<Key, std::vector<const TrialRecord*>> groups;
  std::vector<TargetPrefill> prefills;  // f32-cache trials: the linear + quadratic fit's data
  size_t fallbacks = 0;
  for (const auto& t : trials) {
    const bool base = t.method == opt.baseline_method;
    if (kv_dtype_of(t) == "f32" && !fell_back(t) && (base || has_scoring_phases(t)))
      if (auto p = target_prefill(t, base)) prefills.push_back(*p);
    if (base) {
      if (kv_dtype_of(t) != "f32") continue;  // ratios are against the f32-cache baseline
      const Setting s{t.target.sha256, t.context_len, t.workload};
      if (t.ttft_s) base_ttft[s].push_back(*t.ttft_s);
      if (t.phases.count("prefill")) base_prefill[s].push_back(phase(t, "prefill"));
      continue;
    }
    // A fallback trial is dropped even when it recorded scoring phases (a fallback after
    // scoring): its prefill was the full one, so its TTFT is not the method's.
    if (fell_back(t)) {
      ++fallbacks;
      continue;
    }
    if (!has_scoring_phases(t)) continue;
    nlohmann::json p = t.params;
    if (p.is_object()) p.erase("keep");
    groups[{model_label(t.target), t.target.sha256, model_label(*t.draft), t.draft->sha256,
            t.workload, t.method, varying_label(p, varying, t.method), kv_rank(kv_dtype_of(t)),
            t.context_len}]
        .push_back(&t);
  }

  Table tab;
  tab.title = "Cost model: speedup = 1 / (r + k + eps)";
  tab.columns = {{"target", "Target", Align::Left},
                 {"draft", "Draft", Align::Left},
                 {"method", "Method", Align::Left}};
  if (show_kv) tab.columns.push_back({"kv_dtype", "KV", Align::Left});
  for (Column c : std::vector<Column>{{"context_len", "Context", Align::Right},
                                      {"keep", "keep", Align::Right},
                                      {"k", "k", Align::Right},
                                      {"r", "r", Align::Right},
                                      {"r_flops", "r (FLOPs)", Align::Right},
                                      {"predicted", "Pred. 1/(r+k)", Align::Right},
                                      {"measured", "Measured", Align::Right},
                                      {"eps", "eps", Align::Right},
                                      {"G", "G", Align::Right},
                                      {"predicted_lq", "Pred. lin+quad", Align::Right},
                                      {"G_lq", "G lin+quad", Align::Right},
                                      {"G_lq_loco", "G lin+quad (LOCO)", Align::Right},
                                      {"n", "n", Align::Right}})
    tab.columns.push_back(std::move(c));
  // eps is fitted per target architecture and, when KV types vary, per KV type.
  std::map<std::pair<std::string, std::pair<bool, std::string>>, std::vector<CostPoint>> by_arch;
  std::set<std::string> missing;
  std::set<std::string> synthetic;
  std::map<std::string, LinQuadFit> fits;  // by target sha256, over every context
  std::map<std::string, std::string> target_names;
  for (const auto& [key, ts] : groups) {
    target_names[key.target_sha] = key.target;
    const TrialRecord& t0 = *ts.front();
    if (t0.target.config.contains("synthetic_family"))
      synthetic.insert(t0.target.config["synthetic_family"].get<std::string>());
    const Setting s{key.target_sha, key.ctx, key.workload};
    std::vector<double> ttft, cd, other;
    double kept = 0, prompt = 0;
    for (const auto* t : ts) {
      if (t->ttft_s) ttft.push_back(*t->ttft_s);
      if (t->ttft_s) other.push_back(*t->ttft_s - phase(*t, "prefill") - phase(*t, "first_token"));
      cd.push_back(phase(*t, "draft_prefill") + phase(*t, "lookahead") + phase(*t, "score"));
      kept += double(t->kept_tokens);
      prompt += double(t->prompt_tokens);
    }
    const double k = prompt > 0 ? kept / prompt : NAN;
    const nlohmann::json keep =
        t0.params.is_object() && t0.params.contains("keep") ? t0.params["keep"] : nullptr;
    const int lookahead = t0.params.is_object() && t0.params.contains("lookahead") &&
                                  t0.params["lookahead"].is_number_integer()
                              ? t0.params["lookahead"].get<int>()
                              : 1;
    double r = NAN, measured = NAN, r_flops = NAN;
    Cell measured_cell("—", nullptr);
    auto bp = base_prefill.find(s);
    auto bt = base_ttft.find(s);
    if (bp == base_prefill.end() || bt == base_ttft.end()) {
      missing.insert(key.target + " at context " + std::to_string(key.ctx));
    } else {
      r = mean(cd) / mean(bp->second);
      // f32 rows keep the bootstrap seed they had before KV types were recorded.
      const std::string kv_seed = key.kv.second == "f32" ? "" : "|kv=" + key.kv.second;
      measured_cell = speedup_cell(bt->second, ttft, false,
                                   key.target_sha + key.draft_sha + key.params +
                                       std::to_string(key.ctx) + keep.dump() + kv_seed,
                                   opt);
      if (measured_cell.data.is_object()) measured = measured_cell.data["ratio"].get<double>();
    }
    try {
      r_flops = analytic_ratio(t0.draft->config, t0.target.config, key.ctx, lookahead);
    } catch (const std::invalid_argument&) {
      // Stores from before schema v3 carry no configs: the analytic column stays empty.
    }
    const double pred = predicted_speedup(r, k);
    const double eps = 1 / measured - r - k;
    double pred_lq = NAN, pred_loco = NAN;
    if (key.kv.second == "f32" && !other.empty() && bt != base_ttft.end()) {
      const double kept_mean = kept / double(ts.size()), base = mean(bt->second);
      if (!fits.count(key.target_sha))
        fits[key.target_sha] = fit_target(prefills, key.target_sha, 0);
      pred_lq =
          linquad_speedup(fits[key.target_sha], t0.target.config, base, kept_mean, mean(other));
      pred_loco = linquad_speedup(fit_target(prefills, key.target_sha, key.ctx), t0.target.config,
                                  base, kept_mean, mean(other));
    }
    if (std::isfinite(eps)) by_arch[{t0.target.arch, key.kv}].push_back({r, k, measured});
    std::vector<Cell> row = {
        Cell(key.target), Cell(key.draft),
        Cell(key.method + (key.params.empty() ? "" : " (" + key.params + ")"))};
    if (show_kv) row.push_back(Cell(key.kv.second));
    for (Cell c :
         {Cell(std::to_string(key.ctx), key.ctx),
          keep.is_null() ? Cell("—", nullptr) : Cell(keep.dump(), keep), num(k, "%.3f"),
          num(r, "%.3f"), num(r_flops, "%.3f"), num(pred, "%.2f×"), measured_cell, num(eps, "%.3f"),
          num(pred / measured, "%.2f"), num(pred_lq, "%.2f×"), num(pred_lq / measured, "%.3f"),
          num(pred_loco / measured, "%.3f"), Cell(std::to_string(ts.size()), ts.size())})
      row.push_back(std::move(c));
    tab.rows.push_back(std::move(row));
  }
  tab.footnotes.push_back(
      "r = mean draft scoring time (draft_prefill + lookahead + score) / mean baseline prefill "
      "time at the same target and context; k = realised keep ratio (kept / prompt tokens); "
      "eps = 1/measured - r - k; G = predicted / measured; r (FLOPs) = analytic FLOP ratio of "
      "draft scoring to target prefill.");
  if (show_kv && !groups.empty())
    tab.footnotes.push_back(
        "KV: the row's target KV cache type; r and the measured speedup are against the "
        "baseline with an f32 KV cache at the same target, context and workload.");
  for (const auto& [arch_kv, pts] : by_arch) {
    const EpsFit f = fit_eps(pts);
    const std::string arch =
        arch_kv.first + (show_kv ? ", KV " + arch_kv.second.second : std::string());
    char buf[240];
    std::snprintf(buf, sizeof buf,
                  "eps fit (least squares, target architecture %s, %d configurations): %.4f, "
                  "rms residual of 1/S %.4f.",
                  arch.c_str(), f.n, f.eps, f.rms);
    tab.footnotes.push_back(buf);
  }
  if (!fits.empty())
    tab.footnotes.push_back(
        "lin+quad: each target's prefill time fitted as a x linear GFLOPs + b x attention "
        "GFLOPs + c (analytic FLOPs; a sparse prefill of m kept tokens has m (m + 1) / 2 "
        "attention pairs) by least squares on relative residuals over its f32-cache baseline "
        "and sparse prefills; predicted speedup = baseline TTFT / (the method's time outside "
        "the target's prefill + fitted sparse prefill): the ratio model's shape with the "
        "sparse prefill's k x C_t replaced by the fit. G lin+quad is in-sample; LOCO refits "
        "without the row's context length and predicts it.");
  for (const auto& [sha, f] : fits) {
    char buf[320];
    if (f.ok)
      std::snprintf(buf, sizeof buf,
                    "lin+quad fit for %s (%d prefills): linear %.3g GFLOP/s, attention %.3g "
                    "GFLOP/s, constant %.3g ms; rms relative residual %.3f.",
                    target_names[sha].c_str(), f.n, 1 / f.a, 1 / f.b, f.c * 1e3, f.rms_rel);
    else
      std::snprintf(buf, sizeof buf,
                    "lin+quad fit for %s: %d prefills do not determine its three constants "
                    "(needs prefills of at least three sizes).",
                    target_names[sha].c_str(), f.n);
    tab.footnotes.push_back(buf);
  }
  for (const auto& m : missing)
    tab.footnotes.push_back("No '" + opt.baseline_method + "'" +
                            (show_kv ? " trials with an f32 KV cache" : " trials") + " for " + m +
                            ": r and the measured speedup are not available.");
  if (fallbacks)
    tab.footnotes.push_back(std::to_string(fallbacks) +
                            " trial(s) fell back to full prefill (below the method's threshold or "
                            "after an error) and are not in the table.");
  for (const auto& f : synthetic)
    tab.footnotes.push_back("Target family '" + f +
                            "' is a random-weight synthetic model: timings are real; any quality "
                            "figure is agreement with the baseline only.");
  if (groups.empty())
    tab.footnotes.push_back(
        "No trials with draft-scoring phases (draft_prefill, score) in this "
        "selection.");
  return tab;
}

namespace {

// Ranks drafts by predict(draft config, context) (r shown beside), best at the longest context.
Table rank_drafts(const std::string& title, const nlohmann::json& target_cfg,
                  const std::vector<DraftCandidate>& drafts, const std::vector<int64_t>& contexts,
                  int lookahead,
                  const std::function<double(const nlohmann::json&, int64_t)>& predict,
                  const std::string& footnote) {
  Table t;
  t.title = title;
  t.columns = {{"rank", "Rank", Align::Right}, {"draft", "Draft", Align::Left}};
  for (int64_t c : contexts) {
    const std::string cs = std::to_string(c);
    t.columns.push_back({"r_flops@" + cs, "r " + cs, Align::Right});
    t.columns.push_back({"predicted@" + cs, "Pred. " + cs, Align::Right});
  }
  struct Scored {
    const DraftCandidate* d;
    std::vector<double> r, pred;
  };
  std::vector<Scored> s;
  for (const auto& d : drafts) {
    Scored x{&d, {}, {}};
    for (int64_t c : contexts) {
      x.r.push_back(analytic_ratio(d.config, target_cfg, c, lookahead));
      x.pred.push_back(predict(d.config, c));
    }
    s.push_back(std::move(x));
  }
  // Rank by the predicted speedup at the longest context (where prefill cost matters most).
  std::stable_sort(s.begin(), s.end(),
                   [](const Scored& a, const Scored& b) { return a.pred.back() > b.pred.back(); });
  for (size_t i = 0; i < s.size(); ++i) {
    std::vector<Cell> row = {Cell(std::to_string(i + 1), int(i + 1)), Cell(s[i].d->name)};
    for (size_t j = 0; j < contexts.size(); ++j) {
      row.push_back(num(s[i].r[j], "%.4f"));
      row.push_back(num(s[i].pred[j], "%.2f×"));
    }
    t.rows.push_back(std::move(row));
  }
  t.footnotes.push_back(footnote);
  return t;
}

// Draft scoring's FLOPs split like a prefill's: the draft's prefill of n tokens, lookahead - 1
// decode steps (one token against n + j keys) and the lookahead queries' q.k over the n keys.
PrefillFlops scoring_flops_split(const nlohmann::json& d, int64_t n, int lookahead) {
  PrefillFlops f = prefill_flops_split(d, n, causal_pairs(n));
  for (int j = 1; j < lookahead; ++j) {
    f.linear += prefill_linear_flops(d, 1);
    f.attention += attention_pair_flops(d) * double(n + j);
  }
  f.attention += attention_pair_flops(d) / 2 * double(lookahead) * double(n);
  return f;
}

}  // namespace

Table draft_ranking_table(const nlohmann::json& target_cfg, const std::string& target_name,
                          const std::vector<DraftCandidate>& drafts,
                          const std::vector<int64_t>& contexts, double keep, int lookahead,
                          double eps) {
  char buf[240];
  std::snprintf(buf, sizeof buf,
                "r = analytic FLOP ratio of draft scoring (prefill + %d lookahead queries) to "
                "target prefill; k = %g; eps = %g. Analytic r ignores how efficiently each model "
                "runs; measure with `report --table costmodel` after running.",
                lookahead, keep, eps);
  return rank_drafts(
      "Draft ranking for " + target_name + " by predicted speedup 1/(r + k + eps)", target_cfg,
      drafts, contexts, lookahead,
      [&](const nlohmann::json& d, int64_t c) {
        return predicted_speedup(analytic_ratio(d, target_cfg, c, lookahead), keep, eps);
      },
      buf);
}

Table draft_ranking_table_linquad(const nlohmann::json& target_cfg, const std::string& target_name,
                                  const std::vector<DraftCandidate>& drafts,
                                  const std::vector<int64_t>& contexts, double keep, int lookahead,
                                  const LinQuadFit& fit) {
  char buf[400];
  std::snprintf(buf, sizeof buf,
                "Predicted = T(target prefill of n) / (T(draft scoring) + T(target prefill of "
                "the k n kept tokens)), T = a x linear GFLOPs + b x attention GFLOPs + c with "
                "a = 1/%.3g, b = 1/%.3g s per GFLOP, c = %.3g ms fitted on a store's prefills "
                "(rms relative residual %.3f); k = %g. The draft is assumed to run at the "
                "target's rates. r: the analytic FLOP ratio, for reference.",
                1 / fit.a, 1 / fit.b, fit.c * 1e3, fit.rms_rel, keep);
  return rank_drafts(
      "Draft ranking for " + target_name + " by the linear + quadratic cost model", target_cfg,
      drafts, contexts, lookahead,
      [&](const nlohmann::json& d, int64_t n) {
        const auto kept = int64_t(std::llround(keep * double(n)));
        return fit.seconds(prefill_flops_split(target_cfg, n, causal_pairs(n))) /
               (fit.seconds(scoring_flops_split(d, n, lookahead)) +
                fit.seconds(prefill_flops_split(target_cfg, kept, causal_pairs(kept))));
      },
      buf);
}

LinQuadFit fit_store_prefills(const results::ResultStore& store, const ReportOptions& opt) {
  results::TrialFilter filter;
  filter.where = opt.where;
  std::vector<PrefillObservation> obs;
  for (const auto& t : store.trials(filter)) {
    const bool base = t.method == opt.baseline_method;
    if (kv_dtype_of(t) != "f32" || fell_back(t) || !(base || has_scoring_phases(t))) continue;
    if (auto p = target_prefill(t, base)) obs.push_back(p->obs);
  }
  return fit_linquad(obs);
}

}  // namespace accel::reports
