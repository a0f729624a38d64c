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

// A hybrid's layer kind: recurrent iff recurrent_layers[l] != 0 (configs without the array have
// none). config_json writes the array only for hybrids, with one entry per layer.
bool layer_recurrent(const nlohmann::json& c, int l) {
  const auto it = c.find("recurrent_layers");
  if (it == c.end()) return false;
  if (!it->is_array() || it->size() != size_t(field(c, "n_layer")) || !(*it)[size_t(l)].is_number())
    throw std::invalid_argument(
        "cost model: model config's recurrent_layers is not one number per layer");
  return (*it)[size_t(l)].get<double>() != 0;
}

// Nemotron-H's FFN-only blocks: ffn_layers[l] != 0 (configs without the array have none).
bool layer_ffn_only(const nlohmann::json& c, int l) {
  const auto it = c.find("ffn_layers");
  if (it == c.end()) return false;
  if (!it->is_array() || it->size() != size_t(field(c, "n_layer")) || !(*it)[size_t(l)].is_number())
    throw std::invalid_argument(
        "cost model: model config's ffn_layers is not one number per layer");
  return (*it)[size_t(l)].get<double>() != 0;
}

bool layer_attends(const nlohmann::json& c, int l) {
  return !layer_recurrent(c, l) && !layer_ffn_only(c, l);
}

bool nemotron_arch(const nlohmann::json& c) {
  const std::string arch = c.value("arch", "");
  return arch == "nemotron_h" || arch == "nemotron_h_moe";
}

double attention_layers(const nlohmann::json& c) {
  double n = 0;
  for (int l = 0; l < int(field(c, "n_layer")); ++l) n += layer_attends(c, l) ? 1 : 0;
  return n;
}

// Q, K, V and O per token; qwen35's and qwen3next's attn_q emit the query and its output gate
// (twice the rows).
double attention_projection_macs(const nlohmann::json& c) {
  const double E = field(c, "n_embd"), q = field(c, "n_head") * field(c, "head_dim"),
               kv = field(c, "n_head_kv") * field(c, "head_dim");
  const std::string arch = c.value("arch", "");
  const double q_rows = arch == "qwen35" || arch == "qwen35moe" || arch == "qwen3next" ? 2 * q : q;
  return E * q_rows + 2 * E * kv + q * E;
}

// The FFN per token: routed experts count only the ones a token uses, plus the router and any
// shared expert with its one-row gate (qwen35moe).
double ffn_macs_per_token(const nlohmann::json& c) {
  const double E = field(c, "n_embd");
  const double n_expert = c.contains("n_expert") ? field(c, "n_expert", false) : 0;
  if (n_expert == 0) return 3 * E * field(c, "n_ff");
  const double shexp = c.contains("n_ff_shexp") ? field(c, "n_ff_shexp", false) : 0;
  return field(c, "n_expert_used") * 3 * E * field(c, "n_ff_expert") + E * n_expert +
         (shexp > 0 ? 3 * E * shexp + E : 0);
}

// A Gated DeltaNet layer's mixer per token (methods/ttft_flops.h delta_net_macs_per_token, from
// the ssm.* sizes as qwen35 reads them): in- and out-projections, the conv and the four state
// products per value head.
double delta_net_macs_per_token(const nlohmann::json& c) {
  const double E = field(c, "n_embd"), k_heads = field(c, "ssm_n_group"),
               v_heads = field(c, "ssm_dt_rank"), hk = field(c, "ssm_d_state"),
               hv = field(c, "ssm_d_inner") / v_heads;
  const double V = v_heads * hv, conv = 2 * k_heads * hk + V;
  return E * (conv + V + 2 * v_heads) + V * E + conv * field(c, "ssm_d_conv") +
         4 * v_heads * hk * hv;
}

// A Mamba-2 layer's mixer per token (methods/ttft_flops.h mamba2_macs_per_token, from the ssm.*
// sizes as nemotron_h reads them): in- and out-projections, the conv over xBC and the scan's three
// products per state element.
double mamba2_macs_per_token(const nlohmann::json& c) {
  const double E = field(c, "n_embd"), heads = field(c, "ssm_dt_rank"),
               inner = field(c, "ssm_d_inner"), state = field(c, "ssm_d_state"),
               conv = inner + 2 * field(c, "ssm_n_group") * state;
  return E * (inner + conv + heads) + inner * E + conv * field(c, "ssm_d_conv") + 3 * inner * state;
}

// A Nemotron-H FFN-only block per token (methods/ttft_flops.h nemotron_ffn_macs_per_token): relu^2
// up and down, or the experts a token uses at the latent width, router, latent projections and
// shared expert.
double nemotron_ffn_macs_per_token(const nlohmann::json& c) {
  const double E = field(c, "n_embd");
  const double n_expert = c.contains("n_expert") ? field(c, "n_expert", false) : 0;
  if (n_expert == 0) return 2 * E * field(c, "n_ff");
  const double latent = c.contains("moe_latent") ? field(c, "moe_latent", false) : 0;
  const double shexp = c.contains("n_ff_shexp") ? field(c, "n_ff_shexp", false) : 0;
  const double width = latent > 0 ? latent : E;
  return field(c, "n_expert_used") * 2 * width * field(c, "n_ff_expert") + E * n_expert +
         (latent > 0 ? 2 * E * latent : 0) + (shexp > 0 ? 2 * E * shexp : 0);
}

// Multiply-adds per token outside attention summed over the layers: each layer's mixer
// projections (or a recurrent layer's whole mixer) and, except in Nemotron-H (one mixer per block),
// its FFN.
double layers_linear_macs(const nlohmann::json& c) {
  double total = 0;
  if (nemotron_arch(c)) {
    for (int l = 0; l < int(field(c, "n_layer")); ++l)
      total += layer_recurrent(c, l)  ? mamba2_macs_per_token(c)
               : layer_ffn_only(c, l) ? nemotron_ffn_macs_per_token(c)
                                      : attention_projection_macs(c);
    return total;
  }
  const double ffn = ffn_macs_per_token(c);
  for (int l = 0; l < int(field(c, "n_layer")); ++l)
    total +=
        (layer_recurrent(c, l) ? delta_net_macs_per_token(c) : attention_projection_macs(c)) + ffn;
  return total;
}

// Multiply-adds of one query against one key in one layer: q.k and p.v over every head.
double attention_macs_per_pair(const nlohmann::json& c) {
  return 2 * field(c, "n_head") * field(c, "head_dim");
}

double output_macs(const nlohmann::json& c) {
  return field(c, "n_embd") * field(c, "n_vocab");
}

// Keys seen by the queries of a causal prefill of n tokens in a layer whose window holds `window`
// of them (0: unbounded): n (n + 1) / 2 up to the window, then `window` per query. The twin of
// methods/ttft_flops.cpp's windowed_pairs (past = 0), kept here because reports reads the stored
// JSON configs and links only results, not methods.
double windowed_pairs(double n, double window) {
  if (window <= 0 || n <= window) return n * (n + 1) / 2;
  return window * (window + 1) / 2 + (n - window) * window;
}

// One layer's slide: whether layer l of a config with n_swa > 0 uses the window (swa_layers[l]).
bool layer_slides(const nlohmann::json& c, int l) {
  const auto it = c.find("swa_layers");
  if (it == c.end() || !it->is_array() || it->size() != size_t(field(c, "n_layer")))
    throw std::invalid_argument("cost model: model config has n_swa but no swa_layers per layer");
  const auto& v = (*it)[size_t(l)];  // config_json writes 0/1; booleans are read alike
  if (v.is_boolean()) return v.get<bool>();
  if (v.is_number()) return v.get<double>() != 0;
  throw std::invalid_argument("cost model: model config's swa_layers holds a non-number");
}

}  // namespace

double prefill_attention_flops(const nlohmann::json& c, int64_t tokens, int64_t context) {
  const double m = double(tokens);
  const double n_swa = c.contains("n_swa") ? field(c, "n_swa", false) : 0;
  if (n_swa <= 0) return attention_pair_flops(c) * m * (m + 1) / 2;
  // The tokens spread evenly over `context` positions, so a window of n_swa positions holds
  // n_swa * tokens / context of them.
  const double window = n_swa * m / double(std::max<int64_t>(context, tokens));
  const double hd = field(c, "head_dim");
  const double hd_swa = c.contains("head_dim_swa") && c["head_dim_swa"].is_number() &&
                                c["head_dim_swa"].get<double>() > 0
                            ? c["head_dim_swa"].get<double>()
                            : hd;
  double f = 0;
  for (int l = 0; l < int(field(c, "n_layer")); ++l) {
    if (!layer_attends(c, l)) continue;
    const bool slides = layer_slides(c, l);
    f += 2 * 2 * field(c, "n_head") * (slides ? hd_swa : hd) *
         (slides ? windowed_pairs(m, window) : m * (m + 1) / 2);
  }
  return f;
}

double prefill_linear_flops(const nlohmann::json& c, int64_t n) {
  return 2 * (double(n) * layers_linear_macs(c) + output_macs(c));
}

double attention_pair_flops(const nlohmann::json& c) {
  return 2 * attention_layers(c) * attention_macs_per_pair(c);
}

double prefill_flops(const nlohmann::json& c, int64_t n) {
  return prefill_linear_flops(c, n) + prefill_attention_flops(c, n, n);
}

double decode_step_flops(const nlohmann::json& c, int64_t context) {
  return 2 * (layers_linear_macs(c) +
              attention_layers(c) * attention_macs_per_pair(c) * double(context) + output_macs(c));
}

double scoring_flops(const nlohmann::json& c, int64_t n, int lookahead) {
  double f = prefill_flops(c, n);
  for (int j = 1; j < lookahead; ++j) f += decode_step_flops(c, n + j);
  // Each lookahead query's q.k against the n prompt keys in every layer and head.
  f += 2 * attention_layers(c) * field(c, "n_head") * field(c, "head_dim") * double(lookahead) *
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

// The target's own prefill in a trial: the baseline's whole prompt, or the kept tokens of a
// sparse prefill (attending among themselves), with the prefill and first-token phases' seconds.
struct TargetPrefill {
  std::string build;  // BuildIndex::key: fits never pool builds
  std::string target_sha;
  int64_t ctx = 0;
  PrefillObservation obs;
};

std::optional<TargetPrefill> target_prefill(const TrialRecord& t, bool baseline,
                                            const std::string& build = "") {
  if (!t.phases.count("prefill")) return std::nullopt;
  const int64_t m = baseline ? t.prompt_tokens : t.kept_tokens;
  if (m <= 0) return std::nullopt;
  try {
    return TargetPrefill{build,
                         t.target.sha256,
                         t.context_len,
                         {prefill_flops_split(t.target.config, m, t.prompt_tokens),
                          phase(t, "prefill") + phase(t, "first_token")}};
  } catch (const std::invalid_argument&) {
    return std::nullopt;  // no stored model config (pre-v3 store)
  }
}

// The linear + quadratic fit of one target's prefills, leaving out those at context `skip` (0:
// none), for the leave-one-context-out check.
LinQuadFit fit_target(const std::vector<TargetPrefill>& all, const std::string& build,
                      const std::string& sha, int64_t skip) {
  std::vector<PrefillObservation> obs;
  for (const auto& p : all)
    if (p.build == build && p.target_sha == sha && p.ctx != skip) obs.push_back(p.obs);
  return fit_linquad(obs);
}

// Speedup the linear + quadratic model predicts, shaped like the ratio model (which charges the
// sparse prefill k x the measured full one and measures the rest): the measured baseline TTFT over
// the method's measured time outside the target's prefill (draft scoring, selection, overhead)
// plus the fitted cost of the sparse prefill. Only the sparse prefill is modelled in both.
double linquad_speedup(const LinQuadFit& f, const nlohmann::json& cfg, double base_ttft,
                       double kept, double prompt, double other_seconds) {
  if (!f.ok) return NAN;
  const auto m = int64_t(std::llround(kept));
  return base_ttft /
         (other_seconds + f.seconds(prefill_flops_split(cfg, m, int64_t(std::llround(prompt)))));
}

}  // namespace

CostModel cost_model(const results::ResultStore& store, const ReportOptions& opt) {
  results::TrialFilter filter;
  filter.where = opt.where;
  const std::vector<TrialRecord> trials = store.trials(filter);
  CostModel out;
  out.show_kv = has_non_f32_kv(trials);
  out.builds = BuildIndex(store, trials);
  const BuildIndex& builds = out.builds;

  // Build, target sha, context, workload.
  using Setting = std::tuple<std::string, std::string, int64_t, std::string>;
  std::map<Setting, std::vector<const TrialRecord*>> base_trials;
  std::map<Setting, std::vector<double>> base_prefill;
  struct Key {
    std::string build, target, target_sha, draft, draft_sha, workload, method, params;
    std::string keep;                 // its own column, so not in params, but a row of its own
    std::pair<bool, std::string> kv;  // kv_rank()
    int64_t ctx;
    auto tie() const {
      return std::tie(build, target, target_sha, workload, method, params, keep, draft, draft_sha,
                      kv, ctx);
    }
    bool operator<(const Key& o) const { return tie() < o.tie(); }
  };
  // Only the parameters that vary within the method label a row; keep and the draft have columns
  // of their own.
  const VaryingParams varying = varying_params_by_method(trials);
  std::map<Key, std::vector<const TrialRecord*>> groups;
  std::vector<TargetPrefill> prefills;  // f32-cache trials: the linear + quadratic fit's data
  size_t fallbacks = 0;
  for (const auto& t : trials) {
    const bool base = t.method == opt.baseline_method;
    if (kv_dtype_of(t) == "f32" && !fell_back(t) && (base || has_scoring_phases(t)))
      if (auto p = target_prefill(t, base, builds.key(t))) prefills.push_back(*p);
    if (base) {
      if (kv_dtype_of(t) != "f32" || fell_back(t)) continue;  // ratios: f32-cache baseline
      const Setting s{builds.key(t), t.target.sha256, t.context_len, t.workload};
      if (t.ttft_s) base_trials[s].push_back(&t);
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
    groups[{builds.key(t), model_label(t.target), t.target.sha256, model_label(*t.draft),
            t.draft->sha256, t.workload, t.method,
            configuration_label(t, varying, {"keep", "draft"}),
            t.params.is_object() && t.params.contains("keep") ? t.params["keep"].dump() : "",
            kv_rank(kv_dtype_of(t)), t.context_len}]
        .push_back(&t);
  }

  std::set<std::string> missing;
  std::map<std::pair<std::string, std::string>, LinQuadFit> fits;  // (build, target sha)
  std::map<std::pair<std::string, std::string>, std::string> target_names;
  BackoffMarks marks;
  const auto ttft = [](const TrialRecord& t) { return t.ttft_s; };
  for (const auto& [key, ts] : groups) {
    const TrialRecord& t0 = *ts.front();
    CostModelRow row;
    row.build = key.build;
    row.target = key.target;
    row.target_sha = key.target_sha;
    row.draft = key.draft;
    row.draft_sha = key.draft_sha;
    row.workload = key.workload;
    row.method = key.method;
    row.params = key.params;
    row.kv = key.kv.second;
    row.arch = t0.target.arch;
    row.synthetic = t0.target.config.contains("synthetic_family");
    row.ctx = key.ctx;
    row.n = ts.size();
    target_names[{key.build, key.target_sha}] = key.target;
    const Setting s{key.build, key.target_sha, key.ctx, key.workload};
    std::vector<double> cd, other;
    double kept = 0, prompt = 0;
    for (const auto* t : ts) {
      if (t->ttft_s) other.push_back(*t->ttft_s - phase(*t, "prefill") - phase(*t, "first_token"));
      cd.push_back(phase(*t, "draft_prefill") + phase(*t, "lookahead") + phase(*t, "score"));
      kept += double(t->kept_tokens);
      prompt += double(t->prompt_tokens);
    }
    row.k = prompt > 0 ? kept / prompt : NAN;
    row.keep = t0.params.is_object() && t0.params.contains("keep") ? t0.params["keep"]
                                                                   : nlohmann::json(nullptr);
    const int lookahead = t0.params.is_object() && t0.params.contains("lookahead") &&
                                  t0.params["lookahead"].is_number_integer()
                              ? t0.params["lookahead"].get<int>()
                              : 1;
    const auto bp = base_prefill.find(s);
    const auto bt = base_trials.find(s);
    const TrialSample mine = sample_of(ts, ttft);
    const TrialSample theirs =
        bt == base_trials.end() ? TrialSample{} : sample_of(bt->second, ttft);
    row.measured = trials_ratio(theirs, mine, Direction::LowerIsBetter, "ttft_s", opt.ratio());
    row.measured_cell = ratio_cell(row.measured);
    marks.mark(row.measured_cell, theirs.trials, mine.trials);
    if (bp == base_prefill.end() || theirs.values.empty())
      missing.insert((key.build.empty() ? "" : "build " + builds.label(key.build) + ", ") +
                     key.target + " at context " + std::to_string(key.ctx));
    else
      row.r = mean(cd) / mean(bp->second);
    try {
      row.r_flops = analytic_ratio(t0.draft->config, t0.target.config, key.ctx, lookahead);
    } catch (const std::invalid_argument&) {
      // Stores from before schema v3 carry no configs: the analytic column stays empty.
    }
    row.predicted = predicted_speedup(row.r, row.k);
    row.eps = 1 / row.measured.ratio - row.r - row.k;
    if (row.kv == "f32" && !other.empty() && !theirs.values.empty()) {
      const double kept_mean = kept / double(ts.size()), base = median(theirs.values);
      const double prompt_mean = prompt / double(ts.size());
      const auto fk = std::make_pair(key.build, key.target_sha);
      if (!fits.count(fk)) fits[fk] = fit_target(prefills, key.build, key.target_sha, 0);
      row.predicted_lq =
          linquad_speedup(fits[fk], t0.target.config, base, kept_mean, prompt_mean, median(other));
      row.predicted_loco =
          linquad_speedup(fit_target(prefills, key.build, key.target_sha, key.ctx),
                          t0.target.config, base, kept_mean, prompt_mean, median(other));
    }
    out.rows.push_back(std::move(row));
  }

  auto& notes = out.footnotes;
  notes.push_back(
      "r = mean draft scoring time (draft_prefill + lookahead + score) / mean baseline prefill "
      "time at the same target and context; k = realised keep ratio (kept / prompt tokens); "
      "eps = 1/measured - r - k; G = predicted / measured; r (FLOPs) = analytic FLOP ratio of "
      "draft scoring to target prefill.");
  notes.push_back(ratio_footnote("Measured", "TTFT", Direction::LowerIsBetter, opt.ratio()));
  if (out.show_kv && !groups.empty())
    notes.push_back(
        "KV: the row's target KV cache type; r and the measured speedup are against the "
        "baseline with an f32 KV cache at the same target, context and workload.");
  // eps is fitted per target architecture, build and, when KV types vary, per KV type.
  std::map<std::tuple<std::string, std::string, std::pair<bool, std::string>>,
           std::vector<CostPoint>>
      by_arch;
  for (const auto& row : out.rows)
    if (std::isfinite(row.eps))
      by_arch[{row.build, row.arch, kv_rank(row.kv)}].push_back({row.r, row.k, row.measured.ratio});
  for (const auto& [arch_kv, pts] : by_arch) {
    const EpsFit f = fit_eps(pts);
    const auto& [build, arch_name, kv] = arch_kv;
    const std::string arch = arch_name + (out.show_kv ? ", KV " + kv.second : std::string()) +
                             (build.empty() ? "" : ", build " + build);
    char buf[320];
    std::snprintf(buf, sizeof buf,
                  "eps fit (least squares, target architecture %s, %d configurations): %.4f, "
                  "rms residual of 1/S %.4f.",
                  arch.c_str(), f.n, f.eps, f.rms);
    notes.push_back(buf);
  }
  if (!fits.empty())
    notes.push_back(
        "lin+quad: each target's prefill time fitted as a x linear GFLOPs + b x attention "
        "GFLOPs + c (analytic FLOPs; a sparse prefill of m of n tokens has m (m + 1) / 2 "
        "attention pairs per full layer, and per sliding-window layer those within a window "
        "holding n_swa m / n of them) by least squares on relative residuals over its f32-cache "
        "baseline and sparse prefills; predicted speedup = median baseline TTFT / (the method's "
        "median "
        "time outside the target's prefill + fitted sparse prefill): the ratio model's shape "
        "with the sparse prefill's k x C_t replaced by the fit. G lin+quad is in-sample; LOCO "
        "refits without the row's context length and predicts it.");
  for (const auto& [key, f] : fits) {
    const std::string name =
        target_names[key] + (key.first.empty() ? "" : " (build " + key.first + ")");
    char buf[400];
    if (f.ok)
      std::snprintf(buf, sizeof buf,
                    "lin+quad fit for %s (%d prefills): linear %.3g GFLOP/s, attention %.3g "
                    "GFLOP/s, constant %.3g ms; rms relative residual %.3f.",
                    name.c_str(), f.n, 1 / f.a, 1 / f.b, f.c * 1e3, f.rms_rel);
    else
      std::snprintf(buf, sizeof buf,
                    "lin+quad fit for %s: %d prefills do not determine its three constants "
                    "(needs prefills of at least three sizes).",
                    name.c_str(), f.n);
    notes.push_back(buf);
  }
  for (const auto& m : missing)
    notes.push_back("No '" + opt.baseline_method + "'" +
                    (out.show_kv ? " trials with an f32 KV cache" : " trials") + " for " + m +
                    ": r and the measured speedup are not available.");
  if (fallbacks)
    notes.push_back(std::to_string(fallbacks) +
                    " trial(s) fell back to full prefill (below the method's threshold or "
                    "after an error) and are not in the table.");
  std::set<std::string> synthetic;
  for (const auto& [key, ts] : groups)
    if (ts.front()->target.config.contains("synthetic_family"))
      synthetic.insert(ts.front()->target.config["synthetic_family"].get<std::string>());
  for (const auto& f : synthetic)
    notes.push_back("Target family '" + f +
                    "' is a random-weight synthetic model: timings are real; any quality "
                    "figure is agreement with the baseline only.");
  if (groups.empty())
    notes.push_back(
        "No trials with draft-scoring phases (draft_prefill, score) in this "
        "selection.");
  if (!builds.footnote().empty()) notes.push_back(builds.footnote());
  out.backoff_note = marks.footnote();
  if (!out.backoff_note.empty()) notes.push_back(out.backoff_note);
  return out;
}

Table costmodel_table(const CostModel& model, const ReportOptions& opt) {
  (void)opt;
  Table tab;
  tab.title = "Cost model: speedup = 1 / (r + k + eps)";
  if (model.builds.split()) tab.columns.push_back(BuildIndex::column());
  for (Column c : std::vector<Column>{{"target", "Target", Align::Left},
                                      {"draft", "Draft", Align::Left},
                                      {"method", "Method", Align::Left}})
    tab.columns.push_back(std::move(c));
  if (model.show_kv) tab.columns.push_back({"kv_dtype", "KV", Align::Left});
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
  for (const auto& r : model.rows) {
    std::vector<Cell> row;
    if (model.builds.split()) row.push_back(Cell(model.builds.label(r.build)));
    for (Cell c : {Cell(r.target), Cell(r.draft),
                   Cell(r.method + (r.params.empty() ? "" : " (" + r.params + ")"))})
      row.push_back(std::move(c));
    if (model.show_kv) row.push_back(Cell(r.kv));
    const double m = r.measured.ratio;
    for (Cell c :
         {Cell(std::to_string(r.ctx), r.ctx),
          r.keep.is_null() ? Cell("—", nullptr) : Cell(r.keep.dump(), r.keep), num(r.k, "%.3f"),
          num(r.r, "%.3f"), num(r.r_flops, "%.3f"), num(r.predicted, "%.2f×"), r.measured_cell,
          num(r.eps, "%.3f"), num(r.G(), "%.2f"), num(r.predicted_lq, "%.2f×"),
          num(r.predicted_lq / m, "%.3f"), num(r.predicted_loco / m, "%.3f"),
          Cell(std::to_string(r.n), r.n)})
      row.push_back(std::move(c));
    tab.rows.push_back(std::move(row));
  }
  tab.footnotes = model.footnotes;
  return tab;
}

Table costmodel_table(const results::ResultStore& store, const ReportOptions& opt) {
  return costmodel_table(cost_model(store, opt), opt);
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
  PrefillFlops f = prefill_flops_split(d, n, n);
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
        return fit.seconds(prefill_flops_split(target_cfg, n, n)) /
               (fit.seconds(scoring_flops_split(d, n, lookahead)) +
                fit.seconds(prefill_flops_split(target_cfg, kept, n)));
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
