// The field lists of records.h and the JSON/CSV conversions built on them. Adding a field means
// one line here plus a schema migration in schema.cpp; the SQL, CSV and JSON follow.
#include "results/records.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <deque>
#include <random>
#include <stdexcept>

namespace accel::results {

namespace {

[[noreturn]] void bad_value(const char* field, const std::string& why) {
  throw std::runtime_error(std::string("field '") + field + "': " + why);
}

template <class T>
const T& want(const Value& v, const char* field) {
  if (const T* p = std::get_if<T>(&v)) return *p;
  bad_value(field, "unexpected type or NULL");
}

nlohmann::json parse_json(const Value& v, const char* field) {
  const std::string& s = want<std::string>(v, field);
  try {
    return nlohmann::json::parse(s);
  } catch (const std::exception& e) {
    bad_value(field, std::string("invalid JSON: ") + e.what());
  }
}

template <class R>
Field<R> text(const char* name, std::string R::*m) {
  return {name, Kind::Text, false, [m](const R& r) -> Value { return r.*m; },
          [m, name](R& r, const Value& v) { r.*m = want<std::string>(v, name); }};
}
template <class R>
Field<R> opt_text(const char* name, std::optional<std::string> R::*m) {
  return {name, Kind::Text, true,
          [m](const R& r) -> Value { return r.*m ? Value(*(r.*m)) : Value(); },
          [m, name](R& r, const Value& v) {
            if (std::holds_alternative<std::monostate>(v))
              r.*m = std::nullopt;
            else
              r.*m = want<std::string>(v, name);
          }};
}
template <class R>
Field<R> integer(const char* name, int64_t R::*m) {
  return {name, Kind::Int, false, [m](const R& r) -> Value { return r.*m; },
          [m, name](R& r, const Value& v) { r.*m = want<int64_t>(v, name); }};
}
template <class R>
Field<R> opt_integer(const char* name, std::optional<int64_t> R::*m) {
  return {name, Kind::Int, true,
          [m](const R& r) -> Value { return r.*m ? Value(*(r.*m)) : Value(); },
          [m, name](R& r, const Value& v) {
            if (std::holds_alternative<std::monostate>(v))
              r.*m = std::nullopt;
            else
              r.*m = want<int64_t>(v, name);
          }};
}
template <class R>
Field<R> boolean(const char* name, bool R::*m) {
  return {name, Kind::Int, false, [m](const R& r) -> Value { return int64_t(r.*m ? 1 : 0); },
          [m, name](R& r, const Value& v) { r.*m = want<int64_t>(v, name) != 0; }};
}
template <class R>
Field<R> opt_real(const char* name, std::optional<double> R::*m) {
  return {name, Kind::Real, true,
          [m](const R& r) -> Value { return r.*m ? Value(*(r.*m)) : Value(); },
          [m, name](R& r, const Value& v) {
            if (std::holds_alternative<std::monostate>(v))
              r.*m = std::nullopt;
            else if (const int64_t* i = std::get_if<int64_t>(&v))
              r.*m = double(*i);
            else
              r.*m = want<double>(v, name);
          }};
}
template <class R>
Field<R> json(const char* name, nlohmann::json R::*m) {
  return {name, Kind::Json, false, [m](const R& r) -> Value { return (r.*m).dump(); },
          [m, name](R& r, const Value& v) { r.*m = parse_json(v, name); }};
}
template <class R, class T>
Field<R> json_of(const char* name, T R::*m) {
  return {name, Kind::Json, false, [m](const R& r) -> Value { return nlohmann::json(r.*m).dump(); },
          [m, name](R& r, const Value& v) {
            try {
              r.*m = parse_json(v, name).template get<T>();
            } catch (const nlohmann::json::exception& e) {
              bad_value(name, e.what());
            }
          }};
}

// Model columns: target_* are required, draft_* are NULL together when there is no draft.
std::vector<Field<TrialRecord>> model_fields(const char* prefix, bool draft) {
  using R = TrialRecord;
  auto ref = [draft](R& r) -> ModelRef& {
    if (!draft) return r.target;
    if (!r.draft) r.draft = ModelRef{};
    return *r.draft;
  };
  auto cref = [draft](const R& r) -> const ModelRef* {
    return draft ? (r.draft ? &*r.draft : nullptr) : &r.target;
  };
  std::vector<Field<R>> out;
  auto name = [prefix](const char* s) {
    static std::deque<std::string> keep;  // names outlive the static lists; deque keeps them put
    keep.push_back(std::string(prefix) + s);
    return keep.back().c_str();
  };
  auto add_text = [&](const char* suffix, std::string ModelRef::*m) {
    const char* n = name(suffix);
    out.push_back({n, Kind::Text, draft,
                   [cref, m](const R& r) -> Value {
                     const ModelRef* p = cref(r);
                     return p ? Value(p->*m) : Value();
                   },
                   [ref, m, n](R& r, const Value& v) {
                     if (std::holds_alternative<std::monostate>(v)) return;  // no draft
                     ref(r).*m = want<std::string>(v, n);
                   }});
  };
  add_text("path", &ModelRef::path);
  add_text("sha256", &ModelRef::sha256);
  add_text("arch", &ModelRef::arch);
  const char* n = name("n_params");
  out.push_back({n, Kind::Int, draft,
                 [cref](const R& r) -> Value {
                   const ModelRef* p = cref(r);
                   return p ? Value(p->n_params) : Value();
                 },
                 [ref, n](R& r, const Value& v) {
                   if (std::holds_alternative<std::monostate>(v)) return;
                   ref(r).n_params = want<int64_t>(v, n);
                 }});
  const char* nc = name("config");
  out.push_back({nc, Kind::Json, draft,
                 [cref](const R& r) -> Value {
                   const ModelRef* p = cref(r);
                   return p ? Value(p->config.dump()) : Value();
                 },
                 [ref, nc](R& r, const Value& v) {
                   if (std::holds_alternative<std::monostate>(v)) return;
                   ref(r).config = parse_json(v, nc);
                 }});
  return out;
}

}  // namespace

TrialRecord make_failed(TrialRecord r, std::string error) {
  r.error = std::move(error);
  r.ttft_s.reset();
  r.phases.clear();
  r.decode_tokens = 0;
  r.decode_tok_s.reset();
  r.kept_tokens = 0;
  r.peak_rss_bytes = 0;
  r.kv_bytes = 0;
  r.output_tokens.clear();
  r.prediction.reset();
  r.scores.clear();
  r.stats = nlohmann::json::object();
  r.other_cpu_s.reset();
  r.loadavg_1m.reset();
  r.backoffs_in_region.reset();
  return r;
}

std::string code_state(const RunInfo& r) {
  if (!r.git_dirty) return r.git_commit;
  if (r.git_diff_sha256.empty()) return r.git_commit + "-dirty";
  return r.git_commit + "-dirty-" + r.git_diff_sha256.substr(0, 12);
}

const std::vector<Field<RunInfo>>& run_fields() {
  using R = RunInfo;
  static const std::vector<Field<R>> f = {
      text("run_id", &R::run_id),
      text("started_at", &R::started_at),
      opt_text("ended_at", &R::ended_at),
      text("git_commit", &R::git_commit),
      boolean("git_dirty", &R::git_dirty),
      text("build_type", &R::build_type),
      text("compiler", &R::compiler),
      text("cpu_model", &R::cpu_model),
      text("cpu_flags", &R::cpu_flags),
      integer("threads", &R::threads),
      json("seeds", &R::seeds),
      json("plan", &R::plan),
      json("config", &R::config),
      text("hostname", &R::hostname),
      text("accelbench_version", &R::accelbench_version),
      opt_real("fma_peak_gflops", &R::fma_peak_gflops),
      json("inputs", &R::inputs),
      json("suite", &R::suite),
      text("git_diff_sha256", &R::git_diff_sha256),
  };
  return f;
}

const std::vector<Field<TrialRecord>>& trial_fields() {
  using R = TrialRecord;
  static const std::vector<Field<R>> f = [] {
    std::vector<Field<R>> v = {
        text("case_key", &R::case_key), integer("trial_index", &R::trial_index),
        text("run_id", &R::run_id),     text("method", &R::method),
        json("params", &R::params),
    };
    for (auto& m : model_fields("target_", false)) v.push_back(std::move(m));
    for (auto& m : model_fields("draft_", true)) v.push_back(std::move(m));
    for (auto& m : std::vector<Field<R>>{
             integer("context_len", &R::context_len),
             text("workload", &R::workload),
             text("workload_version", &R::workload_version),
             text("sample_id", &R::sample_id),
             opt_real("ttft_s", &R::ttft_s),
             json_of("phases", &R::phases),
             integer("decode_tokens", &R::decode_tokens),
             opt_real("decode_tok_s", &R::decode_tok_s),
             integer("prompt_tokens", &R::prompt_tokens),
             integer("kept_tokens", &R::kept_tokens),
             integer("peak_rss_bytes", &R::peak_rss_bytes),
             integer("kv_bytes", &R::kv_bytes),
             json_of("output_tokens", &R::output_tokens),
             json_of("scores", &R::scores),
             json("stats", &R::stats),
             opt_text("error", &R::error),
             text("recorded_at", &R::recorded_at),
             text("sample_hash", &R::sample_hash),
             text("kv_dtype", &R::kv_dtype),
             json("inputs", &R::inputs),
             opt_text("reference_method", &R::reference_method),
             opt_real("other_cpu_s", &R::other_cpu_s),
             opt_real("loadavg_1m", &R::loadavg_1m),
             opt_text("prediction", &R::prediction),
             json("sample_reference", &R::sample_reference),
             text("sample_task", &R::sample_task),
             text("config_key", &R::config_key),
             opt_integer("backoffs_in_region", &R::backoffs_in_region),
         })
      v.push_back(std::move(m));
    return v;
  }();
  return f;
}

std::string value_text(const Value& v) {
  if (const int64_t* i = std::get_if<int64_t>(&v)) return std::to_string(*i);
  if (const double* d = std::get_if<double>(&v)) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.17g", *d);
    return buf;
  }
  if (const std::string* s = std::get_if<std::string>(&v)) return *s;
  return "";
}

namespace {
template <class R>
nlohmann::json to_json_impl(const R& r, const std::vector<Field<R>>& fields) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& f : fields) {
    const Value v = f.get(r);
    if (std::holds_alternative<std::monostate>(v))
      j[f.name] = nullptr;
    else if (f.kind == Kind::Json)
      j[f.name] = nlohmann::json::parse(std::get<std::string>(v));
    else
      std::visit(
          [&](const auto& x) {
            if constexpr (!std::is_same_v<std::decay_t<decltype(x)>, std::monostate>) j[f.name] = x;
          },
          v);
  }
  return j;
}

template <class R>
R from_json_impl(const nlohmann::json& j, const std::vector<Field<R>>& fields) {
  if (!j.is_object()) throw std::runtime_error("expected a JSON object");
  R r{};
  for (const auto& f : fields) {
    auto it = j.find(f.name);
    if (it == j.end() || it->is_null()) {
      if (!f.nullable) throw std::runtime_error(std::string("missing field '") + f.name + "'");
      f.set(r, Value{});
      continue;
    }
    switch (f.kind) {
      case Kind::Int:
        if (!it->is_number_integer() && !it->is_boolean())
          throw std::runtime_error(std::string("field '") + f.name + "': expected an integer");
        f.set(r, Value(it->is_boolean() ? int64_t(it->template get<bool>())
                                        : it->template get<int64_t>()));
        break;
      case Kind::Real:
        if (!it->is_number())
          throw std::runtime_error(std::string("field '") + f.name + "': expected a number");
        f.set(r, Value(it->template get<double>()));
        break;
      case Kind::Text:
        if (!it->is_string())
          throw std::runtime_error(std::string("field '") + f.name + "': expected a string");
        f.set(r, Value(it->template get<std::string>()));
        break;
      case Kind::Json:
        f.set(r, Value(it->dump()));
        break;
    }
  }
  return r;
}
}  // namespace

template <>
nlohmann::json to_json(const RunInfo& r) {
  return to_json_impl(r, run_fields());
}
template <>
nlohmann::json to_json(const TrialRecord& r) {
  return to_json_impl(r, trial_fields());
}
RunInfo run_from_json(const nlohmann::json& j) {
  return from_json_impl(j, run_fields());
}
TrialRecord trial_from_json(const nlohmann::json& j) {
  return from_json_impl(j, trial_fields());
}

std::string csv_quote(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string o = "\"";
  for (char c : s) {
    if (c == '"') o += '"';
    o += c;
  }
  return o + "\"";
}

namespace {
template <class R>
std::string header_impl(const std::vector<Field<R>>& fields) {
  std::string o;
  for (const auto& f : fields) {
    if (!o.empty()) o += ',';
    o += f.name;
  }
  return o;
}
template <class R>
std::string row_impl(const R& r, const std::vector<Field<R>>& fields) {
  std::string o;
  bool first = true;
  for (const auto& f : fields) {
    if (!first) o += ',';
    first = false;
    o += csv_quote(value_text(f.get(r)));
  }
  return o;
}
}  // namespace

template <>
std::string csv_header<RunInfo>() {
  return header_impl(run_fields());
}
template <>
std::string csv_header<TrialRecord>() {
  return header_impl(trial_fields());
}
template <>
std::string csv_row(const RunInfo& r) {
  return row_impl(r, run_fields());
}
template <>
std::string csv_row(const TrialRecord& r) {
  return row_impl(r, trial_fields());
}

std::string utc_now() {
  using namespace std::chrono;
  const auto now = system_clock::now();
  const auto ms = duration_cast<milliseconds>(now.time_since_epoch()).count() % 1000;
  const std::time_t t = system_clock::to_time_t(now);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, int(ms));
  return buf;
}

std::string new_run_id() {
  std::random_device rd;
  char buf[40];
  const uint64_t hi = (uint64_t(rd()) << 32) | rd(), lo = (uint64_t(rd()) << 32) | rd();
  std::snprintf(buf, sizeof buf, "%016llx%016llx", (unsigned long long)hi, (unsigned long long)lo);
  return buf;
}

}  // namespace accel::results
