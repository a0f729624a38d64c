// The `decode` report (tables.h): decode speed and KV cache memory per KV type, each against the
// baseline method with an f32 cache at the same target, context and workload. A trial's kv_bytes
// is the target cache at the end of the trial (KVCache::bytes(): the committed entries' K and V
// rows in every layer with their quantization scales, and a 4-byte position per entry; used, not
// allocated). Those entries are the prompt (SpecPrefill: its kept tokens only) and every generated
// token but the last, which is never fed back, so bytes per token of context divide kv_bytes by
// prompt_tokens + decode_tokens - 1.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <tuple>

#include "reports/stats.h"
#include "reports/tables.h"

namespace accel::reports {

namespace {

using results::TrialRecord;

// Row identity; `order` puts the baseline method first within a target/workload.
struct Key {
  std::string build;  // BuildIndex::key
  std::string target, target_sha, workload;
  int order = 1;
  std::string method, params;
  std::pair<bool, std::string> kv;  // kv_rank()
  int64_t ctx = 0;
  auto tie() const {
    return std::tie(build, target, target_sha, workload, order, method, params, kv, ctx);
  }
  bool operator<(const Key& o) const { return tie() < o.tie(); }
};

// Build, target sha, context, workload: where a row finds its baseline.
using Setting = std::tuple<std::string, std::string, int64_t, std::string>;

// KV cache bytes per token of context of one trial; NaN when the trial recorded no cache.
double kv_bytes_per_token(const TrialRecord& t) {
  const int64_t tokens = t.prompt_tokens + std::max<int64_t>(t.decode_tokens - 1, 0);
  if (t.kv_bytes <= 0 || tokens <= 0) return NAN;
  return double(t.kv_bytes) / double(tokens);
}

// The row's decode speeds and bytes per token, from the trials that ran the method.
struct Figures {
  TrialSample tok_s, bytes;
};
Figures figures(const std::vector<const TrialRecord*>& ts) {
  std::vector<const TrialRecord*> ran;
  for (const auto* t : ts)
    if (!fell_back(*t)) ran.push_back(t);
  return {sample_of(ran, [](const TrialRecord& t) { return t.decode_tok_s; }),
          sample_of(ran, [](const TrialRecord& t) -> std::optional<double> {
            const double b = kv_bytes_per_token(t);
            return std::isnan(b) ? std::nullopt : std::optional<double>(b);
          })};
}

Cell mean_std_cell(const std::vector<double>& v) {
  if (v.empty()) return Cell("—", nullptr);
  const double m = mean(v), s = sample_std(v);
  nlohmann::json d = {{"mean", m}, {"n", v.size()}};
  d["std"] = std::isnan(s) ? nlohmann::json(nullptr) : nlohmann::json(s);
  return Cell(format_mean_std(m, s), d);
}

Cell number_cell(double x) {
  return std::isnan(x) ? Cell("—", nullptr) : Cell(format_number(x), x);
}

// The decode speedup against the f32 baseline; "1.00×" for the baseline's own row.
Cell speed_cell(const Figures& base, const Figures& mine, bool is_baseline,
                const ReportOptions& opt) {
  if (is_baseline) return self_ratio_cell(!mine.tok_s.values.empty() && !base.tok_s.values.empty());
  return ratio_cell(
      trials_ratio(base.tok_s, mine.tok_s, Direction::HigherIsBetter, "decode_tok_s", opt.ratio()));
}

// Baseline bytes per token / the row's, as a ratio of medians: above 1, the row holds a token in
// less memory. No interval: a configuration's cache size hardly varies between trials.
Cell memory_cell(const Figures& base, const Figures& mine, const ReportOptions& opt) {
  RatioOptions no_interval = opt.ratio();
  no_interval.resamples = 0;
  const Ratio r = trials_ratio(base.bytes, mine.bytes, Direction::LowerIsBetter,
                               "kv_bytes_per_token", no_interval);
  if (r.empty()) return Cell("—", nullptr);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.2f×", r.ratio);
  return Cell(buf, {{"ratio", r.ratio}});
}

}  // namespace

Table decode_table(const results::ResultStore& store, const ReportOptions& opt) {
  results::TrialFilter f;
  f.where = opt.where;
  const std::vector<TrialRecord> trials = store.trials(f);
  const BuildIndex builds(store, trials);
  const VaryingParams varying = varying_params_by_method(trials);
  std::map<Key, std::vector<const TrialRecord*>> rows;
  std::map<Setting, std::vector<const TrialRecord*>> base;  // baseline method, f32 cache
  std::set<std::string> workloads;
  std::map<std::string, int64_t> threads;  // run_id -> the run's thread count
  for (const auto& t : trials) {
    rows[{builds.key(t), model_label(t.target), t.target.sha256, t.workload,
          t.method == opt.baseline_method ? 0 : 1, t.method, configuration_label(t, varying),
          kv_rank(kv_dtype_of(t)), t.context_len}]
        .push_back(&t);
    workloads.insert(t.workload);
    if (t.method == opt.baseline_method && kv_dtype_of(t) == "f32")
      base[{builds.key(t), t.target.sha256, t.context_len, t.workload}].push_back(&t);
    if (!threads.count(t.run_id)) {
      const auto run = store.run(t.run_id);
      threads[t.run_id] = run ? run->threads : 0;
    }
  }
  auto busy = [&](const TrialRecord& t) {
    const int64_t n = threads[t.run_id];
    return t.loadavg_1m && n > 0 && *t.loadavg_1m > double(n);
  };
  const bool multi_workload = workloads.size() > 1;
  const bool show_fallbacks = std::any_of(trials.begin(), trials.end(), fell_back);
  const bool show_busy = std::any_of(trials.begin(), trials.end(), busy);

  Table tab;
  tab.title = "Decode speed and KV cache memory by KV type";
  if (builds.split()) tab.columns.push_back(BuildIndex::column());
  tab.columns.push_back({"target", "Target", Align::Left});
  if (multi_workload) tab.columns.push_back({"workload", "Workload", Align::Left});
  for (Column c : std::vector<Column>{{"method", "Method", Align::Left},
                                      {"params", "Params", Align::Left},
                                      {"kv_dtype", "KV", Align::Left},
                                      {"context_len", "Context", Align::Right},
                                      {"decode_tok_s", "Decode (tok/s)", Align::Right},
                                      {"median_tok_s", "Median (tok/s)", Align::Right},
                                      {"kv_bytes_per_token", "KV B/token", Align::Right},
                                      {"speed", "Speed vs f32 baseline", Align::Right},
                                      {"memory", "Memory vs f32 baseline", Align::Right}})
    tab.columns.push_back(std::move(c));
  if (show_fallbacks) tab.columns.push_back({"fallback", "Fallback", Align::Right});
  if (show_busy) tab.columns.push_back({"busy", "Busy", Align::Right});
  tab.columns.push_back({"n", "n", Align::Right});

  std::set<std::string> missing;
  BackoffMarks marks;
  for (const auto& [k, ts] : rows) {
    const Figures mine = figures(ts);
    const auto b = base.find({k.build, k.target_sha, k.ctx, k.workload});
    const Figures theirs = b == base.end() ? Figures{} : figures(b->second);
    if ((!mine.tok_s.values.empty() && theirs.tok_s.values.empty()) ||
        (!mine.bytes.values.empty() && theirs.bytes.values.empty()))
      missing.insert((k.build.empty() ? "" : "build " + builds.label(k.build) + ", ") + k.target +
                     " at context " + std::to_string(k.ctx) + ", workload " + k.workload);
    std::vector<Cell> row;
    if (builds.split()) row.push_back(builds.cell(*ts.front()));
    row.push_back(Cell(k.target));
    if (multi_workload) row.push_back(Cell(k.workload));
    const bool is_baseline = k.method == opt.baseline_method && k.kv.second == "f32";
    Cell speed = mean_std_cell(mine.tok_s.values), med = number_cell(median(mine.tok_s.values)),
         ratio = speed_cell(theirs, mine, is_baseline, opt);
    marks.mark(speed, mine.tok_s.trials);
    marks.mark(med, mine.tok_s.trials);
    marks.mark(ratio, theirs.tok_s.trials, mine.tok_s.trials);
    for (Cell c :
         {Cell(k.method), Cell(k.params), Cell(k.kv.second), Cell(std::to_string(k.ctx), k.ctx),
          speed, med, number_cell(median(mine.bytes.values)), ratio,
          is_baseline ? self_ratio_cell(!mine.bytes.values.empty())
                      : memory_cell(theirs, mine, opt)})
      row.push_back(std::move(c));
    if (show_fallbacks) {
      const auto n =
          size_t(std::count_if(ts.begin(), ts.end(), [](auto* t) { return fell_back(*t); }));
      row.push_back(fallback_cell(n, ts.size()));
    }
    if (show_busy) {
      const auto n = size_t(std::count_if(ts.begin(), ts.end(), [&](auto* t) { return busy(*t); }));
      row.push_back(Cell(std::to_string(n) + "/" + std::to_string(ts.size()),
                         {{"busy", n}, {"trials", ts.size()}}));
    }
    row.push_back(Cell(std::to_string(ts.size()), ts.size()));
    tab.rows.push_back(std::move(row));
  }

  tab.footnotes.push_back(
      "Decode (tok/s) = (decode_tokens - 1) / decode seconds of each trial (the first token "
      "belongs to TTFT): mean ± sample std and median over the row's trials.");
  tab.footnotes.push_back(
      "KV B/token = kv_bytes / (prompt_tokens + decode_tokens - 1), median over trials: "
      "kv_bytes is the target KV cache at the end of the trial (K and V rows of every layer with "
      "their quantization scales, plus a 4-byte position per entry; used, not allocated), whose "
      "entries are the prompt (for SpecPrefill only its kept tokens) and every generated token "
      "but the last.");
  const std::string where = std::string(" of '") + opt.baseline_method +
                            "' with an f32 KV cache at the same " +
                            (builds.split() ? "build, " : "") + "target, context and workload";
  tab.footnotes.push_back(
      ratio_footnote("Speed", "decode tok/s" + where, Direction::HigherIsBetter, opt.ratio()));
  tab.footnotes.push_back("Memory: ratio of medians, baseline / method (KV B/token" + where +
                          "), no interval.");
  for (const auto& m : missing)
    tab.footnotes.push_back("No '" + opt.baseline_method + "' trials with an f32 KV cache for " +
                            m + ": speed and memory ratios are not available.");
  if (show_fallbacks)
    tab.footnotes.push_back(fallback_footnote(trials, "the decode and memory figures"));
  if (show_busy)
    tab.footnotes.push_back(
        "Busy n/N: n of the row's N trials ran while the 1-minute load average was above the "
        "run's thread count, which stands in for the core count (the store records none; a run "
        "uses every core unless its plan or --threads sets fewer): other processes competed for "
        "the cores, so those timings are likely slowed.");
  if (!builds.footnote().empty()) tab.footnotes.push_back(builds.footnote());
  if (!marks.footnote().empty()) tab.footnotes.push_back(marks.footnote());
  if (rows.empty()) tab.footnotes.push_back("No trials in this selection.");
  return tab;
}

}  // namespace accel::reports
