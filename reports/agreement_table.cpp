// The `agreement` report (tables.h): agreement of each method with the baseline over the same
// prefixes, recorded by the runner as agreement.* scores. On random-weight models these are the
// only quality figures the harness reports, and the table says so.
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
  using Key = std::tuple<std::string, std::string, std::string, int64_t>;  // target, method, ...
  std::map<Key, std::vector<const results::TrialRecord*>> rows;
  std::set<std::string> synthetic;
  int steps = 0;
  for (const auto& t : trials) {
    if (!t.scores.count("agreement.kl_mean")) continue;
    nlohmann::json p = t.params.is_object() ? t.params : nlohmann::json::object();
    if (t.draft) p["draft"] = model_label(*t.draft);
    rows[{model_label(t.target), t.method, params_label(p), t.context_len}].push_back(&t);
    if (t.target.config.contains("synthetic_family")) synthetic.insert(model_label(t.target));
    if (t.stats.contains("agreement_steps")) steps = t.stats["agreement_steps"].get<int>();
  }
  Table tab;
  tab.title =
      "Agreement with the baseline (same prompt; method teacher-forced on the baseline's "
      "greedy tokens)";
  tab.columns = {{"target", "Target", Align::Left},
                 {"method", "Method", Align::Left},
                 {"params", "Params", Align::Left},
                 {"context_len", "Context", Align::Right},
                 {"first_token", "First token", Align::Right},
                 {"top1", "Top-1", Align::Right},
                 {"kl_mean", "Mean KL", Align::Right},
                 {"kl_max", "Max KL", Align::Right},
                 {"samples", "Samples", Align::Right}};
  auto mean_of = [](const std::vector<const results::TrialRecord*>& ts, const char* name) {
    // Scores are per case (repeated on each trial): average over distinct samples.
    std::map<std::string, double> by_sample;
    for (const auto* t : ts) by_sample[t->sample_id] = t->scores.at(name);
    double s = 0;
    for (const auto& [id, v] : by_sample) s += v;
    return std::make_pair(s / double(by_sample.size()), by_sample.size());
  };
  for (const auto& [k, ts] : rows) {
    const auto [first, n] = mean_of(ts, "agreement.first_token");
    const double top1 = mean_of(ts, "agreement.top1").first;
    const double kl = mean_of(ts, "agreement.kl_mean").first;
    const double kl_max = mean_of(ts, "agreement.kl_max").first;
    tab.rows.push_back({Cell(std::get<0>(k)), Cell(std::get<1>(k)), Cell(std::get<2>(k)),
                        Cell(std::to_string(std::get<3>(k)), std::get<3>(k)),
                        Cell(format_number(first), first), Cell(format_number(top1), top1),
                        Cell(format_number(kl), kl), Cell(format_number(kl_max), kl_max),
                        Cell(std::to_string(n), n)});
  }
  tab.footnotes.push_back(
      "First token: share of samples whose first generated token equals the "
      "baseline's. Top-1 and KL(baseline || method) in nats over the first " +
      std::to_string(steps) + " decode steps' next-token distributions, averaged over samples.");
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
