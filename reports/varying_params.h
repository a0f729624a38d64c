// Which parameters label a configuration: the one rule every table uses, applied to structured
// rows (method + params JSON with the model labels added), never to rendered text. A resolved PLD
// or SpecPrefill configuration has a dozen parameters, most at their preset; only those that vary
// within a method in the selection tell its rows apart.
#pragma once
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "results/records.h"

namespace accel::reports {

// A configuration as the tables compare them: its method and its params plus the trial's models
// other than the target as pseudo-parameters (add_model_labels).
struct ConfigRow {
  std::string method;
  nlohmann::json params = nlohmann::json::object();
};
ConfigRow config_row(const results::TrialRecord& t);

// Adds the trial's models other than the target to a configuration's params, as pseudo-parameters
// that keep configurations apart in every table: "draft" (model_label) and each named input file
// (KV Prediction's "aux", "predictor") as "<folder>/<file stem>" of its path.
void add_model_labels(const results::TrialRecord& t, nlohmann::json& p);

// Per method, the keys whose values differ between its rows or that some of its rows lack (an
// empty list when none do; every method present has an entry).
using VaryingParams = std::map<std::string, std::vector<std::string>>;
VaryingParams varying_params(const std::vector<ConfigRow>& rows);
// The same over trials (config_row of each).
VaryingParams varying_params_by_method(const std::vector<results::TrialRecord>& trials);

// The trial's configuration restricted to the keys that vary within its method, minus `exclude`
// (keys a table shows in columns of their own), plus `include` (keys a caller asks for anyway).
nlohmann::json configuration_params(const results::TrialRecord& t, const VaryingParams& varying,
                                    const std::vector<std::string>& exclude = {},
                                    const std::vector<std::string>& include = {});
// Its "k=v, k2=v2" label ("" when nothing varies).
std::string configuration_label(const results::TrialRecord& t, const VaryingParams& varying,
                                const std::vector<std::string>& exclude = {},
                                const std::vector<std::string>& include = {});

}  // namespace accel::reports
