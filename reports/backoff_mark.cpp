// Back-off marks on timing cells (backoff_mark.h).
#include "reports/backoff_mark.h"

namespace accel::reports {

bool backed_off(const results::TrialRecord& t) {
  return t.backoffs_in_region && *t.backoffs_in_region > 0;
}

void BackoffMarks::mark(Cell& cell, const std::vector<const results::TrialRecord*>& trials) {
  mark(cell, trials, {});
}

void BackoffMarks::mark(Cell& cell, const std::vector<const results::TrialRecord*>& baseline,
                        const std::vector<const results::TrialRecord*>& candidate) {
  size_t n = 0;
  for (const auto* side : {&baseline, &candidate})
    for (const auto* t : *side)
      if (backed_off(*t)) {
        ++n;
        flagged_.insert(t);
      }
  if (n == 0 || cell.text == "—") return;
  cell.text += " †";
  if (cell.data.is_object()) cell.data["backoff_trials"] = n;
}

std::string BackoffMarks::footnote() const {
  if (flagged_.empty()) return "";
  return "† " + std::to_string(flagged_.size()) +
         " trial(s) behind the marked cells ran part of a timed region on one thread (pool "
         "back-off): those times overstate the method's; they are kept, not corrected.";
}

}  // namespace accel::reports
