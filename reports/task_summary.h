// The official summary arithmetic of multi-task suites (suites/suite.h TaskSummary), applied to
// per-sample scores read from the store: rounded task scores, means over tasks and task groups,
// and RULER's plain and length-weighted averages over context lengths. Pure functions; the
// `suite` table (suite_table.cpp) decides which rows they fill.
#pragma once
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace accel::reports {

// x rounded to `decimals` as Python's round(x, decimals) does: the exact binary value rounded to
// the nearest decimal, ties to even (the reference scorers round with it). decimals < 0: x.
double round_like_python(double x, int decimals);

// A run's stored TaskSummary declaration (suites/suite.h to_json), parsed. Throws
// std::invalid_argument naming the field when the stored object is malformed.
struct TaskSummaryDecl {
  std::string task_metric;
  int round_decimals = 2;
  std::vector<std::string> tasks;
  std::string overall;
  std::vector<std::pair<std::string, std::vector<std::string>>> groups;
  bool length_weighted = false;
  // The metric holding `task`'s per-sample scores ("{task}" replaced).
  std::string metric_for(const std::string& task) const;
};
TaskSummaryDecl parse_task_summary(const nlohmann::json& j, const std::string& where);

// A mean over a set of tasks: the mean of the task scores present, and how many of the set were.
struct GroupScore {
  double mean = 0;
  size_t present = 0, of = 0;
};
// Mean of task_scores over `members` present in it; present == 0 (mean NaN) when none are.
GroupScore group_mean(const std::map<std::string, double>& task_scores,
                      const std::vector<std::string>& members);

// RULER's averages over context lengths of one configuration's per-length scores: the plain mean
// and weighted means with weights 1..n (inc: the longest length weighs most) and n..1 (dec),
// lengths in increasing order.
struct LengthAverages {
  double avg = 0, wavg_inc = 0, wavg_dec = 0;
};
LengthAverages length_averages(const std::map<int64_t, double>& score_by_length);

}  // namespace accel::reports
