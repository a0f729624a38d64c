// Parameter resolution (see param_spec.h).
#include "models/param_spec.h"

#include <cmath>
#include <stdexcept>

namespace accel {

nlohmann::json resolve_param_specs(const std::string& where, const std::vector<ParamSpec>& specs,
                                   const nlohmann::json& given) {
  if (!given.is_null() && !given.is_object())
    throw std::invalid_argument(where + ": params must be an object");
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
      case ParamSpec::Kind::Text:
        if (!v.is_string()) throw std::invalid_argument(what + " must be a string");
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

std::string param_range_text(const ParamSpec& p) {
  std::string range;
  if (p.kind == ParamSpec::Kind::Choice) {
    for (const auto& c : p.choices) range += (range.empty() ? "" : "|") + c;
  } else if (p.kind != ParamSpec::Kind::Bool && p.kind != ParamSpec::Kind::Text) {
    range = std::string(p.min_exclusive ? "(" : "[") + nlohmann::json(p.min).dump() + ", " +
            nlohmann::json(p.max).dump() + "]";
  }
  return range;
}

}  // namespace accel
