// parse_param_items and parse_input_items (see cli_args.h).
#include "harness/cli_args.h"

#include <stdexcept>

namespace accel {

nlohmann::json parse_param_items(const std::vector<std::string>& items, const std::string& flag) {
  nlohmann::json p = nlohmann::json::object();
  for (const auto& item : items) {
    const size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0)
      throw std::invalid_argument(flag + " '" + item + "': expected key=value");
    const std::string key = item.substr(0, eq), value = item.substr(eq + 1);
    nlohmann::json v = nlohmann::json::parse(value, nullptr, false);
    p[key] = v.is_discarded() || v.is_object() || v.is_array() ? nlohmann::json(value) : v;
  }
  return p;
}

std::map<std::string, std::string> parse_input_items(const std::vector<std::string>& items) {
  std::map<std::string, std::string> out;
  for (const auto& item : items) {
    const size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == item.size())
      throw std::invalid_argument("--input '" + item + "': expected ROLE=FILE");
    if (!out.emplace(item.substr(0, eq), item.substr(eq + 1)).second)
      throw std::invalid_argument("--input: role '" + item.substr(0, eq) + "' given twice");
  }
  return out;
}

}  // namespace accel
