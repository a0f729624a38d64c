// How the dashboard arranges cases: groups of one method on one target model, each case labelled
// by only what differs within its group (parameters, KV type, workload, sample), cases sorted
// numerically by context length, groups holding a regression first. Pure functions of a history
// and its verdicts; no HTML here (dashboard_page.cpp) and no statistics (compare.h).
#pragma once
#include <string>
#include <vector>

#include "reports/history.h"

namespace accel::reports {

// Display rank of a case's verdict: regressed 0, improved 1, ok 2, too few trials 3, one run 4.
int verdict_rank(bool judged, Verdict v);

// "a2" < "a10": runs of digits compare as numbers, everything else byte by byte.
bool natural_less(const std::string& a, const std::string& b);

struct GroupedCase {
  size_t index = 0;       // into History::cases
  std::string label;      // what varies within the group, "k=v, k2=v2" ("" when nothing does)
  std::string full_text;  // every identity field and parameter, for the page's filter
};

struct CaseGroup {
  std::string method, model;
  std::string title;               // "specprefill · tiny/target"
  std::string fixed;               // the parameters all its cases share, "k=v, ..."
  int worst_rank = 4;              // the best-ranked (most urgent) verdict of its cases
  std::vector<GroupedCase> cases;  // by context length, then label, then case key
};

// `ranks` is parallel to h.cases (verdict_rank of each). Groups: most urgent worst_rank first,
// then by method and model (natural order).
std::vector<CaseGroup> group_cases(const History& h, const std::vector<int>& ranks);

}  // namespace accel::reports
