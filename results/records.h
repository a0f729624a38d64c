// The records the store holds — RunInfo (one per `accelbench run`) and TrialRecord (one per
// measured trial) — and the single field list per record that drives the SQL column list, the CSV
// header and the JSON keys (STYLE.md item 9). No SQLite here; result_store.cpp does the SQL.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace accel::results {

// A model file as used by a case: enough to tell two files apart (sha256) and to label reports.
struct ModelRef {
  std::string path;
  std::string sha256;
  std::string arch;
  int64_t n_params = 0;
  // Schema v3: hyper-parameters as the engine read them (n_layer, n_embd, n_head, n_head_kv,
  // head_dim, n_ff, n_vocab, n_expert, n_expert_used, n_ff_expert) and, for synthetic models, the
  // family name ("synthetic_family"; "trained_family" for a family trained here, e.g. capable), so
  // reports can compute analytic FLOPs and label random-weight models without opening the file.
  // {} for rows written before v3; rows written before this distinction call capable synthetic.
  nlohmann::json config = nlohmann::json::object();
  bool operator==(const ModelRef&) const = default;
};

// Provenance of one run. `run_id` is a random 128-bit hex string (new_run_id()), unique across
// machines so that stores can be merged by run_id.
struct RunInfo {
  std::string run_id;
  std::string started_at;               // ISO-8601 UTC (utc_now())
  std::optional<std::string> ended_at;  // set by end_run; absent for an interrupted run
  std::string git_commit;
  bool git_dirty = false;
  std::string build_type;
  std::string compiler;
  std::string cpu_model;
  std::string cpu_flags;
  int64_t threads = 0;
  nlohmann::json seeds = nlohmann::json::object();
  nlohmann::json plan = nlohmann::json::object();
  nlohmann::json config = nlohmann::json::object();  // resolved configuration
  std::string hostname;
  std::string accelbench_version;
  std::optional<double> fma_peak_gflops;  // schema v2
  // Schema v4: every input of every model set, {set: {role: {path, sha256, arch, n_params,
  // family}}}, and the suite {name, version, params, metrics: [{name, higher_is_better,
  // aggregation}]} so reports can aggregate scores by their declarations without the suite code.
  nlohmann::json inputs = nlohmann::json::object();
  nlohmann::json suite = nlohmann::json::object();
  // Schema v7: sha256 of the tracked files' diff against HEAD when the binary was built from a
  // dirty tree, so two dirty builds of one commit are told apart; "" for a clean build and for
  // runs recorded before v7.
  std::string git_diff_sha256;
  bool operator==(const RunInfo&) const = default;
};

// The code a run's timings were measured with: the commit, or for a dirty build
// "<commit>-dirty-<first 12 hex digits of git_diff_sha256>" ("<commit>-dirty" before v7, when the
// diff was not recorded). Timing case keys and the report tables group trials by this and
// cpu_model: timings of different code or CPUs are never pooled.
std::string code_state(const RunInfo& r);

// One measured trial of one case. A case (case_key) is method × resolved params × model pair ×
// context length × workload sample; its trials are recorded together (ResultStore::record_case).
// A failed trial has `error` set and no timings (make_failed()).
struct TrialRecord {
  std::string case_key;
  // Schema v7: the case without the conditions of its timing (harness/case_keys.h's base key:
  // configuration and input digests), equal across commits and CPUs where case_key of a timing
  // case is not; compare and history match cases by it. Readers and record_case fill it with
  // case_key when empty (rows before v7, whose keys had no conditions).
  std::string config_key;
  int64_t trial_index = 0;
  std::string run_id;
  std::string method;
  nlohmann::json params = nlohmann::json::object();  // resolved method parameters
  ModelRef target;
  std::optional<ModelRef> draft;  // draft / auxiliary model, when the method has one
  int64_t context_len = 0;
  std::string workload;          // the suite's name
  std::string workload_version;  // schema v2: suite version (STYLE.md item 10)
  std::string sample_id;
  // Schema v6: the sample's task within a multi-task suite (RULER's "niah_single_2", LongBench's
  // "hotpotqa", the probes' "uuid"; the suite's sample meta "task"), "" for single-task suites.
  std::string sample_task;
  // Schema v4: sha256 of the sample's prompt ids and reference, so two runs can prove they saw
  // the same data; the target KV cache type; every input by role {role: {path, sha256}}; the
  // method scores were compared against (null when the suite needs none); and how busy the rest
  // of the machine was during the trial (other processes' CPU seconds, 1-minute load average).
  std::string sample_hash;
  std::string kv_dtype = "f32";
  nlohmann::json inputs = nlohmann::json::object();
  std::optional<std::string> reference_method;
  std::optional<double> other_cpu_s;
  std::optional<double> loadavg_1m;
  // Schema v7: the thread pool's back-off periods that overlapped the trial's timed region
  // (kernels/threading.h BackoffWindow); > 0 means part of the timing ran on fewer threads than the
  // run asked for, so tables flag it.
  std::optional<int64_t> backoffs_in_region;  // pool back-off events inside the trial's timed
                                              // regions; null = not recorded (older rows)
  // Schema v5: the scored generation decoded with the target's tokenizer (null when the model has
  // none or the suite scores teacher-forced logits rather than text) and the sample's reference
  // answer(s) as the suite gave them, so each per-sample score can be rechecked from the store.
  std::optional<std::string> prediction;
  nlohmann::json sample_reference = nullptr;
  std::optional<double> ttft_s;
  std::map<std::string, double> phases;  // phase name -> seconds (timing protocol)
  int64_t decode_tokens = 0;
  std::optional<double> decode_tok_s;
  int64_t prompt_tokens = 0;
  int64_t kept_tokens = 0;
  int64_t peak_rss_bytes = 0;
  int64_t kv_bytes = 0;
  std::vector<int32_t> output_tokens;
  std::map<std::string, double> scores;             // suite metrics
  nlohmann::json stats = nlohmann::json::object();  // method statistics
  std::optional<std::string> error;                 // set for a failed trial
  std::string recorded_at;  // ISO-8601 UTC: the runner's end of the trial; else filled by the store

  bool failed() const { return error.has_value(); }
  bool operator==(const TrialRecord&) const = default;
};

// Schema v8: one load-sweep point of an endpoint plan (harness/load_runner.h). Its requests are
// the case's trials (ttft_s; stats.e2e_s, stats.tpot_s, stats.itl_s); the point holds what only
// the whole point has: the wall time from the first request sent to the last answer ended.
struct LoadPointRecord {
  std::string case_key, run_id, method;
  int64_t context_len = 0;
  int64_t concurrency = 1;
  double request_rate = 0;  // Poisson arrivals in requests/s; 0 = all at once
  int64_t requests = 0;
  double wall_s = 0;
  int64_t output_tokens = 0;
  std::string recorded_at;  // filled by the store when empty
  double request_throughput() const { return wall_s > 0 ? double(requests) / wall_s : 0; }
  double output_tok_s() const { return wall_s > 0 ? double(output_tokens) / wall_s : 0; }
  bool operator==(const LoadPointRecord&) const = default;
};

// The key that names a case whatever the commit and CPU of its timings: config_key, or case_key
// for a record that has none (built in memory, or read from an older store).
inline const std::string& case_identity_key(const TrialRecord& t) {
  return t.config_key.empty() ? t.case_key : t.config_key;
}

// `base` (its identity: case, run, method, params, models, workload, sample, trial) turned into a
// failure record: error text set, every timing and output cleared.
TrialRecord make_failed(TrialRecord base, std::string error);

// ---- The field lists ----------------------------------------------------------------------------
// A column value as SQLite sees it. Json fields travel as their compact text dump.
using Value = std::variant<std::monostate, int64_t, double, std::string>;
enum class Kind { Int, Real, Text, Json };

template <class R>
struct Field {
  const char* name;  // SQL column name == CSV header == JSON key
  Kind kind;
  bool nullable;
  std::function<Value(const R&)> get;
  std::function<void(R&, const Value&)> set;  // throws on a malformed value
};

const std::vector<Field<RunInfo>>& run_fields();
const std::vector<Field<TrialRecord>>& trial_fields();

// JSON object keyed by field name (Json fields embedded as JSON, not strings).
template <class R>
nlohmann::json to_json(const R& r);
RunInfo run_from_json(const nlohmann::json& j);
TrialRecord trial_from_json(const nlohmann::json& j);

// CSV: the header line and one data line, RFC 4180 quoting, no trailing newline.
template <class R>
std::string csv_header();
template <class R>
std::string csv_row(const R& r);
std::string csv_quote(const std::string& s);

// Helpers shared with the store and reports.
std::string utc_now();                   // "2025-01-31T12:34:56.789Z"
std::string new_run_id();                // 32 lowercase hex digits from the OS random source
std::string value_text(const Value& v);  // "" for NULL; reals with round-trip precision

}  // namespace accel::results
