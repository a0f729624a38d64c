// Command-line values shared by the subcommands that run methods (`generate`, `serve`): method
// parameters given as key=value and model inputs given as ROLE=FILE. Owns parsing only.
#pragma once
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace accel {

// "--param key=value" items: the value as JSON when it parses as a scalar (numbers, true/false),
// else a string. Throws naming the item when it has no '='.
nlohmann::json parse_param_items(const std::vector<std::string>& items, const std::string& flag);

// "--input ROLE=FILE" items as a map; a malformed item or a role given twice is an error.
std::map<std::string, std::string> parse_input_items(const std::vector<std::string>& items);

}  // namespace accel
