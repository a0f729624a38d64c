// The `parity` table: per configuration (target, method, the params that vary within the method,
// KV type) and context, the share of samples whose tokens equal the reference method's and the
// earliest divergence (parity.* scores), then the N×N cross-diff matrix of the configurations'
// stored output tokens. Reads the store only; any suite's trials take part in the matrix, since
// it compares stored outputs.
#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "reports/tables.h"

namespace accel::reports {

namespace {

using results::TrialRecord;

// (not the baseline, target, method, params, KV): the baseline's rows come first.
using ConfigKey = std::tuple<bool, std::string, std::string, std::string, std::string>;
// (sample hash, or its id when a store predates hashes; context length).
using SampleKey = std::pair<std::string, int64_t>;

struct Config {
  // Output tokens of each sample, by trial index (every trial of every run).
  std::map<SampleKey, std::map<int64_t, std::vector<int32_t>>> outputs;
  // parity.* scores of each sample by context (scores repeat on every trial of a case).
  std::map<int64_t, std::map<std::string, std::map<std::string, double>>> scores;
};

ConfigKey config_key(const TrialRecord& t, const VaryingParams& varying, const ReportOptions& opt) {
  return {t.method != opt.baseline_method, model_label(t.target), t.method,
          configuration_label(t, varying), t.kv_dtype.empty() ? "f32" : t.kv_dtype};
}

std::map<ConfigKey, Config> collect(const results::ResultStore& store, const ReportOptions& opt,
                                    std::set<int64_t>& contexts) {
  results::TrialFilter f;
  f.where = opt.where;
  const auto trials = store.trials(f);
  const auto varying = varying_params_by_method(trials);
  std::map<ConfigKey, Config> configs;
  for (const auto& t : trials) {
    Config& c = configs[config_key(t, varying, opt)];
    const SampleKey sk{t.sample_hash.empty() ? t.sample_id : t.sample_hash, t.context_len};
    c.outputs[sk].emplace(t.trial_index, t.output_tokens);
    contexts.insert(t.context_len);
    if (t.scores.count("parity.exact")) c.scores[t.context_len][t.sample_id] = t.scores;
  }
  return configs;
}

// The tokens a configuration produced for a sample: those of its lowest trial index.
const std::vector<int32_t>& first_output(const std::map<int64_t, std::vector<int32_t>>& trials) {
  return trials.begin()->second;
}

Cell share_cell(size_t same, size_t n) {
  if (n == 0) return Cell("—", nullptr);
  const double share = double(same) / double(n);
  return Cell(format_number(share, 3) + " (" + std::to_string(same) + "/" + std::to_string(n) + ")",
              {{"share", share}, {"same", same}, {"n", n}});
}

// Exact-parity share over the samples of one context.
Cell exact_cell(const std::map<std::string, std::map<std::string, double>>& by_sample) {
  size_t exact = 0;
  for (const auto& [id, s] : by_sample) exact += s.at("parity.exact") == 1.0 ? 1 : 0;
  return share_cell(exact, by_sample.size());
}

// The earliest first divergence over the samples of one context, with the two tokens there.
Cell divergence_cell(const std::map<std::string, std::map<std::string, double>>& by_sample) {
  const std::map<std::string, double>* best = nullptr;
  std::string best_id;
  for (const auto& [id, s] : by_sample) {
    if (s.at("parity.exact") == 1.0 || !s.count("parity.first_divergence")) continue;
    if (!best || s.at("parity.first_divergence") < best->at("parity.first_divergence"))
      best = &s, best_id = id;
  }
  if (!best) return Cell("none", nullptr);
  const auto token = [&](const char* name) {
    const auto it = best->find(name);
    return it == best->end() ? -1 : int64_t(it->second);
  };
  const int64_t pos = int64_t(best->at("parity.first_divergence"));
  const int64_t ref = token("parity.ref_token_at_divergence"),
                got = token("parity.method_token_at_divergence");
  return Cell("@" + std::to_string(pos) + " ref " + std::to_string(ref) + " / got " +
                  std::to_string(got) + " (" + best_id + ")",
              {{"position", pos}, {"ref_token", ref}, {"method_token", got}, {"sample", best_id}});
}

// Cell (A, B): share of the samples both ran whose first trials' tokens are identical. The
// diagonal instead compares every trial of A with its first trial: a configuration that does not
// reproduce itself shows below 1 there.
Cell cross_cell(const Config& a, const Config& b, bool diagonal) {
  size_t same = 0, n = 0;
  for (const auto& [sk, trials] : a.outputs) {
    if (diagonal) {
      ++n;
      const auto& first = first_output(trials);  // (clang 14 lambdas cannot capture bindings)
      same += std::all_of(trials.begin(), trials.end(),
                          [&](const auto& t) { return t.second == first; });
      continue;
    }
    const auto it = b.outputs.find(sk);
    if (it == b.outputs.end()) continue;
    ++n;
    same += first_output(trials) == first_output(it->second) ? 1 : 0;
  }
  return share_cell(same, n);
}

}  // namespace

Table parity_table(const results::ResultStore& store, const ReportOptions& opt) {
  std::set<int64_t> contexts;
  const auto configs = collect(store, opt, contexts);
  Table tab;
  tab.title = "Greedy parity with the reference method, and the cross-diff matrix";
  tab.columns = {{"config", "#", Align::Right},
                 {"target", "Target", Align::Left},
                 {"method", "Method", Align::Left},
                 {"params", "Params", Align::Left},
                 {"kv_dtype", "KV", Align::Left}};
  for (int64_t c : contexts) {
    const std::string cs = std::to_string(c);
    tab.columns.push_back({"exact_" + cs, "Exact " + cs, Align::Right});
    tab.columns.push_back({"divergence_" + cs, "First div. " + cs, Align::Left});
  }
  for (size_t j = 1; j <= configs.size(); ++j)
    tab.columns.push_back({"vs_" + std::to_string(j), "#" + std::to_string(j), Align::Right});
  size_t i = 0;
  for (const auto& [key, a] : configs) {
    ++i;
    std::vector<Cell> row = {Cell(std::to_string(i), int64_t(i)), Cell(std::get<1>(key)),
                             Cell(std::get<2>(key)), Cell(std::get<3>(key)),
                             Cell(std::get<4>(key))};
    for (int64_t c : contexts) {
      const auto it = a.scores.find(c);
      const bool scored = it != a.scores.end() && !it->second.empty();
      row.push_back(scored ? exact_cell(it->second) : Cell("—", nullptr));
      row.push_back(scored ? divergence_cell(it->second) : Cell("—", nullptr));
    }
    size_t j = 0;
    for (const auto& [kb, b] : configs) row.push_back(cross_cell(a, b, ++j == i));
    tab.rows.push_back(std::move(row));
  }
  tab.footnotes = {
      "Exact: share of samples whose tokens equal the reference method's token for token "
      "(parity.exact); — for the reference itself and for trials of other suites. First div.: "
      "the earliest first differing position over the samples, with the reference's and the "
      "method's tokens there (-1: that output had ended) and the sample.",
      "#j columns: share of the samples (same content hash and context) two configurations both "
      "ran whose first trials' output tokens are identical; the diagonal is the share of samples "
      "whose every trial repeats the first trial's tokens."};
  if (configs.empty()) tab.footnotes.push_back("No trials in this selection.");
  return tab;
}

}  // namespace accel::reports
