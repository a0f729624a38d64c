// Official summary arithmetic (task_summary.h).
#include "reports/task_summary.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

namespace accel::reports {

double round_like_python(double x, int decimals) {
  if (decimals < 0 || !std::isfinite(x)) return x;
  // printf's %.*f rounds the exact binary value with ties to even (glibc), which is what
  // Python's round() does; multiplying by 10^d first would round twice.
  char buf[512];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, x);
  return std::strtod(buf, nullptr);
}

std::string TaskSummaryDecl::metric_for(const std::string& task) const {
  const std::string key = "{task}";
  std::string m = task_metric;
  if (const auto at = m.find(key); at != std::string::npos) m.replace(at, key.size(), task);
  return m;
}

namespace {

std::vector<std::string> string_list(const nlohmann::json& j, const std::string& where) {
  if (!j.is_array()) throw std::invalid_argument(where + " is not an array");
  std::vector<std::string> out;
  for (const auto& e : j) {
    if (!e.is_string()) throw std::invalid_argument(where + " holds a non-string");
    out.push_back(e.get<std::string>());
  }
  return out;
}

}  // namespace

TaskSummaryDecl parse_task_summary(const nlohmann::json& j, const std::string& where) {
  const std::string at = where + ": task_summary";
  if (!j.is_object()) throw std::invalid_argument(at + " is not an object");
  TaskSummaryDecl d;
  try {
    d.task_metric = j.at("task_metric").get<std::string>();
    d.round_decimals = j.value("round_decimals", 2);
    d.tasks = string_list(j.at("tasks"), at + ".tasks");
    d.overall = j.value("overall", std::string("average over tasks"));
    for (const auto& g : j.value("groups", nlohmann::json::array()))
      d.groups.emplace_back(g.at("label").get<std::string>(),
                            string_list(g.at("tasks"), at + ".groups.tasks"));
    d.length_weighted = j.value("length_weighted", false);
  } catch (const nlohmann::json::exception& e) {
    throw std::invalid_argument(at + ": " + e.what());
  }
  if (d.task_metric.empty()) throw std::invalid_argument(at + ".task_metric is empty");
  return d;
}

GroupScore group_mean(const std::map<std::string, double>& task_scores,
                      const std::vector<std::string>& members) {
  GroupScore g;
  g.of = members.size();
  double sum = 0;
  for (const auto& m : members)
    if (const auto it = task_scores.find(m); it != task_scores.end()) {
      sum += it->second;
      ++g.present;
    }
  g.mean = g.present ? sum / double(g.present) : NAN;
  return g;
}

LengthAverages length_averages(const std::map<int64_t, double>& by_length) {
  LengthAverages a;
  const double n = double(by_length.size());
  double sum = 0, inc = 0, dec = 0, i = 1;
  for (const auto& [len, score] : by_length) {  // std::map: increasing length
    sum += score;
    inc += i * score;
    dec += (n + 1 - i) * score;
    ++i;
  }
  const double weights = n * (n + 1) / 2;
  a.avg = sum / n;
  a.wavg_inc = inc / weights;
  a.wavg_dec = dec / weights;
  return a;
}

}  // namespace accel::reports
