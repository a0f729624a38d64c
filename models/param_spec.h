// Declared parameters of a method or a suite: name, kind, default, range or choices, help; and
// their resolution (defaults filled, every value checked). Lives in models/ only because it is the
// lowest layer both methods/ and suites/ may use; it knows nothing of models.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace accel {

// One declared parameter: its default, its allowed values and a line of help.
struct ParamSpec {
  enum class Kind { Int, Float, Bool, Choice, Text };  // Text: any string (e.g. a data path)
  std::string name;
  Kind kind = Kind::Float;
  nlohmann::json default_value;
  double min = 0, max = 0;           // Int/Float: inclusive range, checked
  bool min_exclusive = false;        // e.g. keep in (0, 1]
  std::vector<std::string> choices;  // Choice
  std::string help;
};

// Fills defaults and checks every value against its declaration; throws std::invalid_argument
// starting with `where` (e.g. "method 'specprefill'") and naming the parameter, unknown names
// included.
nlohmann::json resolve_param_specs(const std::string& where, const std::vector<ParamSpec>& specs,
                                   const nlohmann::json& given);

// "[0, 1]", "(0, 1]", "a|b|c" or "" (Bool), for help listings.
std::string param_range_text(const ParamSpec& p);

}  // namespace accel
