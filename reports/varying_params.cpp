// The varying-parameters rule (varying_params.h).
#include "reports/varying_params.h"

#include <algorithm>
#include <filesystem>
#include <set>

#include "reports/tables.h"

namespace accel::reports {

using results::TrialRecord;

void add_model_labels(const TrialRecord& t, nlohmann::json& p) {
  if (t.draft) p["draft"] = model_label(*t.draft);
  if (!t.inputs.is_object()) return;
  for (const auto& [role, in] : t.inputs.items()) {
    if (role == "target" || role == "draft") continue;  // the row's target; model_label above
    if (!in.is_object() || !in.contains("path") || !in["path"].is_string()) continue;
    const std::filesystem::path path = in["path"].get<std::string>();
    const std::string folder = path.parent_path().filename().string();
    p[role] = (folder.empty() ? "" : folder + "/") + path.stem().string();
  }
}

ConfigRow config_row(const TrialRecord& t) {
  ConfigRow r{t.method, t.params.is_object() ? t.params : nlohmann::json::object()};
  add_model_labels(t, r.params);
  return r;
}

VaryingParams varying_params(const std::vector<ConfigRow>& rows) {
  std::map<std::string, std::set<std::string>> sets;  // method -> distinct params dumps
  for (const auto& r : rows) sets[r.method].insert(r.params.dump());
  VaryingParams out;
  for (const auto& [method, dumps] : sets) {
    std::map<std::string, std::set<std::string>> values;  // key -> distinct values
    std::map<std::string, size_t> present;                // key -> sets holding it
    for (const auto& d : dumps) {
      const auto p = nlohmann::json::parse(d);
      for (auto it = p.begin(); it != p.end(); ++it) {
        values[it.key()].insert(it.value().dump());
        ++present[it.key()];
      }
    }
    auto& keys = out[method];
    for (const auto& [k, vs] : values)
      if (vs.size() > 1 || present[k] != dumps.size()) keys.push_back(k);
  }
  return out;
}

VaryingParams varying_params_by_method(const std::vector<TrialRecord>& trials) {
  std::vector<ConfigRow> rows;
  rows.reserve(trials.size());
  for (const auto& t : trials) rows.push_back(config_row(t));
  return varying_params(rows);
}

nlohmann::json configuration_params(const TrialRecord& t, const VaryingParams& varying,
                                    const std::vector<std::string>& exclude,
                                    const std::vector<std::string>& include) {
  const ConfigRow row = config_row(t);
  std::vector<std::string> keys = include;
  if (const auto v = varying.find(t.method); v != varying.end())
    keys.insert(keys.end(), v->second.begin(), v->second.end());
  nlohmann::json p = nlohmann::json::object();
  for (const auto& k : keys)
    if (row.params.contains(k) && std::find(exclude.begin(), exclude.end(), k) == exclude.end())
      p[k] = row.params[k];
  return p;
}

std::string configuration_label(const TrialRecord& t, const VaryingParams& varying,
                                const std::vector<std::string>& exclude,
                                const std::vector<std::string>& include) {
  return params_label(configuration_params(t, varying, exclude, include));
}

}  // namespace accel::reports
