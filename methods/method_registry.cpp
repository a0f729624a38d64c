// The registry of methods and parameter resolution (see method.h). Adding a method: write its
// pair of files and add one line to the table in all_methods().
#include <cmath>
#include <stdexcept>

#include "methods/baseline.h"
#include "methods/critiprefill.h"
#include "methods/kvpred.h"
#include "methods/method.h"
#include "methods/pld.h"
#include "methods/specprefill.h"

namespace accel {

std::vector<const Method*> all_methods() {
  static const BaselineMethod baseline;
  static const SpecPrefillMethod specprefill;
  static const PldMethod pld;
  static const CritiPrefillMethod critiprefill;
  static const KVPredMethod kvpred;
  return {&baseline, &specprefill, &pld, &critiprefill, &kvpred};
}

const Model& Engine::model(const std::string& role) const {
  if (role == "target" && target) return *target;
  const auto it = models.find(role);
  if (it == models.end() || !it->second)
    throw std::invalid_argument("no model for role '" + role + "' in this engine");
  return *it->second;
}

const std::string& Engine::file(const std::string& role) const {
  const auto it = files.find(role);
  if (it == files.end())
    throw std::invalid_argument("no file for role '" + role + "' in this engine");
  return it->second;
}

std::string Engine::digest(const std::string& role) const {
  const auto it = digests.find(role);
  return it == digests.end() ? std::string() : it->second;
}

const Method& find_method(const std::string& name) {
  std::string known;
  for (const Method* m : all_methods()) {
    if (m->name() == name) return *m;
    known += (known.empty() ? "" : ", ") + m->name();
  }
  throw std::invalid_argument("unknown method '" + name + "' (known: " + known + ")");
}

nlohmann::json resolve_params(const Method& m, const nlohmann::json& given) {
  return resolve_param_specs("method '" + m.name() + "'", m.params(), given);
}

}  // namespace accel
