// The `agreement` report (tables.h): agreement of each method with the baseline over the same
// prefixes, recorded by the runner as agreement.* scores. On random-weight models these are the
// only quality figures the harness reports, and the table says so. A trial that fell back ran
// the baseline's computation, so it agrees by construction: it is counted, never averaged in.
// Rows are per KV type too; every type's scores are against the reference run with an f32 cache.
#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include "reports/stats.h"
#include "reports/tables.h"

namespace accel::reports {

Table agreement_table(const results::ResultStore& store, const ReportOptions& opt) {
  results::TrialFilter f;
  f.where = opt.where;
  const auto trials = store.trials(f);
  // target, method, params, KV type (f32 first), context
  using Key =
      std::tuple<std::string, std::string, std::string, std::pair<bool, std::string>, int64_t>;
  std::map<Key, std::vector<const results::TrialRecord*>> rows;
  const bool show_kv = has_non_f32_kv(trials);
  std::set<std::string> synthetic;
  int steps = 0;
  std::map<std::string, int> suite_steps;  // run_id -> steps
  for (const auto& t : trials) {
    if (!t.scores.count("agreement.kl_mean")) continue;
    nlohmann::json p = t.params.is_object() ? t.params : nlohmann::json::object();
    add_model_labels(t, p);
    rows[{model_label(t.target), t.method, params_label(p), kv_rank(kv_dtype_of(t)), t.context_len}]
        .push_back(&t);
    if (t.target.config.contains("synthetic_family")) synthetic.insert(model_label(t.target));
    if (t.stats.contains("agreement_steps")) steps = t.stats["agreement_steps"].get<int>();  // < v4
    if (!suite_steps.count(t.run_id)) {  // v4: the agreement suite's params, once per run
      const auto run = store.run(t.run_id);
      suite_steps[t.run_id] =
          run ? run->suite.value("params", nlohmann::json::object()).value("steps", 0) : 0;
    }
    if (suite_steps[t.run_id] > 0) steps = suite_steps[t.run_id];
  }
  Table tab;
  tab.title =
      "Agreement with the baseline (same prompt; method teacher-forced on the baseline's "
      "greedy tokens)";
  tab.columns = {{"target", "Target", Align::Left},
                 {"method", "Method", Align::Left},
                 {"params", "Params", Align::Left}};
  if (show_kv) tab.columns.push_back({"kv_dtype", "KV", Align::Left});
  for (Column c : std::vector<Column>{{"context_len", "Context", Align::Right},
                                      {"first_token", "First token", Align::Right},
                                      {"top1", "Top-1", Align::Right},
                                      {"kl_mean", "Mean KL", Align::Right},
                                      {"kl_max", "Max KL", Align::Right},
                                      {"samples", "Samples", Align::Right}})
    tab.columns.push_back(std::move(c));
  std::vector<results::TrialRecord> scored;  // the footnote counts only the rows' trials
  for (const auto& [k, ts] : rows)
    for (const auto* t : ts) scored.push_back(*t);
  const bool show_fallbacks = std::any_of(scored.begin(), scored.end(), fell_back);
  if (show_fallbacks) tab.columns.push_back({"fallback", "Fallback", Align::Right});
  auto mean_of = [](const std::vector<const results::TrialRecord*>& ts, const char* name) {
    // Scores are per case (repeated on each trial): average over distinct samples.
    std::map<std::string, double> by_sample;
    for (const auto* t : ts)
      if (!fell_back(*t)) by_sample[t->sample_id] = t->scores.at(name);
    double s = 0;
    for (const auto& [id, v] : by_sample) s += v;
    return std::make_pair(by_sample.empty() ? NAN : s / double(by_sample.size()), by_sample.size());
  };
  auto number = [](double x) {
    return std::isnan(x) ? Cell("—", nullptr) : Cell(format_number(x), x);
  };
  for (const auto& [k, ts] : rows) {
    const auto [first, n] = mean_of(ts, "agreement.first_token");
    std::vector<Cell> row = {Cell(std::get<0>(k)), Cell(std::get<1>(k)), Cell(std::get<2>(k))};
    if (show_kv) row.push_back(Cell(std::get<3>(k).second));
    for (Cell c : {Cell(std::to_string(std::get<4>(k)), std::get<4>(k)), number(first),
                   number(mean_of(ts, "agreement.top1").first),
                   number(mean_of(ts, "agreement.kl_mean").first),
                   number(mean_of(ts, "agreement.kl_max").first), Cell(std::to_string(n), n)})
      row.push_back(std::move(c));
    if (show_fallbacks) {
      const auto fallbacks =
          size_t(std::count_if(ts.begin(), ts.end(), [](const auto* t) { return fell_back(*t); }));
      row.push_back(fallback_cell(fallbacks, ts.size()));
    }
    tab.rows.push_back(std::move(row));
  }
  tab.footnotes.push_back(
      "First token: share of samples whose first generated token equals the "
      "baseline's. Top-1 and KL(baseline || method) in nats over the first " +
      std::to_string(steps) + " decode steps' next-token distributions, averaged over samples.");
  if (show_kv && !rows.empty())
    tab.footnotes.push_back(
        "KV: the row's target KV cache type; every type is scored against the reference "
        "method's run with an f32 KV cache.");
  if (show_fallbacks) tab.footnotes.push_back(fallback_footnote(scored, "the agreement figures"));
  for (const auto& m : synthetic)
    tab.footnotes.push_back("AGREEMENT ONLY, NOT QUALITY: " + m +
                            " is a random-weight synthetic model; its outputs carry no meaning "
                            "beyond agreement with the baseline.");
  if (rows.empty())
    tab.footnotes.push_back(
        "No trials with agreement scores in this selection (plans with "
        "agreement_steps = 0, or baseline-only runs, record none).");
  return tab;
}

}  // namespace accel::reports
