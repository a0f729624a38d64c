// The "†" on timing cells whose trials include one whose thread pool backed off inside a timed
// region (TrialRecord::backoffs_in_region > 0): part of that region ran on one thread, so the
// time is not the method's. Marks cells and writes the footnote; never drops or corrects a trial.
#pragma once
#include <set>
#include <string>
#include <vector>

#include "reports/table.h"
#include "results/records.h"

namespace accel::reports {

// Whether the trial recorded a pool back-off inside a timed region (null: not recorded, no mark).
bool backed_off(const results::TrialRecord& t);

// Collects the flagged trials of one table: mark() appends " †" to a cell whose trials (any side
// of a ratio) include a backed-off one, and adds {"backoff_trials": n} to an object's JSON data.
class BackoffMarks {
 public:
  void mark(Cell& cell, const std::vector<const results::TrialRecord*>& trials);
  void mark(Cell& cell, const std::vector<const results::TrialRecord*>& baseline,
            const std::vector<const results::TrialRecord*>& candidate);
  size_t flagged() const { return flagged_.size(); }
  // "† n trial(s) ran part of a timed region on one thread (pool back-off) ..."; "" when none.
  std::string footnote() const;

 private:
  std::set<const results::TrialRecord*> flagged_;
};

}  // namespace accel::reports
