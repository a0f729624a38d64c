// The `drift` report (tables.h): SpecPrefill's state drift on hybrid targets, per configuration and
// recurrent layer, beside the kept fraction and, when the run scored it, agreement KL. Reads the
// stats the method recorded (methods/state_drift.h); computes nothing but means and medians.
#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include "reports/stats.h"
#include "reports/tables.h"

namespace accel::reports {

namespace {

struct DriftCell {
  std::vector<double> mean, max, kept, kl;
  std::map<int, std::vector<double>> layer;  // recurrent layer -> scan drift per trial
  size_t fallbacks = 0, trials = 0;
};

Cell number_cell(double x) {
  return std::isnan(x) ? Cell("—", nullptr) : Cell(format_number(x), x);
}

void add_trial(const results::TrialRecord& t, DriftCell& c) {
  ++c.trials;
  if (fell_back(t)) {
    ++c.fallbacks;
    return;
  }
  const nlohmann::json& d = t.stats["state_drift"];
  c.mean.push_back(d.value("scan_mean", double(NAN)));
  c.max.push_back(d.value("scan_max", double(NAN)));
  if (t.prompt_tokens > 0) c.kept.push_back(double(t.kept_tokens) / double(t.prompt_tokens));
  if (t.scores.count("agreement.kl_mean")) c.kl.push_back(t.scores.at("agreement.kl_mean"));
  const auto& layers = d["layers"];
  const auto& scan = d["scan"];
  for (size_t i = 0; i < layers.size() && i < scan.size(); ++i)
    c.layer[layers[i].get<int>()].push_back(scan[i].is_number() ? scan[i].get<double>() : INFINITY);
}

}  // namespace

Table drift_table(const results::ResultStore& store, const ReportOptions& opt) {
  results::TrialFilter f;
  f.where = opt.where;
  std::vector<results::TrialRecord> trials;
  for (auto& t : store.trials(f))
    if (!t.failed() && t.stats.contains("state_drift")) trials.push_back(std::move(t));
  const VaryingParams varying = varying_params_by_method(trials);
  const bool show_kv = has_non_f32_kv(trials);
  // target, method, params, KV type (f32 first), context
  using Key =
      std::tuple<std::string, std::string, std::string, std::pair<bool, std::string>, int64_t>;
  std::map<Key, DriftCell> rows;
  std::set<int> layers;
  for (const auto& t : trials) {
    DriftCell& c =
        rows[{model_label(t.target), t.method, configuration_label(t, varying, {"state_drift"}),
              kv_rank(kv_dtype_of(t)), t.context_len}];
    add_trial(t, c);
    for (const auto& [l, v] : c.layer) layers.insert(l);
  }
  const bool show_fallbacks = std::any_of(trials.begin(), trials.end(), fell_back);
  Table tab;
  tab.title =
      "State drift of sparse prefill on recurrent layers (relative L2 distance from the "
      "state after a full prefill)";
  tab.columns = {{"target", "Target", Align::Left},
                 {"method", "Method", Align::Left},
                 {"params", "Params", Align::Left}};
  if (show_kv) tab.columns.push_back({"kv_dtype", "KV", Align::Left});
  tab.columns.push_back({"context_len", "Context", Align::Right});
  tab.columns.push_back({"kept", "Kept", Align::Right});
  tab.columns.push_back({"kl_mean", "Mean KL", Align::Right});
  tab.columns.push_back({"drift_mean", "Drift mean", Align::Right});
  tab.columns.push_back({"drift_max", "Drift max", Align::Right});
  for (int l : layers)
    tab.columns.push_back({"layer_" + std::to_string(l), "L" + std::to_string(l), Align::Right});
  tab.columns.push_back({"trials", "Trials", Align::Right});
  if (show_fallbacks) tab.columns.push_back({"fallback", "Fallback", Align::Right});
  for (const auto& [k, c] : rows) {
    std::vector<Cell> row = {Cell(std::get<0>(k)), Cell(std::get<1>(k)), Cell(std::get<2>(k))};
    if (show_kv) row.push_back(Cell(std::get<3>(k).second));
    row.push_back(Cell(std::to_string(std::get<4>(k)), std::get<4>(k)));
    row.push_back(number_cell(mean(c.kept)));
    row.push_back(number_cell(mean(c.kl)));
    row.push_back(number_cell(mean(c.mean)));
    row.push_back(number_cell(mean(c.max)));
    for (int l : layers) {
      const auto it = c.layer.find(l);
      row.push_back(number_cell(it == c.layer.end() ? NAN : median(it->second)));
    }
    const size_t used = c.trials - c.fallbacks;
    row.push_back(Cell(std::to_string(used), int64_t(used)));
    if (show_fallbacks) row.push_back(fallback_cell(c.fallbacks, c.trials));
    tab.rows.push_back(std::move(row));
  }
  tab.footnotes.push_back(
      "Drift: ||S_sparse - S_full|| / ||S_full|| of each recurrent layer's scan state (DeltaNet "
      "or SSM state) after the prefill, recorded by specprefill with state_drift=true. Drift "
      "mean / max: over layers, then averaged over trials; L<n>: layer n's median over trials. "
      "Kept: kept / prompt tokens. Mean KL: agreement.kl_mean when the run scored agreement.");
  if (show_fallbacks) tab.footnotes.push_back(fallback_footnote(trials, "the drift figures"));
  if (rows.empty())
    tab.footnotes.push_back(
        "No trials with state drift in this selection: run specprefill with state_drift=true on "
        "a hybrid target (e.g. plans/specprefill_state_drift.json).");
  return tab;
}

}  // namespace accel::reports
