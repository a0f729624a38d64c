// run_plan (see runner.h): keys, the store, the loop over cases, progress and interruption. One
// case's work is in case_runner.*, the inputs by role in model_inputs.*.
#include "harness/runner.h"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>

#include "harness/case_runner.h"
#include "harness/endpoint_backend.h"
#include "harness/environment.h"
#include "harness/file_hash.h"
#include "harness/load_runner.h"
#include "harness/model_inputs.h"
#include "kernels/threading.h"
#include "methods/method.h"
#include "results/result_store.h"
#include "suites/suite.h"

namespace accel {

namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

std::atomic<int> g_interrupts{0};
void on_sigint(int) {
  if (g_interrupts.fetch_add(1) >= 1) {  // second Ctrl-C: stop now
    std::signal(SIGINT, SIG_DFL);
    std::raise(SIGINT);
  }
}

std::string fmt_duration(double s) {
  const int t = int(s + 0.5);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%02d:%02d:%02d", t / 3600, t / 60 % 60, t % 60);
  return buf;
}

// The digests of the inputs a case's method uses, by role ("" when a file is missing: such a case
// fails when it runs, naming the file).
std::map<std::string, std::string> case_digests(const Plan& p, const Case& c,
                                                const SetDigests& digests) {
  std::map<std::string, std::string> out;
  for (const InputSpec& in : plan_method(p, c.method).inputs()) {
    const auto& set = digests[c.model_set];
    const auto it = set.find(in.role);
    out[in.role] = it == set.end() ? "" : it->second;
  }
  return out;
}

nlohmann::json suite_declaration(const Plan& plan) {
  const Suite& s = find_suite(plan.suite.name);
  nlohmann::json metrics = nlohmann::json::array();
  for (const MetricSpec& m : s.metrics())
    metrics.push_back({{"name", m.name},
                       {"higher_is_better", m.higher_is_better},
                       {"aggregation", aggregation_name(m.aggregation)},
                       {"help", m.help}});
  nlohmann::json out = {
      {"name", s.name()},
      {"version", s.version()},
      {"params", plan.suite.params},
      {"samples", plan.suite.samples},
      {"reference", {{"method", plan.reference.method}, {"params", plan.reference.params}}},
      {"metrics", metrics}};
  if (const auto summary = s.task_summary()) out["task_summary"] = to_json(*summary);
  return out;
}

results::RunInfo make_run_info(const Plan& plan, const RunOptions& opt, const Environment& env,
                               size_t n_cases, const SetDigests& digests) {
  results::RunInfo info;
  info.git_commit = env.git_commit;
  info.git_dirty = env.git_dirty;
  info.git_diff_sha256 = env.git_diff_sha256;
  info.build_type = env.build_type;
  info.compiler = env.compiler + " | " + env.compile_flags;
  info.cpu_model = env.cpu_model;
  info.cpu_flags = env.cpu_flags;
  info.threads = env.threads;
  info.seeds = {{"plan", plan.seed}};
  for (const auto& s : plan.models)
    if (!s.family.empty()) info.seeds["family:" + s.name] = s.family_seed;
  info.plan = plan.source;
  info.config = {{"db", opt.db_path},           {"shard", opt.shard.text()},
                 {"threads", env.threads},      {"cases", n_cases},
                 {"kv_dtypes", plan.kv_dtypes}, {"prefill_chunk", plan.prefill_chunk},
                 {"timings", plan.timings},     {"reuse_timings", opt.reuse_timings},
                 {"environment", env.to_json()}};
  info.hostname = env.hostname;
  info.accelbench_version = env.accelbench_version;
  info.fma_peak_gflops = run_fma_peak_gflops(env.threads);
  info.inputs = describe_inputs(plan, digests);
  info.suite = suite_declaration(plan);
  return info;
}

// One progress line per case on a terminal, else at most one every 10 s (and the last).
class Progress {
 public:
  Progress(std::ostream& log, size_t todo) : log_(log), todo_(todo), tty_(isatty(2)) {}
  void case_done(const std::string& label) {
    ++finished_;
    const double elapsed = since(start_);
    const double eta = elapsed / double(finished_) * double(todo_ - finished_);
    if (!tty_ && since(last_) <= 10 && finished_ != todo_) return;
    char line[512];
    std::snprintf(line, sizeof line, "[%zu/%zu] %s | elapsed %s | ETA %s", finished_, todo_,
                  label.c_str(), fmt_duration(elapsed).c_str(), fmt_duration(eta).c_str());
    log_ << (tty_ ? "\r\033[K" : "") << line << (tty_ ? "" : "\n") << std::flush;
    last_ = Clock::now();
  }
  void failure(const std::string& label, const std::string& what) {
    log_ << (tty_ ? "\n" : "") << "case failed: " << label << ": " << what << "\n";
  }
  ~Progress() {
    if (tty_) log_ << "\n";
  }

 private:
  std::ostream& log_;
  size_t todo_, finished_ = 0;
  bool tty_;
  Clock::time_point start_ = Clock::now(), last_ = Clock::now() - std::chrono::seconds(60);
};

// A case of this run: its key here and whether the store already has it.
struct KeyedCase {
  Case c;
  std::string key, base_key;  // stored under key; base_key is its config_key
  ResumeState state;
};

void print_dry_run(const Plan& plan, const std::vector<KeyedCase>& cases, std::ostream& log) {
  for (const KeyedCase& k : cases) {
    log << (k.state.done ? "done  " : "todo  ") << k.c.label(plan) << "  " << k.key.substr(0, 12);
    if (!k.state.remeasure_why.empty()) log << "  (re-measure: " << k.state.remeasure_why << ")";
    log << "\n";
  }
}

// Why finished timing cases run again, one line per difference; nothing when none does.
void print_remeasured(const RunSummary& sum, std::ostream& log) {
  for (const auto& [why, n] : sum.remeasured)
    log << n << " timing case" << (n == 1 ? "" : "s") << " re-measured: " << why
        << " (run --reuse-timings to keep the earlier timings)\n";
}

// This run's conditions and those of the store's earlier runs.
ResumeRule resume_rule(const results::ResultStore* store, const Plan& plan, const Environment& env,
                       const RunOptions& opt) {
  std::set<std::string> done;
  std::vector<TimingConditions> earlier;
  if (store) {
    done = store->done_cases(plan.trials);
    for (const results::RunInfo& r : store->runs()) earlier.push_back(conditions_of(r));
  }
  results::RunInfo now;
  now.git_commit = env.git_commit;
  now.git_dirty = env.git_dirty;
  now.git_diff_sha256 = env.git_diff_sha256;
  now.cpu_model = env.cpu_model;
  return ResumeRule(std::move(done), conditions_of(now), std::move(earlier), opt.reuse_timings);
}

// Loads the models a method uses now, so loading counts as setup rather than as the case's
// bookkeeping. A model that fails to load is left for the case, which records the failure.
void preload_models(const Method& m, LoadedModelSet& set) {
  for (const InputSpec& in : m.inputs()) {
    if (in.kind != InputSpec::Kind::Model) continue;
    try {
      set.model(in.role);
    } catch (const std::exception&) {
    }
  }
}

// Records a case's failure (interrupted cases are dropped, never recorded).
void record_failure(const CaseInput& in, const results::TrialRecord& identity, const char* what,
                    results::ResultStore& store, RunSummary& sum, Progress& progress) {
  if (in.interrupts) return;
  store.record_failure(identity, what);
  ++sum.failed;
  progress.failure(in.c.label(in.plan), what);
  progress.case_done(in.c.label(in.plan));
}

// Runs one case and records its trials, or its failure, in one transaction; an interrupted case is
// dropped whole.
void run_and_record(const CaseInput& in, const KeyedCase& k, results::ResultStore& store,
                    CaseTimes& times, RunSummary& sum, Progress& progress) {
  const results::TrialRecord identity = case_identity(in, k.key, k.base_key, sum.run_id);
  if (in.c.concurrency > 0) {  // a load-sweep point: its requests are its trials
    const auto t0 = Clock::now();
    LoadCaseOutcome o;
    try {
      o = run_load_case(in.plan, in.c, identity, in.models.suite_context().n_vocab, store);
    } catch (const std::exception& e) {
      o.error = e.what();
      store.record_failure(identity, o.error);
    }
    times.measured_s += since(t0);
    if (o.error.empty()) {
      ++sum.completed;
    } else {
      ++sum.failed;
      progress.failure(in.c.label(in.plan), o.error);
    }
    progress.case_done(in.c.label(in.plan));
    return;
  }
  try {
    const auto trials = run_case(in, identity, times);
    if (in.interrupts) return;
    store.record_case(trials);
    ++sum.completed;
  } catch (const std::exception& e) {
    record_failure(in, identity, e.what(), store, sum, progress);
    return;
  }
  progress.case_done(in.c.label(in.plan));
}

// One case of an interleaved group, from its preparation to its recording.
struct ActiveCase {
  CaseInput in;
  results::TrialRecord identity;
  CaseTimes times;
  std::optional<PreparedCase> prepared;  // empty after a failure
};

// Plan::interleave_trials: the group's cases (one model set, none done) prepared in plan order,
// then measured in rounds of one trial each; each case is recorded, in one transaction, after the
// last round. A failing case is recorded as failed and leaves the rotation; an interrupt drops
// every case of the group.
void run_interleaved(const Plan& plan, const std::vector<const KeyedCase*>& group,
                     LoadedModelSet& loaded, ReferenceCache& references,
                     results::ResultStore& store, RunSummary& sum, Progress& progress) {
  const auto t0 = Clock::now();
  std::vector<ActiveCase> active;
  active.reserve(group.size());
  for (const KeyedCase* k : group) {
    preload_models(plan_method(plan, k->c.method), loaded);
    CaseInput in{plan, k->c, loaded, references, g_interrupts};
    active.push_back({in, case_identity(in, k->key, k->base_key, sum.run_id), {}, std::nullopt});
  }
  auto attempt = [&](ActiveCase& a, auto&& step) {
    try {
      step();
    } catch (const std::exception& e) {
      a.prepared.reset();
      record_failure(a.in, a.identity, e.what(), store, sum, progress);
    }
  };
  for (ActiveCase& a : active) {
    if (g_interrupts) return;
    attempt(a, [&] { a.prepared = prepare_case(a.in, a.identity, a.times); });
  }
  for (int t = 0; t < plan.trials; ++t)
    for (ActiveCase& a : active) {
      if (g_interrupts) return;
      if (a.prepared) attempt(a, [&] { measure_next_trial(a.in, *a.prepared, a.times); });
    }
  double accounted = 0;
  for (ActiveCase& a : active) {
    if (g_interrupts) return;
    if (a.prepared)
      attempt(a, [&] {
        store.record_case(finish_case(a.in, std::move(*a.prepared)));
        ++sum.completed;
        progress.case_done(a.in.c.label(plan));
      });
    sum.measured_s += a.times.measured_s;
    sum.setup_s += a.times.setup_s;
    accounted += a.times.setup_s + a.times.warmup_s + a.times.measured_s;
  }
  sum.overhead_s += since(t0) - accounted;
}

}  // namespace

RunSummary run_plan(const Plan& given, const RunOptions& opt, std::ostream& log) {
  RunSummary sum;
  const auto t_setup = Clock::now();
  // A --threads override is part of every case's key: timings at another thread count are other
  // cases, never "already done".
  Plan plan = given;
  if (opt.threads > 0) plan.threads = opt.threads;
  if (plan.threads > 0) set_num_threads(plan.threads);
  const std::vector<Case> all_cases = expand_plan(plan);
  // Captured after the thread count is set: the run records the count its trials use.
  Environment env = opt.environment ? *opt.environment : capture_environment();
  env.threads = num_threads();

  for (const auto& s : plan.models) {
    if (opt.dry_run) continue;
    ensure_family(s, log);
  }
  const std::filesystem::path db(opt.db_path);
  std::unique_ptr<results::ResultStore> store;
  if (!opt.dry_run) {
    if (db.has_parent_path()) std::filesystem::create_directories(db.parent_path());
    store = std::make_unique<results::ResultStore>(results::ResultStore::open(opt.db_path));
  } else if (std::filesystem::exists(db)) {
    store =
        std::make_unique<results::ResultStore>(results::ResultStore::open_readonly(opt.db_path));
  }
  const ResumeRule resume = resume_rule(store.get(), plan, env, opt);
  const SetDigests digests = digest_inputs(plan, store.get());
  for (size_t i = 0; i < plan.models.size() && !opt.dry_run; ++i)
    if (!digests[i].count("target"))
      throw PlanError("[plan] models[" + std::to_string(i) + "].target: no such file '" +
                      plan.models[i].path("target") + "'");
  std::vector<KeyedCase> cases;  // this shard's (every case when not sharded), in plan order
  const bool timing = !quality_only(plan);
  size_t todo = 0;
  for (const Case& c : all_cases) {
    const std::string base = case_key(plan, c, case_digests(plan, c, digests));
    if (!opt.shard.contains(base)) continue;
    cases.push_back({c, resume.key(base, timing), base, resume.state(base, timing)});
    const ResumeState& st = cases.back().state;
    todo += st.done ? 0 : 1;
    if (!st.remeasure_why.empty()) ++sum.remeasured[st.remeasure_why];
  }
  sum.cases = cases.size();
  if (opt.dry_run) {
    print_dry_run(plan, cases, log);
    print_remeasured(sum, log);
    return sum;
  }
  print_remeasured(sum, log);
  results::RunInfo info = make_run_info(plan, opt, env, cases.size(), digests);
  if (plan.backend) {
    // The server's answer to /v1/models, its version and how prompts are sized, stored with the
    // run; an unreachable server or a tokenizer that disagrees stops the run before any case.
    LoadedModelSet first(plan.models[0], digests[0]);
    info.config["backend"] = plan.backend->provenance(first.suite_context().tokenizer);
  }
  sum.run_id = store->begin_run(info);
  sum.setup_s += since(t_setup);

  g_interrupts = 0;
  auto old_handler = std::signal(SIGINT, on_sigint);
  {
    Progress progress(log, todo);
    std::unique_ptr<LoadedModelSet> loaded;  // one model set in memory at a time
    size_t loaded_set = plan.models.size();  // its index in plan.models
    ReferenceCache references;
    for (size_t ci = 0; ci < cases.size() && !g_interrupts; ++ci) {
      const Case& c = cases[ci].c;
      if (cases[ci].state.done) {
        ++sum.skipped;
        continue;
      }
      const auto t_case = Clock::now();
      CaseTimes times;
      const auto t_load = Clock::now();
      if (loaded_set != c.model_set) {
        loaded.reset();  // free the previous set's models before loading the next
        loaded = std::make_unique<LoadedModelSet>(plan.models[c.model_set], digests[c.model_set]);
        loaded_set = c.model_set;
        references.clear();
      }
      if (plan.interleave_trials) {
        sum.setup_s += since(t_load);
        // Cases are in model-set order: the group is this set's cases from here on.
        std::vector<const KeyedCase*> group;
        for (; ci < cases.size() && cases[ci].c.model_set == c.model_set; ++ci)
          cases[ci].state.done ? void(++sum.skipped) : group.push_back(&cases[ci]);
        --ci;
        run_interleaved(plan, group, *loaded, references, *store, sum, progress);
        continue;
      }
      preload_models(plan_method(plan, c.method), *loaded);
      times.setup_s += since(t_load);
      run_and_record({plan, c, *loaded, references, g_interrupts}, cases[ci], *store, times, sum,
                     progress);
      if (g_interrupts) break;  // the case in flight is dropped, never half-recorded
      sum.measured_s += times.measured_s;
      sum.setup_s += times.setup_s;
      // Bookkeeping = the case's wall time less setup, warm-ups and measured trials.
      sum.overhead_s += since(t_case) - times.setup_s - times.warmup_s - times.measured_s;
    }
  }
  sum.interrupted = g_interrupts > 0;
  store->end_run(sum.run_id);
  std::signal(SIGINT, old_handler);
  return sum;
}

}  // namespace accel
