// Case keys and the resume rule (see case_keys.h).
#include "harness/case_keys.h"

#include <nlohmann/json.hpp>

#include "harness/file_hash.h"

namespace accel {

namespace {

// A code state for messages: a full commit shortened to 12 digits, any "-dirty-..." suffix kept.
std::string short_code(const std::string& code) {
  constexpr size_t kCommitDigits = 40, kShown = 12;
  return code.size() >= kCommitDigits ? code.substr(0, kShown) + code.substr(kCommitDigits) : code;
}

std::string change_text(const TimingConditions& was, const TimingConditions& now) {
  std::string out;
  if (was.code_state != now.code_state)
    out = "commit " + short_code(was.code_state) + " -> " + short_code(now.code_state);
  if (was.cpu_model != now.cpu_model)
    out += (out.empty() ? "" : ", ") + std::string("CPU '") + was.cpu_model + "' -> '" +
           now.cpu_model + "'";
  return out;
}

}  // namespace

TimingConditions conditions_of(const results::RunInfo& run) {
  return {results::code_state(run), run.cpu_model};
}

bool quality_only(const Plan& plan) {
  return !plan.timings;
}

std::string case_key(const Plan& plan, const Case& c,
                     const std::map<std::string, std::string>& input_digests) {
  nlohmann::json k = c.config(plan);
  for (const auto& [role, sha] : input_digests) k[role + "_sha256"] = sha;
  return sha256_text(k.dump());
}

std::string timing_case_key(const std::string& base_key, const TimingConditions& conditions) {
  return sha256_text(nlohmann::json{{"case", base_key},
                                    {"code_state", conditions.code_state},
                                    {"cpu_model", conditions.cpu_model}}
                         .dump());
}

ResumeRule::ResumeRule(std::set<std::string> done_keys, TimingConditions now,
                       std::vector<TimingConditions> earlier, bool reuse_timings)
    : done_(std::move(done_keys)), now_(std::move(now)), reuse_timings_(reuse_timings) {
  std::set<TimingConditions> seen{now_};
  for (auto& c : earlier)
    if (seen.insert(c).second) earlier_.push_back(std::move(c));
}

std::string ResumeRule::key(const std::string& base_key, bool timing) const {
  return timing ? timing_case_key(base_key, now_) : base_key;
}

ResumeState ResumeRule::state(const std::string& base_key, bool timing) const {
  if (done_.count(key(base_key, timing))) return {true, ""};
  if (!timing) return {};
  // Rows keyed before schema v7 carry no conditions: they may come from any commit or CPU.
  if (done_.count(base_key))
    return reuse_timings_ ? ResumeState{true, ""}
                          : ResumeState{false,
                                        "timings recorded before keys named the commit "
                                        "and CPU"};
  for (const TimingConditions& c : earlier_)
    if (done_.count(timing_case_key(base_key, c)))
      return reuse_timings_ ? ResumeState{true, ""} : ResumeState{false, change_text(c, now_)};
  return {};
}

}  // namespace accel
