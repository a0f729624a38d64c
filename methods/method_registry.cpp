// The registry of methods and parameter resolution (see method.h). Adding a method: write its
// pair of files and add one line to the table in all_methods().
#include <cmath>
#include <stdexcept>

#include "methods/baseline.h"
#include "methods/method.h"
#include "methods/specprefill.h"

namespace accel {

std::vector<const Method*> all_methods() {
  static const BaselineMethod baseline;
  static const SpecPrefillMethod specprefill;
  return {&baseline, &specprefill};
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
  const std::string where = "method '" + m.name() + "'";
  if (!given.is_null() && !given.is_object())
    throw std::invalid_argument(where + ": params must be an object");
  const auto specs = m.params();
  if (given.is_object())
    for (auto& [k, v] : given.items()) {
      bool found = false;
      for (const auto& s : specs) found = found || s.name == k;
      if (!found) throw std::invalid_argument(where + ": unknown parameter '" + k + "'");
    }
  nlohmann::json out = nlohmann::json::object();
  for (const auto& s : specs) {
    nlohmann::json v =
        given.is_object() && given.contains(s.name) ? given[s.name] : s.default_value;
    const std::string what = where + ": parameter '" + s.name + "'";
    switch (s.kind) {
      case ParamSpec::Kind::Int:
      case ParamSpec::Kind::Float: {
        if (!v.is_number()) throw std::invalid_argument(what + " must be a number");
        const double x = v.get<double>();
        if (s.kind == ParamSpec::Kind::Int && (!v.is_number_integer()))
          throw std::invalid_argument(what + " must be an integer");
        const bool lo_ok = s.min_exclusive ? x > s.min : x >= s.min;
        if (!std::isfinite(x) || !lo_ok || x > s.max)
          throw std::invalid_argument(what + " = " + v.dump() + " outside " +
                                      (s.min_exclusive ? "(" : "[") + nlohmann::json(s.min).dump() +
                                      ", " + nlohmann::json(s.max).dump() + "]");
        break;
      }
      case ParamSpec::Kind::Bool:
        if (!v.is_boolean()) throw std::invalid_argument(what + " must be true or false");
        break;
      case ParamSpec::Kind::Choice: {
        bool ok = v.is_string();
        if (ok) {
          ok = false;
          for (const auto& c : s.choices) ok = ok || c == v.get<std::string>();
        }
        if (!ok) {
          std::string cs;
          for (const auto& c : s.choices) cs += (cs.empty() ? "" : ", ") + c;
          throw std::invalid_argument(what + " = " + v.dump() + " is not one of: " + cs);
        }
        break;
      }
    }
    out[s.name] = v;
  }
  return out;
}

}  // namespace accel
