// load_history (history.h).
#include "reports/history.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>
#include <tuple>

#include "reports/stats.h"
#include "reports/tables.h"

namespace accel::reports {

using results::TrialRecord;

std::string HistoryRun::label() const {
  std::string t = started_at.substr(0, 16);
  std::replace(t.begin(), t.end(), 'T', ' ');
  return commit.substr(0, 7) + (dirty ? "-dirty" : "") + " " + t;
}

namespace {

CaseHistory case_identity(const TrialRecord& t) {
  CaseHistory c;
  c.case_key = results::case_identity_key(t);  // compare judges cases by this key too
  c.method = t.method;
  c.model = model_label(t.target);
  c.kv_dtype = kv_dtype_of(t);
  c.workload = t.workload;
  c.sample_id = t.sample_id;
  c.context_len = t.context_len;
  if (t.params.is_object()) c.config = t.params;
  add_model_labels(t, c.config);
  return c;
}

// Labels every case with only the parameters that vary within its method.
void label_cases(std::map<std::string, CaseHistory>& cases) {
  std::vector<ConfigRow> identities;  // one per case: its method and configuration
  for (const auto& [key, c] : cases) identities.push_back(ConfigRow{c.method, c.config});
  const VaryingParams varying = varying_params(identities);
  for (auto& [key, c] : cases) {
    const std::vector<std::string>& keys = varying.at(c.method);
    const std::string p = keys.empty() ? "" : params_label(c.config, keys);
    c.label = c.method + (p.empty() ? "" : " " + p) + " ctx=" + std::to_string(c.context_len) +
              " " + c.sample_id + " (" + c.model +
              (c.kv_dtype == "f32" ? "" : ", KV " + c.kv_dtype) + ")";
  }
}

}  // namespace

History load_history(const std::vector<std::pair<std::string, const results::ResultStore*>>& stores,
                     const HistoryOptions& opt) {
  const Metric& m = metric(opt.metric);
  History h;
  h.metric = m.name;
  h.higher_is_better = m.higher_is_better;
  // (started_at, commit, run_id, store index) -> the run; then the order gives indices.
  using RunKey = std::tuple<std::string, std::string, std::string, size_t>;
  std::map<RunKey, HistoryRun> runs;
  std::map<std::pair<std::string, size_t>, RunKey> run_of;  // (run_id, store) -> key
  std::map<std::pair<std::string, RunKey>, std::vector<TrialRecord>> by_case_run;
  std::map<std::string, CaseHistory> cases;  // case key -> its identity, then its values
  for (size_t si = 0; si < stores.size(); ++si) {
    const auto& [name, store] = stores[si];
    for (const auto& r : store->runs()) {
      const RunKey k{r.started_at, r.git_commit, r.run_id, si};
      runs[k] = {name, r.run_id, r.git_commit, r.started_at, r.hostname, r.git_dirty};
      run_of[{r.run_id, si}] = k;
    }
    results::TrialFilter f;
    f.where = opt.where;
    if (!f.where.empty()) store->validate_where(f.where);
    for (auto& t : store->trials(f)) {
      const auto v = m.get(t);
      if (!v || !std::isfinite(*v) || *v <= 0) continue;
      const auto it = run_of.find({t.run_id, si});
      if (it == run_of.end()) continue;  // a trial of a run the store does not list
      // The case across commits (a timing case_key names its commit).
      const std::string key = results::case_identity_key(t);
      if (!cases.count(key)) cases.emplace(key, case_identity(t));
      by_case_run[{key, it->second}].push_back(std::move(t));
    }
  }
  if (by_case_run.empty())
    throw std::invalid_argument("no trial in the store(s) has metric '" + opt.metric + "'");
  // Only runs that hold a measurement become points.
  std::map<RunKey, size_t> index;
  for (const auto& [key, run] : runs) {
    const RunKey& k = key;  // a lambda may not capture a structured binding before C++20 (clang 14)
    const bool used = std::any_of(by_case_run.begin(), by_case_run.end(),
                                  [&](const auto& e) { return e.first.second == k; });
    if (!used) continue;
    index[k] = h.runs.size();
    h.runs.push_back(run);
  }
  label_cases(cases);
  for (auto& [key, trials] : by_case_run) {
    CaseHistory& c = cases.at(key.first);
    HistoryValue v;
    v.run = index.at(key.second);
    std::vector<double> x;
    for (const auto& t : trials) x.push_back(*m.get(t));
    v.n = x.size();
    v.median = median(x);
    v.lo = v.hi = NAN;
    if (opt.resamples > 0) {
      const std::vector<double> one{1.0};
      // A percentile bootstrap of the median (the ratio to a constant 1 is the median itself).
      const Interval iv = bootstrap_ratio(
          x, one, Center::Median, opt.resamples,
          opt.seed ^ stable_hash(key.first + "|" + std::get<2>(key.second)), opt.level);
      v.lo = iv.lo;
      v.hi = iv.hi;
    }
    v.trials = std::move(trials);
    c.values.push_back(std::move(v));
  }
  for (auto& [k, c] : cases) {
    std::sort(c.values.begin(), c.values.end(), [](auto& a, auto& b) { return a.run < b.run; });
    h.cases.push_back(std::move(c));
  }
  std::stable_sort(h.cases.begin(), h.cases.end(),
                   [](auto& a, auto& b) { return a.label < b.label; });
  return h;
}

}  // namespace accel::reports
