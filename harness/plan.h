// Plans: the JSON file that names model sets, methods (with swept parameters), context lengths,
// the workload, trials, decode length, threads and seeds; its validation (errors name the field)
// and its expansion into cases. Owns no running and no storage.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

namespace accel {

class EndpointBackend;
class Method;

class PlanError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The inputs methods run on, by role ("target", "draft", "aux", a weights file, ...): either
// explicit paths, or members of a synthetic family made on demand under the models directory.
struct ModelSetSpec {
  std::string name;
  std::map<std::string, std::string> inputs;  // role -> path (resolved for families)
  std::string family;                         // non-empty: synthetic family
  uint64_t family_seed = 0;
  std::string dtype = "f32";
  // The path of a role, or "" when the set has none.
  std::string path(const std::string& role) const;
};

struct MethodSpec {
  std::string name;
  nlohmann::json params = nlohmann::json::object();  // a list value is a sweep
};

// The suite a plan's prompts come from and its scoring (see suites/suite.h).
struct SuiteSpec {
  std::string name = "agreement";
  nlohmann::json params = nlohmann::json::object();  // resolved
  int samples = 1;
};

// The method every other method's reference-based scores compare against.
struct ReferenceSpec {
  std::string method = "baseline";
  nlohmann::json params = nlohmann::json::object();  // resolved
};

// A load sweep of an endpoint plan, in the style of `vllm bench serve`: every (request rate, max
// concurrency) point is one case per configuration and context length, whose `requests` streamed
// requests of seeded random token-id prompts (context length tokens, decode_tokens answers, EOS
// ignored) are its trials (harness/load_runner.h). Empty max_concurrency = no sweep.
struct LoadSweepSpec {
  std::vector<int> max_concurrency;
  std::vector<double> request_rate{0};  // Poisson arrivals in requests/s; 0 = all at once
  int requests = 16;                    // per point
  bool any() const { return !max_concurrency.empty(); }
};

struct Plan {
  std::string name = "unnamed";
  std::vector<ModelSetSpec> models;
  std::vector<MethodSpec> methods;
  std::vector<int> context_lengths;
  SuiteSpec suite;
  ReferenceSpec reference;
  std::vector<std::string> kv_dtypes{"f32"};  // target KV cache storage types (a sweep)
  int warmup = 1;
  int trials = 3;
  // `trial_order: "interleaved"`: each model set's cases are prepared (warm-ups included) in plan
  // order, then measured in rounds, trial t of every case before trial t + 1 of any, so a slow
  // phase of the machine falls on every case alike rather than on whichever ran in it. Default
  // "case": each case's trials back to back.
  bool interleave_trials = false;
  int decode_tokens = 16;
  int threads = 0;  // 0 = all cores
  size_t prefill_chunk = 512;
  uint64_t seed = 0;
  // false: the plan's figures are its suite's scores and its timings are not reported, so its
  // cases are quality-only: keyed without the build's commit and CPU and reused across them
  // (runner.h). Only for a suite that declares metrics.
  bool timings = true;
  nlohmann::json source;  // the plan as given
  // Set when the plan names an OpenAI-compatible server (`backend` + `configurations`): its
  // configurations then stand where methods stand (endpoint_backend.h), and the model set's
  // target is the local GGUF that holds the served model's tokenizer.
  std::shared_ptr<const EndpointBackend> backend;
  LoadSweepSpec load;  // endpoint plans only: `max_concurrency`, `request_rate`, `load_requests`
};

// The method a case's name stands for: a registered method, or an endpoint configuration of the
// plan's backend. Throws naming the known names.
const Method& plan_method(const Plan& p, const std::string& name);

// One unit of work: everything that determines its measurements.
struct Case {
  size_t model_set = 0;  // index into Plan::models
  std::string method;
  nlohmann::json params;  // resolved, scalar
  std::string kv_dtype = "f32";
  int context_len = 0;
  int sample = 0;
  // A load-sweep point (plan.load); concurrency 0 = not a load case.
  int concurrency = 0;
  double request_rate = 0;
  // Canonical JSON of the case's configuration (without input digests), used for its key.
  nlohmann::json config(const Plan& p) const;
  std::string label(const Plan& p) const;  // "baseline keep=0.2 ctx=1024 s0 @tiny"
};

// The most cases a plan may expand to; parse_plan refuses a larger one before expanding it.
inline constexpr uint64_t kMaxPlanCases = 1'000'000;

// Parses and validates; `source` names the file in errors ("plan.json: methods[1].params.keep:
// ..."). Synthetic family paths are resolved under models_dir.
Plan parse_plan(const nlohmann::json& j, const std::string& source, const std::string& models_dir);
Plan load_plan(const std::string& path, const std::string& models_dir);
// The built-in quick plan of `accelbench run` with no arguments (tiny family, a few minutes).
nlohmann::json default_plan_json();

// Cartesian product: model set × method × parameter sweep × kv dtype × context length × sample.
std::vector<Case> expand_plan(const Plan& p);

// `--shard I/N` (1 <= I <= N): a deterministic 1/N of a plan's cases for array jobs. A case belongs
// to shard 1 + (first 64 bits of its sha256 key) mod N, so the assignment depends on the case
// alone: editing a plan (another context length) never moves the other cases between shards, and
// the N shards partition the cases exactly.
struct Shard {
  int index = 1, count = 1;  // 1-based
  bool all() const { return count == 1; }
  bool contains(const std::string& case_key) const;
  std::string text() const { return std::to_string(index) + "/" + std::to_string(count); }
};
// Parses "I/N"; throws PlanError naming the text when it is not two integers with 1 <= I <= N.
Shard parse_shard(const std::string& text);

}  // namespace accel
