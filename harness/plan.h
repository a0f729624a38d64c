// Plans: the JSON file that names model sets, methods (with swept parameters), context lengths,
// the workload, trials, decode length, threads and seeds; its validation (errors name the field)
// and its expansion into cases. Owns no running and no storage.
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

namespace accel {

class PlanError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A target and (optionally) a draft/auxiliary model: either explicit paths, or a synthetic family
// made on demand under the models directory.
struct ModelSetSpec {
  std::string name;
  std::string target, draft;  // paths (resolved for families)
  std::string family;         // non-empty: synthetic family
  std::string draft_role = "draft";
  uint64_t family_seed = 0;
  std::string dtype = "f32";
};

struct MethodSpec {
  std::string name;
  nlohmann::json params = nlohmann::json::object();  // a list value is a sweep
};

struct WorkloadSpec {
  std::string kind = "synthetic";  // exact-length seeded token prompts (suites come later)
  int samples = 1;
};

struct Plan {
  std::string name = "unnamed";
  std::vector<ModelSetSpec> models;
  std::vector<MethodSpec> methods;
  std::vector<int> context_lengths;
  WorkloadSpec workload;
  int warmup = 1;
  int trials = 3;
  int decode_tokens = 16;
  // Untimed agreement-with-baseline scoring of every non-baseline case over this many decode
  // steps (first-token agreement, top-1 agreement, mean KL); 0 turns it off.
  int agreement_steps = 16;
  int threads = 0;  // 0 = all cores
  size_t prefill_chunk = 512;
  uint64_t seed = 0;
  nlohmann::json source;  // the plan as given
};

// One unit of work: everything that determines its measurements.
struct Case {
  size_t model_set = 0;  // index into Plan::models
  std::string method;
  nlohmann::json params;  // resolved, scalar
  int context_len = 0;
  int sample = 0;
  // Canonical JSON of the case's configuration (without model hashes), used for its key.
  nlohmann::json config(const Plan& p) const;
  std::string label(const Plan& p) const;  // "baseline keep=0.2 ctx=1024 s0 @tiny"
};

// Parses and validates; `source` names the file in errors ("plan.json: methods[1].params.keep:
// ..."). Synthetic family paths are resolved under models_dir.
Plan parse_plan(const nlohmann::json& j, const std::string& source, const std::string& models_dir);
Plan load_plan(const std::string& path, const std::string& models_dir);
// The built-in quick plan of `accelbench run` with no arguments (tiny family, a few minutes).
nlohmann::json default_plan_json();

// Cartesian product: model set × method × parameter sweep × context length × sample.
std::vector<Case> expand_plan(const Plan& p);

}  // namespace accel
