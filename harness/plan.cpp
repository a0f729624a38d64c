// Plan parsing, validation and expansion (see plan.h). Every error names the source file and the
// JSON path of the offending field.
#include "harness/plan.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>

#include "harness/endpoint_backend.h"
#include "harness/shipped_models.h"
#include "methods/method.h"
#include "models/kv_storage.h"
#include "models/synthetic.h"
#include "suites/suite.h"

namespace accel {

namespace {

[[noreturn]] void fail(const std::string& src, const std::string& field, const std::string& what) {
  throw PlanError("[plan] " + src + ": " + field + ": " + what);
}

int get_int(const nlohmann::json& j, const std::string& key, int def, int lo, int hi,
            const std::string& src, const std::string& field) {
  if (!j.contains(key)) return def;
  const auto& v = j[key];
  if (!v.is_number_integer()) fail(src, field, "must be an integer");
  const int64_t x = v.get<int64_t>();
  if (x < lo || x > hi)
    fail(src, field,
         std::to_string(x) + " outside [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
  return int(x);
}

void check_keys(const nlohmann::json& j, const std::set<std::string>& allowed,
                const std::string& src, const std::string& where) {
  for (auto& [k, v] : j.items())
    if (!allowed.count(k)) fail(src, where.empty() ? k : where + "." + k, "unknown field");
}

std::string get_string(const nlohmann::json& j, const std::string& key, const std::string& src,
                       const std::string& field) {
  if (!j.contains(key) || !j[key].is_string()) fail(src, field, "required string");
  return j[key];
}

// role -> string map from a JSON object ("roles" / "inputs").
std::map<std::string, std::string> string_map(const nlohmann::json& j, const std::string& src,
                                              const std::string& field) {
  if (!j.is_object()) fail(src, field, "must be an object of role: name");
  std::map<std::string, std::string> out;
  for (auto& [k, v] : j.items()) {
    if (!v.is_string()) fail(src, field + "." + k, "must be a string");
    out[k] = v;
  }
  return out;
}

// A synthetic family: every role maps to a member file under the family's directory.
void resolve_family_roles(const nlohmann::json& m, const std::string& src, const std::string& f,
                          const std::string& models_dir, ModelSetSpec& s) {
  // A shipped family (trained files in the repository) has fixed weights: no seed, no dtype.
  std::optional<ShippedFamily> shipped;
  try {
    shipped = find_shipped_family(s.family);
  } catch (const std::exception& e) {
    fail(src, f + ".family", e.what());
  }
  std::vector<std::string> roles;
  if (shipped) {
    for (const char* k : {"seed", "dtype"})
      if (m.contains(k))
        fail(src, f + "." + k,
             "family '" + s.family + "' is shipped as trained files: it has no '" + k + "'");
    for (const auto& mem : shipped->members) roles.push_back(mem.role);
  } else {
    try {
      for (const auto& mem : find_synthetic_family(s.family).members) roles.push_back(mem.role);
    } catch (const std::exception& e) {
      fail(src, f + ".family",
           std::string(e.what()) + " (nor a shipped family in " + shipped_models_root() + ")");
    }
  }
  std::map<std::string, std::string> members = {{"target", "target"}, {"draft", "draft"}};
  if (m.contains("draft_role")) {
    if (!m["draft_role"].is_string()) fail(src, f + ".draft_role", "must be a string");
    members["draft"] = m["draft_role"];
  }
  if (m.contains("roles"))
    for (auto& [role, member] : string_map(m["roles"], src, f + ".roles")) members[role] = member;
  const auto dir = std::filesystem::path(models_dir) /
                   (shipped ? s.family + "-shipped"
                            : s.family + "-" + s.dtype + "-s" + std::to_string(s.family_seed));
  for (const auto& [role, member] : members) {
    const bool has = std::find(roles.begin(), roles.end(), member) != roles.end();
    if (!has) {
      if (role == "draft" && !m.contains("draft_role")) continue;  // a family without a draft
      fail(src, f + (m.contains("roles") && role != "draft" ? ".roles." + role : ".draft_role"),
           "family '" + s.family + "' has no member '" + member + "'");
    }
    s.inputs[role] = (dir / (member + ".gguf")).string();
  }
}

ModelSetSpec parse_model_set(const nlohmann::json& m, const std::string& src, const std::string& f,
                             const std::string& models_dir) {
  if (!m.is_object()) fail(src, f, "must be an object");
  check_keys(
      m, {"name", "family", "seed", "dtype", "target", "draft", "draft_role", "roles", "inputs"},
      src, f);
  ModelSetSpec s;
  s.name = get_string(m, "name", src, f + ".name");
  if (m.contains("family")) {
    if (!m["family"].is_string()) fail(src, f + ".family", "must be a string");
    s.family = m["family"];
    if (m.contains("seed")) {
      if (!m["seed"].is_number_integer() || m["seed"].get<int64_t>() < 0)
        fail(src, f + ".seed", "must be a non-negative integer");
      s.family_seed = m["seed"].get<uint64_t>();
    }
    if (m.contains("dtype")) {
      if (!m["dtype"].is_string()) fail(src, f + ".dtype", "must be a string");
      s.dtype = m["dtype"];
      if (!weight_scheme_from_name(s.dtype))
        fail(src, f + ".dtype",
             "'" + s.dtype +
                 "' is not one of f32, f16, bf16, q8_0, q4_0, q4_k, q5_k, q6_k, q4_k_m, q5_k_m");
    }
    if (m.contains("target") || m.contains("draft") || m.contains("inputs"))
      fail(src, f,
           "give either 'family' (with 'roles') or 'target'/'draft'/'inputs' paths, not both");
    resolve_family_roles(m, src, f, models_dir, s);
    return s;
  }
  if (m.contains("draft_role") || m.contains("roles"))
    fail(src, f, "'draft_role' and 'roles' name family members: give 'family' too");
  s.inputs["target"] = get_string(m, "target", src, f + ".target");
  if (m.contains("draft")) s.inputs["draft"] = get_string(m, "draft", src, f + ".draft");
  if (m.contains("inputs"))
    for (auto& [role, path] : string_map(m["inputs"], src, f + ".inputs")) {
      if (s.inputs.count(role)) fail(src, f + ".inputs." + role, "role given twice");
      s.inputs[role] = path;
    }
  return s;
}

// "suite": {"name", "params", "samples"}; the older "workload": {"kind": "synthetic", "samples"}
// with "agreement_steps" means the agreement suite (or plain synthetic when the steps are 0).
void parse_suite(const nlohmann::json& j, const std::string& src, Plan& p) {
  if (j.contains("suite") && j.contains("workload"))
    fail(src, "workload", "give 'suite' or the older 'workload', not both");
  if (j.contains("suite") && j.contains("agreement_steps"))
    fail(src, "agreement_steps", "with 'suite', set the agreement suite's params.steps instead");
  nlohmann::json given = nlohmann::json::object();
  std::string field = "suite";
  if (j.contains("suite")) {
    const auto& su = j["suite"];
    if (!su.is_object()) fail(src, "suite", "must be an object");
    check_keys(su, {"name", "params", "samples"}, src, "suite");
    p.suite.name = get_string(su, "name", src, "suite.name");
    if (su.contains("params")) given = su["params"];
    p.suite.samples = get_int(su, "samples", 1, 1, 100000, src, "suite.samples");
  } else {
    const int steps = get_int(j, "agreement_steps", 16, 0, 1024, src, "agreement_steps");
    p.suite.name = steps > 0 ? "agreement" : "synthetic";
    if (steps > 0) given["steps"] = steps;
    if (j.contains("workload")) {
      const auto& w = j["workload"];
      if (!w.is_object()) fail(src, "workload", "must be an object");
      check_keys(w, {"kind", "samples"}, src, "workload");
      if (w.contains("kind") && (!w["kind"].is_string() || w["kind"] != "synthetic"))
        fail(src, "workload.kind", "only 'synthetic' (use \"suite\" for the others)");
      p.suite.samples = get_int(w, "samples", 1, 1, 100000, src, "workload.samples");
    }
    field = "agreement_steps";
  }
  try {
    p.suite.params = resolve_suite_params(find_suite(p.suite.name), given);
  } catch (const std::exception& e) {
    fail(src, field, e.what());
  }
}

// `backend` and `configurations`: the configurations become the plan's methods, by name.
void parse_backend(const nlohmann::json& j, const std::string& src, Plan& p) {
  if (j.contains("methods"))
    fail(src, "methods", "an endpoint plan (with `backend`) lists `configurations` instead");
  if (j.contains("kv_dtypes"))
    fail(src, "kv_dtypes", "the served model's KV cache is the server's setting, not the plan's");
  try {
    p.backend = EndpointBackend::parse(j["backend"], j.value("configurations", nlohmann::json()));
  } catch (const std::invalid_argument& e) {
    throw PlanError("[plan] " + src + ": " + e.what());
  }
  for (const auto& c : p.backend->configurations()) p.methods.push_back({c->name(), {}});
}

// A double list member: [1, 2, 4] or a single number; each in [lo, hi].
std::vector<double> number_list(const nlohmann::json& v, double lo, double hi,
                                const std::string& src, const std::string& field) {
  const nlohmann::json list = v.is_array() ? v : nlohmann::json::array({v});
  if (list.empty() || list.size() > 64) fail(src, field, "must list 1 to 64 values");
  std::vector<double> out;
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string f = field + "[" + std::to_string(i) + "]";
    if (!list[i].is_number() || !(list[i].get<double>() >= lo && list[i].get<double>() <= hi)) {
      char range[64];
      std::snprintf(range, sizeof range, "must be a number in [%g, %g]", lo, hi);
      fail(src, f, range);
    }
    out.push_back(list[i].get<double>());
  }
  return out;
}

// `max_concurrency`, `request_rate` and `load_requests`: an endpoint plan's load sweep. Its
// prompts are random token ids, so it names no suite, and its requests are its trials.
void parse_load(const nlohmann::json& j, const std::string& src, Plan& p) {
  if (!j.contains("max_concurrency")) {
    for (const char* k : {"request_rate", "load_requests"})
      if (j.contains(k)) fail(src, k, "belongs to a load sweep, which needs `max_concurrency`");
    return;
  }
  if (!p.backend) fail(src, "max_concurrency", "a load sweep needs a `backend` to send it to");
  if (p.backend->spec().api != "completions")
    fail(src, "backend.api",
         "a load sweep sends random token-id prompts to /v1/completions; it cannot use \"" +
             p.backend->spec().api + "\"");
  for (const char* k : {"suite", "workload", "trials", "warmup", "reference", "timings"})
    if (j.contains(k))
      fail(src, k,
           "a load sweep sends seeded random token-id prompts and its requests are its trials; "
           "it has no `" +
               std::string(k) + "`");
  for (double c : number_list(j["max_concurrency"], 1, 4096, src, "max_concurrency")) {
    if (c != std::floor(c)) fail(src, "max_concurrency", "values must be integers");
    p.load.max_concurrency.push_back(int(c));
  }
  if (j.contains("request_rate"))
    p.load.request_rate = number_list(j["request_rate"], 0, 1e6, src, "request_rate");
  p.load.requests = get_int(j, "load_requests", 16, 1, 100000, src, "load_requests");
  p.trials = p.load.requests;
  p.warmup = 0;
}

void parse_reference(const nlohmann::json& j, const std::string& src, Plan& p) {
  nlohmann::json given = nlohmann::json::object();
  if (j.contains("reference")) {
    const auto& r = j["reference"];
    if (!r.is_object()) fail(src, "reference", "must be an object");
    check_keys(r, {"method", "params"}, src, "reference");
    p.reference.method = get_string(r, "method", src, "reference.method");
    if (r.contains("params")) given = r["params"];
  }
  if (p.backend) {  // the reference is a configuration, run on the same server (default: the first)
    if (!j.contains("reference")) p.reference.method = p.backend->configurations()[0]->name();
    const EndpointMethod* c = p.backend->find(p.reference.method);
    if (!c)
      fail(src, "reference.method",
           "'" + p.reference.method + "' is not one of the plan's configurations");
    if (!given.empty()) fail(src, "reference.params", "a configuration has its request instead");
    p.reference.params = c->extras();
    return;
  }
  try {
    const Method& m = find_method(p.reference.method);
    for (const auto& in : m.inputs())
      if (in.role != "target")
        fail(src, "reference.method",
             "the reference runs on the target alone; '" + m.name() + "' needs '" + in.role + "'");
    p.reference.params = resolve_params(m, given);
  } catch (const std::invalid_argument& e) {
    fail(src, "reference", e.what());
  }
}

void parse_kv_dtypes(const nlohmann::json& j, const std::string& src, Plan& p) {
  if (!j.contains("kv_dtypes")) return;
  const auto& v = j["kv_dtypes"];
  if (!v.is_array() || v.empty()) fail(src, "kv_dtypes", "must be a non-empty array of names");
  p.kv_dtypes.clear();
  for (size_t i = 0; i < v.size(); ++i) {
    const std::string f = "kv_dtypes[" + std::to_string(i) + "]";
    if (!v[i].is_string() || !kv_dtype_from_name(v[i].get<std::string>())) {
      std::string known;
      for (const auto& n : kv_dtype_names()) known += (known.empty() ? "" : ", ") + n;
      fail(src, f, v[i].dump() + " is not one of " + known);
    }
    p.kv_dtypes.push_back(v[i]);
  }
}

// Expands list-valued params into every combination (keys in sorted order, values in given order).
std::vector<nlohmann::json> param_combinations(const nlohmann::json& params) {
  std::vector<nlohmann::json> out{nlohmann::json::object()};
  for (auto& [k, v] : params.items()) {
    std::vector<nlohmann::json> next;
    const nlohmann::json values = v.is_array() ? v : nlohmann::json::array({v});
    for (const auto& base : out)
      for (const auto& x : values) {
        nlohmann::json c = base;
        c[k] = x;
        next.push_back(c);
      }
    out = std::move(next);
  }
  return out;
}

// a * b, saturating at UINT64_MAX (counts of cases only need comparing against a limit).
uint64_t saturating_mul(uint64_t a, uint64_t b) {
  uint64_t r;
  return __builtin_mul_overflow(a, b, &r) ? UINT64_MAX : r;
}

}  // namespace

std::string ModelSetSpec::path(const std::string& role) const {
  const auto it = inputs.find(role);
  return it == inputs.end() ? std::string() : it->second;
}

nlohmann::json default_plan_json() {
  return {
      {"name", "quick"},
      {"models", {{{"name", "tiny"}, {"family", "tiny"}}}},
      {"methods",
       {{{"name", "baseline"}},
        {{"name", "specprefill"}, {"params", {{"keep", 0.2}, {"threshold", 0}}}}}},
      {"context_lengths", {512, 1024, 2048, 4000}},
      {"suite", {{"name", "agreement"}, {"samples", 2}}},
      {"warmup", 1},
      {"trials", 3},
      {"decode_tokens", 16},
      {"threads", 0},
      {"seed", 0},
  };
}

Plan parse_plan(const nlohmann::json& j, const std::string& src, const std::string& models_dir) {
  if (!j.is_object()) fail(src, "(top level)", "a plan is a JSON object");
  check_keys(
      j, {"name",          "models",          "methods",    "context_lengths", "workload",
          "suite",         "reference",       "kv_dtypes",  "warmup",          "trials",
          "decode_tokens", "agreement_steps", "threads",    "prefill_chunk",   "seed",
          "description",   "timings",         "backend",    "configurations",  "max_concurrency",
          "request_rate",  "load_requests",   "trial_order"},
      src, "");
  Plan p;
  p.source = j;
  if (j.contains("name")) {
    if (!j["name"].is_string()) fail(src, "name", "must be a string");
    p.name = j["name"];
  }
  if (!j.contains("models") || !j["models"].is_array() || j["models"].empty())
    fail(src, "models", "must be a non-empty array of model sets");
  std::set<std::string> names;
  for (size_t i = 0; i < j["models"].size(); ++i) {
    const std::string f = "models[" + std::to_string(i) + "]";
    p.models.push_back(parse_model_set(j["models"][i], src, f, models_dir));
    if (!names.insert(p.models.back().name).second)
      fail(src, f + ".name", "duplicate model set '" + p.models.back().name + "'");
  }
  if (j.contains("backend")) {
    parse_backend(j, src, p);
  } else if (j.contains("configurations")) {
    fail(src, "configurations", "needs a `backend` naming the server they are sent to");
  }
  if (!p.backend && (!j.contains("methods") || !j["methods"].is_array() || j["methods"].empty()))
    fail(src, "methods", "must be a non-empty array");
  for (size_t i = 0; !p.backend && i < j["methods"].size(); ++i) {
    const auto& m = j["methods"][i];
    const std::string f = "methods[" + std::to_string(i) + "]";
    if (!m.is_object()) fail(src, f, "must be an object");
    check_keys(m, {"name", "params"}, src, f);
    if (!m.contains("name") || !m["name"].is_string()) fail(src, f + ".name", "required string");
    MethodSpec s;
    s.name = m["name"];
    try {
      find_method(s.name);
    } catch (const std::exception& e) {
      fail(src, f + ".name", e.what());
    }
    if (m.contains("params")) {
      if (!m["params"].is_object()) fail(src, f + ".params", "must be an object");
      s.params = m["params"];
      for (auto& [k, v] : s.params.items())
        if (v.is_array() && v.empty()) fail(src, f + ".params." + k, "an empty sweep");
    }
    p.methods.push_back(s);
  }
  if (!j.contains("context_lengths") || !j["context_lengths"].is_array() ||
      j["context_lengths"].empty())
    fail(src, "context_lengths", "must be a non-empty array of token counts");
  for (size_t i = 0; i < j["context_lengths"].size(); ++i) {
    const auto& v = j["context_lengths"][i];
    const std::string f = "context_lengths[" + std::to_string(i) + "]";
    if (!v.is_number_integer() || v.get<int64_t>() < 1 || v.get<int64_t>() > (1 << 24))
      fail(src, f, "must be an integer in [1, 16777216]");
    p.context_lengths.push_back(v.get<int>());
  }
  parse_suite(j, src, p);
  parse_reference(j, src, p);
  parse_kv_dtypes(j, src, p);
  p.warmup = get_int(j, "warmup", 1, 0, 1000, src, "warmup");
  p.trials = get_int(j, "trials", 3, 1, 100000, src, "trials");
  p.decode_tokens = get_int(j, "decode_tokens", 16, 1, 1 << 20, src, "decode_tokens");
  p.threads = get_int(j, "threads", 0, 0, 4096, src, "threads");
  p.prefill_chunk = size_t(get_int(j, "prefill_chunk", 512, 1, 1 << 20, src, "prefill_chunk"));
  parse_load(j, src, p);
  if (j.contains("seed")) {
    if (!j["seed"].is_number_integer() || j["seed"].get<int64_t>() < 0)
      fail(src, "seed", "must be a non-negative integer");
    p.seed = j["seed"].get<uint64_t>();
  }
  if (j.contains("timings")) {
    if (!j["timings"].is_boolean()) fail(src, "timings", "must be true or false");
    p.timings = j["timings"].get<bool>();
    if (!p.timings && find_suite(p.suite.name).metrics().empty())
      fail(src, "timings",
           "false needs a suite with scores: suite '" + p.suite.name +
               "' has none, so its cases "
               "measure timings only");
  }
  if (j.contains("trial_order")) {
    const std::string order = get_string(j, "trial_order", src, "trial_order");
    if (order != "case" && order != "interleaved")
      fail(src, "trial_order", "must be \"case\" or \"interleaved\", not \"" + order + "\"");
    p.interleave_trials = order == "interleaved";
    if (p.interleave_trials && p.load.any())
      fail(src, "trial_order",
           "\"interleaved\" does not apply to a load sweep, whose requests are its trials");
  }
  if (j.contains("description") && !j["description"].is_string())
    fail(src, "description", "must be a string");
  // Count the cases before making any: a plan is untrusted, and a few kilobytes of it (100000
  // samples x 2000 context lengths, or twelve 10-value sweeps) used to expand here into more cases
  // than memory holds (libFuzzer's out-of-memory in tests/fuzz/fuzz_plan.cpp on
  // tests/fuzz/regressions/plan/). No runnable plan comes near the cap.
  uint64_t n_cases = 0;
  for (const auto& m : p.methods) {
    if (n_cases > kMaxPlanCases) break;
    uint64_t n = 1;
    for (auto& [k, v] : m.params.items()) n = saturating_mul(n, v.is_array() ? v.size() : 1);
    for (uint64_t f :
         {uint64_t(p.models.size()), uint64_t(p.kv_dtypes.size()),
          uint64_t(p.context_lengths.size()),
          // a load plan's cases are its sweep points, not samples
          p.load.any() ? uint64_t(p.load.max_concurrency.size() * p.load.request_rate.size())
                       : uint64_t(p.suite.samples)})
      n = saturating_mul(n, f);
    n_cases = n > kMaxPlanCases - n_cases ? kMaxPlanCases + 1 : n_cases + n;
  }
  if (n_cases > kMaxPlanCases)
    fail(src, "(top level)",
         "expands to more than " + std::to_string(kMaxPlanCases) +
             " cases (model sets x methods x parameter sweeps x kv_dtypes x context lengths x "
             "samples); split it into several plans");
  // Validate every parameter combination now, so a bad sweep value fails before anything runs
  // (each combination once, not once per case).
  for (size_t i = 0; i < p.methods.size() && !p.backend; ++i) {
    try {
      const Method& method = find_method(p.methods[i].name);
      for (const auto& combo : param_combinations(p.methods[i].params))
        resolve_params(method, combo);
    } catch (const std::invalid_argument& e) {
      fail(src, "methods[" + std::to_string(i) + "].params", e.what());
    }
  }
  return p;
}

Plan load_plan(const std::string& path, const std::string& models_dir) {
  std::ifstream in(path);
  if (!in) throw PlanError("[plan] " + path + ": cannot read the file");
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {  // parse_error, or out_of_range (number overflow)
    throw PlanError("[plan] " + path + ": not valid JSON: " + e.what());
  }
  return parse_plan(j, path, models_dir);
}

const Method& plan_method(const Plan& p, const std::string& name) {
  if (!p.backend) return find_method(name);
  if (const EndpointMethod* c = p.backend->find(name)) return *c;
  throw std::invalid_argument("unknown configuration '" + name + "' of the plan's backend");
}

std::vector<Case> expand_plan(const Plan& p) {
  std::vector<Case> cases;
  for (size_t ms = 0; ms < p.models.size(); ++ms)
    for (const auto& m : p.methods) {
      if (p.backend) {  // a configuration: its request extras are the case's params, unswept
        const nlohmann::json& extras =
            static_cast<const EndpointMethod&>(plan_method(p, m.name)).extras();
        for (int ctx : p.context_lengths) {
          for (double rate : p.load.request_rate)
            for (int conc : p.load.max_concurrency)
              cases.push_back(Case{ms, m.name, extras, "f32", ctx, 0, conc, rate});
          for (int s = 0; s < p.suite.samples && !p.load.any(); ++s)
            cases.push_back(Case{ms, m.name, extras, "f32", ctx, s});
        }
        continue;
      }
      const Method& method = find_method(m.name);
      for (const auto& combo : param_combinations(m.params)) {
        const nlohmann::json resolved = resolve_params(method, combo);
        for (const auto& kv : p.kv_dtypes)
          for (int ctx : p.context_lengths)
            for (int s = 0; s < p.suite.samples; ++s)
              cases.push_back(Case{ms, m.name, resolved, kv, ctx, s});
      }
    }
  return cases;
}

bool Shard::contains(const std::string& case_key) const {
  if (count <= 1) return true;
  if (case_key.size() < 16) throw PlanError("[shard] case key '" + case_key + "' is not a sha256");
  const uint64_t h = std::stoull(case_key.substr(0, 16), nullptr, 16);
  return int(h % uint64_t(count)) + 1 == index;
}

Shard parse_shard(const std::string& text) {
  const auto bad = [&](const std::string& why) {
    return PlanError("[shard] '" + text + "': " + why + " (expected I/N with 1 <= I <= N)");
  };
  const size_t slash = text.find('/');
  if (slash == std::string::npos) throw bad("no '/'");
  const auto number = [&](const std::string& s) {
    if (s.empty() || s.size() > 6 || s.find_first_not_of("0123456789") != std::string::npos)
      throw bad("'" + s + "' is not a positive integer");
    return std::stoi(s);
  };
  Shard sh{number(text.substr(0, slash)), number(text.substr(slash + 1))};
  if (sh.count < 1 || sh.index < 1 || sh.index > sh.count) throw bad("index out of range");
  return sh;
}

nlohmann::json Case::config(const Plan& p) const {
  const Suite& suite = find_suite(p.suite.name);
  nlohmann::json c = {
      {"method", method},
      {"params", params},
      {"context_len", context_len},
      {"suite", {{"name", suite.name()}, {"version", suite.version()}, {"params", p.suite.params}}},
      {"sample", sample},
      {"seed", p.seed},
      {"decode_tokens", p.decode_tokens},
      {"prefill_chunk", p.prefill_chunk},
      {"threads", p.threads}};
  // Only non-default settings are added, so that adding a setting keeps older keys.
  if (kv_dtype != "f32") c["kv_dtype"] = kv_dtype;
  if (p.backend) {
    c["backend"] = {{"base_url", p.backend->spec().base_url}, {"model", p.backend->spec().model}};
    // Only chat plans name their API, so completions plans keep the keys of earlier runs.
    if (p.backend->spec().api != "completions") c["backend"]["api"] = p.backend->spec().api;
  }
  if (concurrency > 0)
    c["load"] = {{"max_concurrency", concurrency},
                 {"request_rate", request_rate},
                 {"requests", p.load.requests}};
  if (suite.reference_need(p.suite.params).kind != ReferenceNeed::Kind::None)
    c["reference"] = {{"method", p.reference.method}, {"params", p.reference.params}};
  return c;
}

std::string Case::label(const Plan& p) const {
  std::string s = method;
  for (auto& [k, v] : params.items()) s += " " + k + "=" + v.dump();
  if (kv_dtype != "f32") s += " kv=" + kv_dtype;
  if (concurrency > 0) {
    char rate[32];
    std::snprintf(rate, sizeof rate, "%g", request_rate);
    s += " concurrency=" + std::to_string(concurrency) +
         " rate=" + (request_rate > 0 ? rate : "inf");
  }
  return s + " ctx=" + std::to_string(context_len) + " s" + std::to_string(sample) + " @" +
         p.models[model_set].name;
}

}  // namespace accel
