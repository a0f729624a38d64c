// The build a trial was timed on — (code state, CPU model) of its run — and the
// per-selection index every timing table splits rows by, so that no time or speedup pools trials
// of different code or machines. Reads runs through the store; formats only the "Build" label.
#pragma once
#include <compare>
#include <map>
#include <string>
#include <vector>

#include "reports/table.h"
#include "results/result_store.h"

namespace accel::reports {

struct Build {
  std::string commit;
  bool dirty = false;
  std::string state;  // results::code_state: tells two dirty builds of one commit apart
  std::string cpu;
  auto operator<=>(const Build&) const = default;
  // "0123456+dirty.1a2b3c, Xeon 8375C": the commit's first 7 digits, for a dirty build the first
  // 6 digits of its diff's digest, and the CPU model abbreviated.
  std::string label() const;
  // The exact grouping identity (code state and full CPU model; the label abbreviates).
  std::string key() const { return state + "|" + cpu; }
};

// "Intel(R) Xeon(R) Platinum 8375C CPU @ 2.90GHz" -> "Xeon Platinum 8375C": trademarks, vendor,
// "CPU", "Processor", "n-Core" and the clock dropped.
std::string abbreviate_cpu(const std::string& cpu_model);

// The builds of a selection's trials (run_id -> RunInfo). `split()` is whether the trials span
// more than one build; only then do tables add the build to row keys and show a "Build" column, so
// a single-build store prints as before.
class BuildIndex {
 public:
  BuildIndex() = default;
  BuildIndex(const results::ResultStore& store, const std::vector<results::TrialRecord>& trials);
  // Directly from runs (tests, callers that already read them); trials of unknown runs share one
  // empty build.
  BuildIndex(const std::vector<results::RunInfo>& runs,
             const std::vector<results::TrialRecord>& trials);

  const Build& of(const results::TrialRecord& t) const;
  bool split() const { return builds_ > 1; }
  // The grouping key: the build's identity when split, "" otherwise (one group).
  std::string key(const results::TrialRecord& t) const { return split() ? of(t).key() : ""; }
  // What a key() prints as: its build's label ("" for ""); keys group, labels are shown.
  std::string label(const std::string& key) const;

  static Column column() { return {"build", "Build", Align::Left}; }
  Cell cell(const results::TrialRecord& t) const;
  // What the Build column means and that speedups stay within a build; "" when not split.
  std::string footnote() const;

 private:
  std::map<std::string, Build> by_run_;
  size_t builds_ = 0;
};

}  // namespace accel::reports
