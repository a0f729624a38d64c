// Build labels and the per-selection build index (build_key.h).
#include "reports/build_key.h"

// At -O1 (the sanitizer build) GCC 12 reports a maybe-uninitialized std::function inside
// libstdc++'s std::regex compiler; a false positive, silenced for this file only.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <regex>
#include <set>
#include <sstream>

namespace accel::reports {

std::string abbreviate_cpu(const std::string& cpu_model) {
  std::string s = cpu_model.substr(0, cpu_model.find(" @"));
  static const std::regex noise(
      R"(\((R|TM|tm)\)|\b(Intel|AMD|CPU|Processor)\b|\b\d+-Core\b|\bwith\b.*$)");
  s = std::regex_replace(s, noise, " ");
  std::istringstream words(s);
  std::string w, out;
  while (words >> w) out += (out.empty() ? "" : " ") + w;
  return out.empty() ? cpu_model : out;
}

std::string Build::label() const {
  std::string l = commit.empty() ? "unknown" : commit.substr(0, 7);
  if (dirty) {
    l += "+dirty";
    // code_state's "<commit>-dirty-<digest>"; runs recorded before the digest have none.
    const std::string tag = commit + "-dirty-";
    if (state.rfind(tag, 0) == 0 && state.size() > tag.size())
      l += "." + state.substr(tag.size(), 6);
  }
  if (!cpu.empty()) l += ", " + abbreviate_cpu(cpu);
  return l;
}

BuildIndex::BuildIndex(const results::ResultStore& store,
                       const std::vector<results::TrialRecord>& trials)
    : BuildIndex(store.runs(), trials) {}

BuildIndex::BuildIndex(const std::vector<results::RunInfo>& runs,
                       const std::vector<results::TrialRecord>& trials) {
  for (const auto& r : runs)
    by_run_[r.run_id] = {r.git_commit, r.git_dirty, results::code_state(r), r.cpu_model};
  std::set<Build> seen;
  for (const auto& t : trials) seen.insert(of(t));
  builds_ = seen.size();
}

std::string BuildIndex::label(const std::string& key) const {
  if (key.empty()) return "";
  for (const auto& [run, b] : by_run_)
    if (b.key() == key) return b.label();
  return key;  // not a key of this index: shown as given
}

const Build& BuildIndex::of(const results::TrialRecord& t) const {
  static const Build unknown;
  const auto it = by_run_.find(t.run_id);
  return it == by_run_.end() ? unknown : it->second;
}

Cell BuildIndex::cell(const results::TrialRecord& t) const {
  const Build& b = of(t);
  return Cell(
      b.label(),
      {{"commit", b.commit}, {"dirty", b.dirty}, {"code_state", b.state}, {"cpu_model", b.cpu}});
}

std::string BuildIndex::footnote() const {
  if (!split()) return "";
  return "Build = the runs' git commit (+dirty.<digest>: uncommitted changes, told apart by their "
         "diff) and CPU model: this "
         "selection holds " +
         std::to_string(builds_) +
         " builds, so rows are split by build and every time and speedup uses the trials of one "
         "build only, against the baseline of the same build.";
}

}  // namespace accel::reports
