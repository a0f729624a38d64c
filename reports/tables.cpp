// Builders of the report tables (tables.h). Trials are grouped into rows by (target model,
// workload, method, varying params, KV type); statistics come from stats.h. Reads the store only.
#include "reports/tables.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <set>
#include <stdexcept>
#include <tuple>

#include "reports/cost_model.h"
#include "reports/niah_report.h"
#include "reports/serve_table.h"
#include "reports/stats.h"

namespace accel::reports {

using results::ResultStore;
using results::TrialRecord;

std::string model_label(const results::ModelRef& m) {
  if (m.path.empty()) return m.sha256.substr(0, 12);
  const std::string stem = std::filesystem::path(m.path).stem().string();
  // Families (random-weight or trained here) all name their members target/draft: the family
  // tells them apart.
  if (m.config.is_object())
    for (const char* key : {"synthetic_family", "trained_family"})
      if (m.config.contains(key) && m.config[key].is_string())
        return m.config[key].get<std::string>() + "/" + stem;
  return stem;
}

const std::vector<std::string>& protocol_phases() {
  static const std::vector<std::string> p = {"draft_prefill", "lookahead",   "score", "select",
                                             "prefill",       "first_token", "decode"};
  return p;
}

namespace {
// Parameter values as written in plans: strings bare, numbers in their shortest form (0.3).
std::string json_scalar_text(const nlohmann::json& v) {
  if (v.is_string()) return v.get<std::string>();
  return v.dump();
}
}  // namespace

std::string params_label(const nlohmann::json& params, const std::vector<std::string>& keys) {
  if (!params.is_object()) return params.is_null() ? "" : params.dump();
  std::string o;
  for (auto it = params.begin(); it != params.end(); ++it) {  // nlohmann objects are key-sorted
    if (!keys.empty() && std::find(keys.begin(), keys.end(), it.key()) == keys.end()) continue;
    o += (o.empty() ? "" : ", ") + it.key() + "=" + json_scalar_text(it.value());
  }
  return o;
}

std::string format_number(double x, int significant) {
  if (std::isnan(x)) return "—";
  int decimals = significant - 1;
  if (x != 0 && std::isfinite(x))
    decimals = significant - 1 - int(std::floor(std::log10(std::fabs(x))));
  decimals = std::clamp(decimals, 0, 9);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, x);
  return buf;
}

std::string format_mean_std(double m, double s) {
  if (std::isnan(m)) return "—";
  int decimals = 2;
  if (m != 0 && std::isfinite(m)) decimals = 2 - int(std::floor(std::log10(std::fabs(m))));
  decimals = std::clamp(decimals, 0, 9);
  char buf[96];
  if (std::isnan(s))
    std::snprintf(buf, sizeof buf, "%.*f", decimals, m);
  else
    std::snprintf(buf, sizeof buf, "%.*f ± %.*f", decimals, m, decimals, s);
  return buf;
}

bool fell_back(const TrialRecord& t) {
  return t.stats.is_object() && t.stats.contains("fallback");
}

std::string kv_dtype_of(const TrialRecord& t) {
  return t.kv_dtype.empty() ? "f32" : t.kv_dtype;
}

bool has_non_f32_kv(const std::vector<TrialRecord>& trials) {
  return std::any_of(trials.begin(), trials.end(),
                     [](const TrialRecord& t) { return kv_dtype_of(t) != "f32"; });
}

Cell fallback_cell(size_t fallbacks, size_t total) {
  if (total == 0) return Cell("—", nullptr);
  return Cell(std::to_string(fallbacks) + "/" + std::to_string(total),
              {{"fallback", fallbacks}, {"trials", total}});
}

std::string fallback_footnote(const std::vector<TrialRecord>& trials,
                              const std::string& excluded_from) {
  std::map<std::string, size_t> reasons;
  for (const auto& t : trials)
    if (fell_back(t)) {
      const auto& r = t.stats["fallback"];
      ++reasons[r.is_string() ? r.get<std::string>() : r.dump()];
    }
  if (reasons.empty()) return "";
  std::string list;
  for (const auto& [reason, n] : reasons)
    list += (list.empty() ? "" : ", ") + reason + " " + std::to_string(n);
  return "Fallback n/N: n of the cell's N trials ran the method's fallback path instead of the "
         "method (reasons: " +
         list + "); they are excluded from " + excluded_from + ".";
}

namespace {

// A cell's trials with the fallback ones set aside (counted, never averaged in).
struct Split {
  std::vector<const TrialRecord*> ran;
  size_t fallbacks = 0, total = 0;
};

Split split_fallbacks(const std::vector<const TrialRecord*>& ts) {
  Split s;
  s.total = ts.size();
  for (const auto* t : ts)
    if (fell_back(*t))
      ++s.fallbacks;
    else
      s.ran.push_back(t);
  return s;
}

bool any_fallback(const std::vector<TrialRecord>& trials) {
  return std::any_of(trials.begin(), trials.end(),
                     [](const TrialRecord& t) { return fell_back(t); });
}

// Trials of a report selection plus what the row labels need to know about them.
struct Selection {
  std::vector<TrialRecord> trials;
  bool multi_model = false, multi_workload = false;
  bool show_kv = false;  // some trial's KV type is not f32: a "KV" column
  VaryingParams varying;
  BuildIndex builds;  // split(): a "Build" column, rows and baselines per build
};

Selection select(const ResultStore& store, const ReportOptions& opt) {
  results::TrialFilter f;
  f.where = opt.where;
  Selection s;
  s.trials = store.trials(f);
  std::set<std::string> models, workloads;
  for (const auto& t : s.trials) {
    models.insert(t.target.sha256);
    workloads.insert(t.workload);
  }
  s.varying = varying_params_by_method(s.trials);
  s.builds = BuildIndex(store, s.trials);
  s.multi_model = models.size() > 1;
  s.multi_workload = workloads.size() > 1;
  s.show_kv = has_non_f32_kv(s.trials);
  return s;
}

// Row identity; `order` puts the baseline method first within a model/workload, and f32 comes first
// among a configuration's KV types.
struct RowKey {
  std::string build;  // BuildIndex::key: "" unless the selection spans several builds
  std::string model_sha, model, workload;
  int order = 1;
  std::string method, params;
  std::pair<bool, std::string> kv = kv_rank("f32");
  auto tie() const {
    return std::tie(build, model, model_sha, workload, order, method, params, kv);
  }
  bool operator<(const RowKey& o) const { return tie() < o.tie(); }
  const std::string& kv_dtype() const { return kv.second; }
  // The row that every speedup is taken against.
  bool is_baseline(const ReportOptions& opt) const {
    return method == opt.baseline_method && kv_dtype() == "f32";
  }
};

RowKey row_key(const Selection& s, const TrialRecord& t, const ReportOptions& opt,
               const std::vector<std::string>& exclude = {}) {
  RowKey k;
  k.build = s.builds.key(t);
  k.model_sha = t.target.sha256;
  k.model = model_label(t.target);
  k.workload = t.workload;
  k.order = t.method == opt.baseline_method ? 0 : 1;
  k.method = t.method;
  k.kv = kv_rank(kv_dtype_of(t));
  k.params = configuration_label(t, s.varying, exclude);
  return k;
}

// Build, target sha, context, workload: where a row finds its baseline.
using Setting = std::tuple<std::string, std::string, int64_t, std::string>;

// Trials of the baseline method with an f32 KV cache that ran it: every speedup's baseline side.
std::map<Setting, std::vector<const TrialRecord*>> baseline_trials(const Selection& s,
                                                                   const ReportOptions& opt) {
  std::map<Setting, std::vector<const TrialRecord*>> b;
  for (const auto& t : s.trials)
    if (t.method == opt.baseline_method && kv_dtype_of(t) == "f32" && t.ttft_s && !fell_back(t))
      b[{s.builds.key(t), t.target.sha256, t.context_len, t.workload}].push_back(&t);
  return b;
}

std::vector<double> ttfts(const std::vector<const TrialRecord*>& ts) {
  std::vector<double> v;
  for (const auto* t : ts)
    if (t->ttft_s) v.push_back(*t->ttft_s);
  return v;
}

// The TTFT speedup cell of a row against its baseline trials, marked for back-offs.
Cell ttft_speedup_cell(const std::vector<const TrialRecord*>& base,
                       const std::vector<const TrialRecord*>& mine, bool is_baseline,
                       const ReportOptions& opt, BackoffMarks& marks) {
  const auto ttft = [](const TrialRecord& t) { return t.ttft_s; };
  const TrialSample b = sample_of(base, ttft), m = sample_of(mine, ttft);
  Cell c = is_baseline
               ? self_ratio_cell(!m.values.empty() && !b.values.empty())
               : ratio_cell(trials_ratio(b, m, Direction::LowerIsBetter, "ttft_s", opt.ratio()));
  marks.mark(c, b.trials, m.trials);
  return c;
}

Cell mean_std_cell(const std::vector<double>& v) {
  if (v.empty()) return Cell("—", nullptr);
  const double m = mean(v), s = sample_std(v);
  nlohmann::json d = {{"mean", m}, {"n", v.size()}};
  d["std"] = std::isnan(s) ? nlohmann::json(nullptr) : nlohmann::json(s);
  return Cell(format_mean_std(m, s), d);
}

void add_row_label_columns(Table& t, const Selection& s) {
  if (s.builds.split()) t.columns.push_back(BuildIndex::column());
  if (s.multi_model) t.columns.push_back({"model", "Model", Align::Left});
  if (s.multi_workload) t.columns.push_back({"workload", "Workload", Align::Left});
  t.columns.push_back({"method", "Method", Align::Left});
  t.columns.push_back({"params", "Params", Align::Left});
  if (s.show_kv) t.columns.push_back({"kv_dtype", "KV", Align::Left});
}

std::vector<Cell> row_label_cells(const RowKey& k, const Selection& s, const TrialRecord& first) {
  std::vector<Cell> r;
  if (s.builds.split()) r.push_back(s.builds.cell(first));
  if (s.multi_model) r.push_back(Cell(k.model, {{"name", k.model}, {"sha256", k.model_sha}}));
  if (s.multi_workload) r.push_back(Cell(k.workload));
  r.push_back(Cell(k.method));
  r.push_back(Cell(k.params));
  if (s.show_kv) r.push_back(Cell(k.kv_dtype()));
  return r;
}

// The first trial of a row's cells (all of a row's trials share its build).
template <class Cells>
const TrialRecord& first_trial(const Cells& by_ctx) {
  return *by_ctx.begin()->second.front();
}

void baseline_footnotes(Table& t, const Selection& s, const ReportOptions& opt,
                        const std::set<std::string>& missing) {
  const bool any = std::any_of(s.trials.begin(), s.trials.end(), [&](const TrialRecord& r) {
    return r.method == opt.baseline_method && kv_dtype_of(r) == "f32";
  });
  const std::string with_f32 = s.show_kv ? " trials with an f32 KV cache" : " trials";
  if (!any)
    t.footnotes.push_back("No '" + opt.baseline_method + "'" + with_f32 +
                          " in this selection: speedups are not available.");
  else if (!missing.empty()) {
    std::string m;
    for (const auto& x : missing) m += (m.empty() ? "" : "; ") + x;
    t.footnotes.push_back("No '" + opt.baseline_method + "'" + with_f32 + " for: " + m +
                          " (speedup —).");
  }
  if (any)
    t.footnotes.push_back(ratio_footnote(
        "Speedup",
        "TTFT" + std::string(s.show_kv ? " of the baseline with an f32 KV cache" : "") +
            " at the same " + (s.builds.split() ? "build, " : "") +
            "target model, context and workload" +
            (s.show_kv ? ", so a row's speedup includes its KV type's effect" : ""),
        Direction::LowerIsBetter, opt.ratio()));
  if (s.builds.split()) t.footnotes.push_back(s.builds.footnote());
}

void add_footnote(Table& t, const std::string& note) {
  if (!note.empty()) t.footnotes.push_back(note);
}

std::string missing_label(const Setting& s, const BuildIndex& builds) {
  const std::string& build = std::get<0>(s);
  return (build.empty() ? "" : "build " + builds.label(build) + ", ") + "context " +
         std::to_string(std::get<2>(s)) + ", workload " + std::get<3>(s);
}

const std::vector<const TrialRecord*>& find_or_empty(
    const std::map<Setting, std::vector<const TrialRecord*>>& m, const Setting& k) {
  static const std::vector<const TrialRecord*> none;
  const auto it = m.find(k);
  return it == m.end() ? none : it->second;
}

}  // namespace

Table ttft_table(const ResultStore& store, const ReportOptions& opt) {
  const Selection s = select(store, opt);
  Table t;
  t.title = "TTFT by method and context length";
  std::set<int64_t> ctxs;
  std::map<RowKey, std::map<int64_t, std::vector<const TrialRecord*>>> rows;
  for (const auto& tr : s.trials) {
    ctxs.insert(tr.context_len);
    rows[row_key(s, tr, opt)][tr.context_len].push_back(&tr);
  }
  const bool show_fallbacks = any_fallback(s.trials);
  add_row_label_columns(t, s);
  for (int64_t c : ctxs) {
    const std::string cs = std::to_string(c);
    t.columns.push_back({"ttft_s@" + cs, "TTFT " + cs + " (s)", Align::Right});
    t.columns.push_back({"speedup@" + cs, "Speedup " + cs, Align::Right});
    if (show_fallbacks) t.columns.push_back({"fallback@" + cs, "Fallback " + cs, Align::Right});
  }
  const auto base = baseline_trials(s, opt);
  std::set<std::string> missing;
  BackoffMarks marks;
  for (const auto& [key, by_ctx] : rows) {
    std::vector<Cell> r = row_label_cells(key, s, first_trial(by_ctx));
    for (int64_t c : ctxs) {
      auto it = by_ctx.find(c);
      const Split cell = it == by_ctx.end() ? Split{} : split_fallbacks(it->second);
      const std::vector<double> mine = ttfts(cell.ran);
      r.push_back(mean_std_cell(mine));
      marks.mark(r.back(), cell.ran);
      const Setting setting{key.build, key.model_sha, c, key.workload};
      const auto& b = find_or_empty(base, setting);
      if (!mine.empty() && b.empty()) missing.insert(missing_label(setting, s.builds));
      r.push_back(ttft_speedup_cell(b, cell.ran, key.is_baseline(opt), opt, marks));
      if (show_fallbacks) r.push_back(fallback_cell(cell.fallbacks, cell.total));
    }
    t.rows.push_back(std::move(r));
  }
  baseline_footnotes(t, s, opt, missing);
  if (show_fallbacks) t.footnotes.push_back(fallback_footnote(s.trials, "TTFT and speedup"));
  add_footnote(t, marks.footnote());
  return t;
}

Table phases_table(const ResultStore& store, const ReportOptions& opt) {
  const Selection s = select(store, opt);
  Table t;
  t.title = "Mean seconds per phase";
  std::set<std::string> names;
  std::map<std::pair<RowKey, int64_t>, std::vector<const TrialRecord*>> rows;
  for (const auto& tr : s.trials) {
    for (const auto& [n, v] : tr.phases) names.insert(n);
    rows[{row_key(s, tr, opt), tr.context_len}].push_back(&tr);
  }
  std::vector<std::string> order;
  for (const auto& p : protocol_phases())
    if (names.count(p)) order.push_back(p);
  for (const auto& n : names)
    if (std::find(order.begin(), order.end(), n) == order.end()) order.push_back(n);
  add_row_label_columns(t, s);
  t.columns.push_back({"context_len", "Context", Align::Right});
  for (const auto& p : order) t.columns.push_back({"phase." + p, p, Align::Right});
  t.columns.push_back({"ttft_s", "TTFT", Align::Right});
  t.columns.push_back({"n", "n", Align::Right});
  BackoffMarks marks;
  for (const auto& [k, trs] : rows) {
    std::vector<Cell> r = row_label_cells(k.first, s, *trs.front());
    r.push_back(Cell(std::to_string(k.second), k.second));
    for (const auto& p : order) {
      std::vector<const TrialRecord*> with;
      std::vector<double> v;
      for (const auto* tr : trs)
        if (auto it = tr->phases.find(p); it != tr->phases.end()) {
          v.push_back(it->second);
          with.push_back(tr);
        }
      if (v.empty())
        r.push_back(Cell("—", nullptr));
      else
        r.push_back(Cell(format_number(mean(v)), mean(v)));
      marks.mark(r.back(), with);
    }
    const auto tt = ttfts(trs);
    r.push_back(tt.empty() ? Cell("—", nullptr) : Cell(format_number(mean(tt)), mean(tt)));
    marks.mark(r.back(), trs);
    r.push_back(Cell(std::to_string(trs.size()), trs.size()));
    t.rows.push_back(std::move(r));
  }
  t.footnotes.push_back("Phases in timing-protocol order; a phase a method does not run is —.");
  add_footnote(t, s.builds.footnote());
  add_footnote(t, marks.footnote());
  return t;
}

Table ablation_table(const ResultStore& store, const ReportOptions& opt) {
  if (opt.param.empty())
    throw std::invalid_argument("ablation needs --param NAME (the swept parameter)");
  const Selection s = select(store, opt);
  std::set<std::string> available;
  struct Key {
    RowKey row;
    nlohmann::json value;
    int64_t ctx;
    bool operator<(const Key& o) const {
      // Sort numerically when both values are numbers.
      if (row.tie() != o.row.tie()) return row < o.row;
      if (value != o.value) {
        if (value.is_number() && o.value.is_number())
          return value.get<double>() < o.value.get<double>();
        return value.dump() < o.value.dump();
      }
      return ctx < o.ctx;
    }
  };
  std::map<Key, std::vector<const TrialRecord*>> rows;
  std::set<std::string> score_names;
  for (const auto& tr : s.trials) {
    if (!tr.params.is_object()) continue;
    for (auto it = tr.params.begin(); it != tr.params.end(); ++it) available.insert(it.key());
    if (!tr.params.contains(opt.param)) continue;
    for (const auto& [n, v] : tr.scores) score_names.insert(n);
    rows[{row_key(s, tr, opt, {opt.param}), tr.params[opt.param], tr.context_len}].push_back(&tr);
  }
  if (rows.empty()) {
    std::string a;
    for (const auto& x : available) a += (a.empty() ? "" : ", ") + x;
    throw std::invalid_argument("ablation: no trial has parameter '" + opt.param +
                                "' (parameters present: " + (a.empty() ? "none" : a) + ")");
  }
  Table t;
  t.title = "Ablation over " + opt.param;
  add_row_label_columns(t, s);
  t.columns.push_back({opt.param, opt.param, Align::Right});
  t.columns.push_back({"context_len", "Context", Align::Right});
  t.columns.push_back({"ttft_s", "TTFT (s)", Align::Right});
  t.columns.push_back({"speedup", "Speedup", Align::Right});
  for (const auto& n : score_names) t.columns.push_back({"score." + n, n, Align::Right});
  const bool show_fallbacks = any_fallback(s.trials);
  if (show_fallbacks) t.columns.push_back({"fallback", "Fallback", Align::Right});
  t.columns.push_back({"n", "n", Align::Right});
  const auto base = baseline_trials(s, opt);
  std::set<std::string> missing;
  BackoffMarks marks;
  for (const auto& [k, trs] : rows) {
    std::vector<Cell> r = row_label_cells(k.row, s, *trs.front());
    r.push_back(Cell(json_scalar_text(k.value), k.value));
    r.push_back(Cell(std::to_string(k.ctx), k.ctx));
    const Split cell = split_fallbacks(trs);
    const auto mine = ttfts(cell.ran);
    r.push_back(mean_std_cell(mine));
    marks.mark(r.back(), cell.ran);
    const Setting setting{k.row.build, k.row.model_sha, k.ctx, k.row.workload};
    const auto& b = find_or_empty(base, setting);
    if (!mine.empty() && b.empty()) missing.insert(missing_label(setting, s.builds));
    r.push_back(ttft_speedup_cell(b, cell.ran, k.row.is_baseline(opt), opt, marks));
    for (const auto& n : score_names) {
      std::vector<double> v;
      for (const auto* tr : cell.ran)
        if (auto it = tr->scores.find(n); it != tr->scores.end()) v.push_back(it->second);
      r.push_back(v.empty() ? Cell("—", nullptr) : Cell(format_number(mean(v)), mean(v)));
    }
    if (show_fallbacks) r.push_back(fallback_cell(cell.fallbacks, cell.total));
    r.push_back(Cell(std::to_string(trs.size()), trs.size()));
    t.rows.push_back(std::move(r));
  }
  baseline_footnotes(t, s, opt, missing);
  if (show_fallbacks)
    t.footnotes.push_back(fallback_footnote(s.trials, "TTFT, speedup and scores"));
  if (!score_names.empty()) {
    std::set<std::string> synthetic;
    for (const auto& tr : s.trials)
      if (tr.target.config.contains("synthetic_family")) synthetic.insert(model_label(tr.target));
    for (const auto& m : synthetic)
      t.footnotes.push_back("Scores on " + m +
                            " (random-weight synthetic model) are agreement with the baseline "
                            "only, not quality.");
  }
  add_footnote(t, marks.footnote());
  return t;
}

Table runs_table(const ResultStore& store, const ReportOptions& opt) {
  (void)opt;
  Table t;
  t.title = "Runs";
  t.columns = {{"run_id", "Run", Align::Left},
               {"started_at", "Started", Align::Left},
               {"ended_at", "Ended", Align::Left},
               {"git_commit", "Commit", Align::Left},
               {"build_type", "Build", Align::Left},
               {"compiler", "Compiler", Align::Left},
               {"cpu_model", "CPU", Align::Left},
               {"threads", "Threads", Align::Right},
               {"hostname", "Host", Align::Left},
               {"accelbench_version", "Version", Align::Left},
               {"fma_peak_gflops", "FMA peak (GFLOP/s)", Align::Right},
               {"trials", "Trials", Align::Right},
               {"failed", "Failed", Align::Right}};
  std::map<std::string, std::pair<int64_t, int64_t>> counts;
  {
    auto st = store.db().prepare(
        "SELECT run_id, sum(error IS NULL), sum(error IS NOT NULL) FROM trials GROUP BY run_id");
    while (st.step()) counts[st.get_text(0)] = {st.get_int(1), st.get_int(2)};
  }
  for (const auto& r : store.runs()) {
    const auto [ok, bad] =
        counts.count(r.run_id) ? counts[r.run_id] : std::pair<int64_t, int64_t>{0, 0};
    const std::string commit = r.git_commit.substr(0, 10) + (r.git_dirty ? "-dirty" : "");
    t.rows.push_back({
        Cell(r.run_id.substr(0, 12), r.run_id),
        Cell(r.started_at),
        r.ended_at ? Cell(*r.ended_at) : Cell("—", nullptr),
        Cell(commit, {{"commit", r.git_commit}, {"dirty", r.git_dirty}}),
        Cell(r.build_type),
        Cell(r.compiler),
        Cell(r.cpu_model),
        Cell(std::to_string(r.threads), r.threads),
        Cell(r.hostname),
        Cell(r.accelbench_version),
        r.fma_peak_gflops ? Cell(format_number(*r.fma_peak_gflops, 4), *r.fma_peak_gflops)
                          : Cell("—", nullptr),
        Cell(std::to_string(ok), ok),
        Cell(std::to_string(bad), bad),
    });
  }
  return t;
}

Table trials_table(const ResultStore& store, const ReportOptions& opt) {
  results::TrialFilter f;
  f.where = opt.where;
  f.include_failed = true;
  Table t;
  t.title = "Trials";
  for (const auto& fl : results::trial_fields())
    t.columns.push_back({fl.name, fl.name,
                         fl.kind == results::Kind::Int || fl.kind == results::Kind::Real
                             ? Align::Right
                             : Align::Left});
  for (const auto& tr : store.trials(f)) {
    const nlohmann::json j = results::to_json(tr);
    std::vector<Cell> r;
    for (const auto& fl : results::trial_fields())
      r.push_back(Cell(results::value_text(fl.get(tr)), j[fl.name]));
    t.rows.push_back(std::move(r));
  }
  return t;
}

const std::vector<std::string>& report_names() {
  static const std::vector<std::string> n = {
      "ttft", "phases", "ablation", "costmodel", "agreement", "decode", "suite", "parity",
      "pld",  "niah",   "pareto",   "runs",      "trials",    "serve",  "drift"};
  return n;
}

Table make_report(const ResultStore& store, const std::string& name, const ReportOptions& opt) {
  if (name == "ttft") return ttft_table(store, opt);
  if (name == "phases") return phases_table(store, opt);
  if (name == "ablation") return ablation_table(store, opt);
  if (name == "runs") return runs_table(store, opt);
  if (name == "trials") return trials_table(store, opt);
  if (name == "costmodel") return costmodel_table(store, opt);
  if (name == "agreement") return agreement_table(store, opt);
  if (name == "decode") return decode_table(store, opt);
  if (name == "suite") return suite_table(store, opt);
  if (name == "parity") return parity_table(store, opt);
  if (name == "pld") return pld_table(store, opt);
  if (name == "pareto") return pareto_table(store, opt);
  if (name == "niah") return niah_table(store, opt);
  if (name == "serve") return serve_table(store, opt);
  if (name == "drift") return drift_table(store, opt);
  std::string known;
  for (const auto& n : report_names()) known += (known.empty() ? "" : ", ") + n;
  throw std::invalid_argument("unknown table '" + name + "' (" + known + ")");
}

}  // namespace accel::reports
