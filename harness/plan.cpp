// Plan parsing, validation and expansion (see plan.h). Every error names the source file and the
// JSON path of the offending field.
#include "harness/plan.h"

#include <filesystem>
#include <fstream>
#include <set>

#include "methods/method.h"
#include "models/synthetic.h"

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

}  // namespace

nlohmann::json default_plan_json() {
  return {
      {"name", "quick"},
      {"models", {{{"name", "tiny"}, {"family", "tiny"}}}},
      {"methods",
       {{{"name", "baseline"}},
        {{"name", "specprefill"}, {"params", {{"keep", 0.2}, {"threshold", 0}}}}}},
      {"context_lengths", {512, 1024, 2048, 4000}},
      {"workload", {{"kind", "synthetic"}, {"samples", 2}}},
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
      j,
      {"name", "models", "methods", "context_lengths", "workload", "warmup", "trials",
       "decode_tokens", "agreement_steps", "threads", "prefill_chunk", "seed", "description"},
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
    const auto& m = j["models"][i];
    const std::string f = "models[" + std::to_string(i) + "]";
    if (!m.is_object()) fail(src, f, "must be an object");
    check_keys(m, {"name", "family", "seed", "dtype", "target", "draft", "draft_role"}, src, f);
    ModelSetSpec s;
    if (!m.contains("name") || !m["name"].is_string()) fail(src, f + ".name", "required string");
    s.name = m["name"];
    if (!names.insert(s.name).second)
      fail(src, f + ".name", "duplicate model set '" + s.name + "'");
    if (m.contains("family")) {
      if (!m["family"].is_string()) fail(src, f + ".family", "must be a string");
      s.family = m["family"];
      try {
        find_synthetic_family(s.family);
      } catch (const std::exception& e) {
        fail(src, f + ".family", e.what());
      }
      if (m.contains("seed")) {
        if (!m["seed"].is_number_integer() || m["seed"].get<int64_t>() < 0)
          fail(src, f + ".seed", "must be a non-negative integer");
        s.family_seed = m["seed"].get<uint64_t>();
      }
      if (m.contains("dtype")) {
        if (!m["dtype"].is_string()) fail(src, f + ".dtype", "must be a string");
        s.dtype = m["dtype"];
        if (s.dtype != "f32" && s.dtype != "f16" && s.dtype != "bf16" && s.dtype != "q8_0" &&
            s.dtype != "q4_0")
          fail(src, f + ".dtype", "'" + s.dtype + "' is not one of f32, f16, bf16, q8_0, q4_0");
      }
      if (m.contains("draft_role")) {
        if (!m["draft_role"].is_string()) fail(src, f + ".draft_role", "must be a string");
        s.draft_role = m["draft_role"];
      }
      const auto dir = std::filesystem::path(models_dir) /
                       (s.family + "-" + s.dtype + "-s" + std::to_string(s.family_seed));
      s.target = (dir / "target.gguf").string();
      bool has_role = false;
      for (const auto& mem : find_synthetic_family(s.family).members)
        has_role = has_role || mem.role == s.draft_role;
      if (!has_role) fail(src, f + ".draft_role", "family has no member '" + s.draft_role + "'");
      s.draft = (dir / (s.draft_role + ".gguf")).string();
      if (m.contains("target") || m.contains("draft"))
        fail(src, f, "give either 'family' or 'target'/'draft' paths, not both");
    } else {
      if (!m.contains("target") || !m["target"].is_string())
        fail(src, f + ".target", "required (a GGUF path) unless 'family' is given");
      s.target = m["target"];
      if (m.contains("draft")) {
        if (!m["draft"].is_string()) fail(src, f + ".draft", "must be a path string");
        s.draft = m["draft"];
      }
    }
    p.models.push_back(s);
  }
  if (!j.contains("methods") || !j["methods"].is_array() || j["methods"].empty())
    fail(src, "methods", "must be a non-empty array");
  for (size_t i = 0; i < j["methods"].size(); ++i) {
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
  if (j.contains("workload")) {
    const auto& w = j["workload"];
    if (!w.is_object()) fail(src, "workload", "must be an object");
    check_keys(w, {"kind", "samples"}, src, "workload");
    if (w.contains("kind")) {
      if (!w["kind"].is_string() || w["kind"] != "synthetic")
        fail(src, "workload.kind", "only 'synthetic' is available (suites are not built yet)");
    }
    p.workload.samples = get_int(w, "samples", 1, 1, 100000, src, "workload.samples");
  }
  p.warmup = get_int(j, "warmup", 1, 0, 1000, src, "warmup");
  p.trials = get_int(j, "trials", 3, 1, 100000, src, "trials");
  p.decode_tokens = get_int(j, "decode_tokens", 16, 1, 1 << 20, src, "decode_tokens");
  p.agreement_steps = get_int(j, "agreement_steps", 16, 0, 1024, src, "agreement_steps");
  p.threads = get_int(j, "threads", 0, 0, 4096, src, "threads");
  p.prefill_chunk = size_t(get_int(j, "prefill_chunk", 512, 1, 1 << 20, src, "prefill_chunk"));
  if (j.contains("seed")) {
    if (!j["seed"].is_number_integer() || j["seed"].get<int64_t>() < 0)
      fail(src, "seed", "must be a non-negative integer");
    p.seed = j["seed"].get<uint64_t>();
  }
  if (j.contains("description") && !j["description"].is_string())
    fail(src, "description", "must be a string");
  // Validate every parameter combination now, so a bad sweep value fails before anything runs.
  for (size_t i = 0; i < p.methods.size(); ++i) {
    try {
      Plan one = p;
      one.methods = {p.methods[i]};
      expand_plan(one);
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
  } catch (const nlohmann::json::parse_error& e) {
    throw PlanError("[plan] " + path + ": not valid JSON: " + e.what());
  }
  return parse_plan(j, path, models_dir);
}

namespace {

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

}  // namespace

std::vector<Case> expand_plan(const Plan& p) {
  std::vector<Case> cases;
  for (size_t ms = 0; ms < p.models.size(); ++ms)
    for (const auto& m : p.methods) {
      const Method& method = find_method(m.name);
      for (const auto& combo : param_combinations(m.params)) {
        const nlohmann::json resolved = resolve_params(method, combo);
        for (int ctx : p.context_lengths)
          for (int s = 0; s < p.workload.samples; ++s)
            cases.push_back(Case{ms, m.name, resolved, ctx, s});
      }
    }
  return cases;
}

nlohmann::json Case::config(const Plan& p) const {
  return {{"method", method},
          {"params", params},
          {"context_len", context_len},
          {"workload", p.workload.kind},
          {"sample", sample},
          {"seed", p.seed},
          {"decode_tokens", p.decode_tokens},
          {"prefill_chunk", p.prefill_chunk},
          {"threads", p.threads}};
}

std::string Case::label(const Plan& p) const {
  std::string s = method;
  for (auto& [k, v] : params.items()) s += " " + k + "=" + v.dump();
  return s + " ctx=" + std::to_string(context_len) + " s" + std::to_string(sample) + " @" +
         p.models[model_set].name;
}

}  // namespace accel
