// run_plan (see runner.h).
#include "harness/runner.h"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>

#include "harness/environment.h"
#include "harness/file_hash.h"
#include "harness/process_memory.h"
#include "kernels/threading.h"
#include "methods/method.h"
#include "models/model.h"
#include "models/synthetic.h"
#include "models/tokenizer.h"
#include "results/result_store.h"
#include "suites/agreement.h"
#include "suites/synthetic_prompt.h"

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

// The baseline's greedy tokens and per-step logits for one (context, sample): what every other
// method's agreement is measured against.
struct Reference {
  std::vector<int32_t> tokens;
  std::vector<std::vector<float>> logits;
};

struct LoadedSet {
  std::unique_ptr<Model> target, draft;
  results::ModelRef target_ref, draft_ref;
  int32_t bos = -1, eos = -1;
  std::map<std::pair<int, int>, Reference> references;  // (context_len, sample)
};

constexpr const char* kBaseline = "baseline";

results::ModelRef model_ref(const Model& m) {
  nlohmann::json cfg = config_json(m.config());
  if (auto fam = m.file().get_string_opt("accelbench.family")) cfg["synthetic_family"] = *fam;
  return {m.path(), sha256_file(m.path()), m.config().arch_name, int64_t(m.n_params()), cfg};
}

std::string fmt_duration(double s) {
  const int t = int(s + 0.5);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%02d:%02d:%02d", t / 3600, t / 60 % 60, t % 60);
  return buf;
}

}  // namespace

std::string case_key(const Plan& plan, const Case& c, const std::string& target_sha,
                     const std::string& draft_sha) {
  nlohmann::json k = c.config(plan);
  k["target_sha256"] = target_sha;
  if (!draft_sha.empty()) k["draft_sha256"] = draft_sha;
  return sha256_text(k.dump());
}

RunSummary run_plan(const Plan& given, const RunOptions& opt, std::ostream& log) {
  RunSummary sum;
  const auto t_setup = Clock::now();
  // A --threads override is part of every case's key: timings at another thread count are other
  // cases, never "already done".
  Plan plan = given;
  if (opt.threads > 0) plan.threads = opt.threads;
  const int threads = plan.threads;
  if (threads > 0) set_num_threads(threads);
  const std::vector<Case> cases = expand_plan(plan);
  sum.cases = cases.size();

  // Models: make synthetic families on demand, hash every file once.
  std::vector<std::string> target_sha(plan.models.size()), draft_sha(plan.models.size());
  for (size_t i = 0; i < plan.models.size(); ++i) {
    const ModelSetSpec& s = plan.models[i];
    if (!s.family.empty() &&
        (!std::filesystem::exists(s.target) || !std::filesystem::exists(s.draft))) {
      if (opt.dry_run) {
        log << "would make family '" << s.family << "' in "
            << std::filesystem::path(s.target).parent_path().string() << "\n";
        continue;
      }
      log << "making family '" << s.family << "' in "
          << std::filesystem::path(s.target).parent_path().string() << "\n";
      make_synthetic_family(s.family, std::filesystem::path(s.target).parent_path().string(),
                            s.family_seed, *dtype_from_name(s.dtype));
    }
    if (!std::filesystem::exists(s.target))
      throw PlanError("[plan] models[" + std::to_string(i) + "].target: no such file '" + s.target +
                      "'");
    target_sha[i] = sha256_file(s.target);
    if (!s.draft.empty() && std::filesystem::exists(s.draft)) draft_sha[i] = sha256_file(s.draft);
  }

  std::filesystem::path db(opt.db_path);
  if (db.has_parent_path() && !opt.dry_run) std::filesystem::create_directories(db.parent_path());
  std::set<std::string> done;
  if (std::filesystem::exists(db))
    done = results::ResultStore::open_readonly(opt.db_path).done_cases(plan.trials);

  std::vector<std::string> keys;
  for (const Case& c : cases) {
    const bool uses_draft = find_method(c.method).needs_draft();
    keys.push_back(
        case_key(plan, c, target_sha[c.model_set], uses_draft ? draft_sha[c.model_set] : ""));
  }
  if (opt.dry_run) {
    for (size_t i = 0; i < cases.size(); ++i)
      log << (done.count(keys[i]) ? "done  " : "todo  ") << cases[i].label(plan) << "  "
          << keys[i].substr(0, 12) << "\n";
    return sum;
  }

  results::ResultStore store = results::ResultStore::open(opt.db_path);
  const Environment env = capture_environment();
  results::RunInfo info;
  info.git_commit = env.git_commit;
  info.git_dirty = env.git_dirty;
  info.build_type = env.build_type;
  info.compiler = env.compiler + " | " + env.compile_flags;
  info.cpu_model = env.cpu_model;
  info.cpu_flags = env.cpu_flags;
  info.threads = env.threads;
  info.seeds = {{"plan", plan.seed}};
  for (const auto& s : plan.models)
    if (!s.family.empty()) info.seeds["family:" + s.name] = s.family_seed;
  info.plan = plan.source;
  info.config = {{"db", opt.db_path},
                 {"threads", env.threads},
                 {"cases", cases.size()},
                 {"environment", env.to_json()}};
  info.hostname = env.hostname;
  info.accelbench_version = env.accelbench_version;
  sum.run_id = store.begin_run(info);
  sum.setup_s += since(t_setup);

  g_interrupts = 0;
  auto old_handler = std::signal(SIGINT, on_sigint);
  const bool tty = isatty(2);
  const auto t_start = Clock::now();
  auto last_line = Clock::now() - std::chrono::seconds(60);
  size_t todo = 0;
  for (const auto& k : keys) todo += done.count(k) ? 0 : 1;
  size_t finished = 0;
  std::map<size_t, LoadedSet> loaded;

  for (size_t ci = 0; ci < cases.size() && !g_interrupts; ++ci) {
    const Case& c = cases[ci];
    if (done.count(keys[ci])) {
      ++sum.skipped;
      continue;
    }
    const Method& method = find_method(c.method);
    const ModelSetSpec& ms = plan.models[c.model_set];
    results::TrialRecord base;
    base.case_key = keys[ci];
    base.run_id = sum.run_id;
    base.method = c.method;
    base.params = c.params;
    base.context_len = c.context_len;
    base.workload = plan.workload.kind;
    base.workload_version = "1";
    base.sample_id = std::to_string(c.sample);
    base.decode_tokens = plan.decode_tokens;
    double measured_case = 0;
    const auto t_case = Clock::now();
    double setup_case = 0, warmup_case = 0;
    try {
      if (!loaded.count(c.model_set)) {
        const auto t_load = Clock::now();
        loaded.clear();  // one model set in memory at a time
        LoadedSet& L = loaded[c.model_set];
        L.target = Model::load(ms.target);
        L.target_ref = model_ref(*L.target);
        if (!ms.draft.empty() && std::filesystem::exists(ms.draft)) {
          L.draft = Model::load(ms.draft);
          L.draft_ref = model_ref(*L.draft);
        }
        try {
          auto spec = TokenizerSpec::from_gguf(L.target->file());
          L.bos = spec.bos;
          L.eos = spec.eos;
        } catch (const std::exception&) {
          // No usable tokenizer: prompts are plain ids without BOS, decoding never stops early.
        }
        setup_case = since(t_load);
      }
      LoadedSet& L = loaded[c.model_set];
      base.target = L.target_ref;
      if (method.needs_draft()) {
        if (!L.draft)
          throw std::runtime_error("method '" + c.method + "' needs a draft model but model set '" +
                                   ms.name + "' has none");
        base.draft = L.draft_ref;
      }
      const int n_ctx = L.target->config().n_ctx;
      if (c.context_len + plan.decode_tokens > n_ctx)
        throw std::runtime_error("context_lengths: " + std::to_string(c.context_len) +
                                 " + decode_tokens " + std::to_string(plan.decode_tokens) +
                                 " exceeds the context length " + std::to_string(n_ctx) + " of " +
                                 ms.target);
      Engine engine{L.target.get(), method.needs_draft() ? L.draft.get() : nullptr,
                    plan.prefill_chunk};
      Request req;
      req.prompt = synthetic_prompt(
          L.target->config().n_vocab, L.bos,
          L.eos >= 0 ? std::vector<int32_t>{L.eos} : std::vector<int32_t>{}, size_t(c.context_len),
          plan.seed * 1000003ull + uint64_t(c.sample) * 7919ull + uint64_t(c.context_len));
      req.max_new_tokens = plan.decode_tokens;
      req.eos = -1;  // fixed decode length so timings are comparable across methods
      // Agreement with the baseline (untimed). The baseline's reference is taken from its own
      // first warm-up when it runs first, else from an extra baseline run counted as setup; the
      // method's teacher-forced agreement run doubles as its first warm-up.
      const int steps = std::min(plan.agreement_steps, n_ctx - c.context_len);
      std::optional<Agreement> agree;
      double reference_s = 0;
      int warmups_left = plan.warmup;
      const auto ref_key = std::make_pair(c.context_len, c.sample);
      auto scoring_request = [&](const Request& from) {
        Request rq = from;
        rq.max_new_tokens = steps;
        rq.keep_logits = steps;
        return rq;
      };
      auto keep_reference = [&](Outcome&& o) {
        L.references[ref_key] = Reference{std::move(o.tokens), std::move(o.logits)};
      };
      const auto t_warm = Clock::now();
      if (steps > 0 && c.method == kBaseline && !L.references.count(ref_key) && warmups_left > 0) {
        keep_reference(method.run(engine, scoring_request(req), c.params));
        --warmups_left;
      } else if (steps > 0 && c.method != kBaseline) {
        if (!L.references.count(ref_key)) {
          const auto t_ref = Clock::now();
          const Method& b = find_method(kBaseline);
          keep_reference(b.run(Engine{L.target.get(), nullptr, plan.prefill_chunk},
                               scoring_request(req), resolve_params(b, nlohmann::json::object())));
          reference_s = since(t_ref);
        }
        const Reference& ref = L.references.at(ref_key);
        Request rq = scoring_request(req);
        rq.forced_tokens = ref.tokens;
        const Outcome o = method.run(engine, rq, c.params);
        agree = agreement(ref.logits, o.logits);
        --warmups_left;
      }
      for (int w = 0; w < warmups_left && !g_interrupts; ++w) method.run(engine, req, c.params);
      warmup_case = since(t_warm) - reference_s;
      setup_case += reference_s;
      std::vector<results::TrialRecord> trials;
      for (int t = 0; t < plan.trials && !g_interrupts; ++t) {
        reset_peak_rss();
        const auto t_run = Clock::now();
        Outcome o = method.run(engine, req, c.params);
        measured_case += since(t_run);
        results::TrialRecord r = base;
        r.trial_index = t;
        r.ttft_s = o.ttft_s;
        for (const auto& [name, s] : o.phases) r.phases[name] += s;
        r.decode_tokens = int64_t(o.tokens.size());
        if (o.tokens.size() > 1 && o.decode_s > 0)
          r.decode_tok_s = double(o.tokens.size() - 1) / o.decode_s;
        r.prompt_tokens = int64_t(o.prompt_tokens);
        r.kept_tokens = int64_t(o.kept_tokens);
        r.peak_rss_bytes = peak_rss_bytes();
        r.kv_bytes = int64_t(o.kv_bytes);
        r.output_tokens = o.tokens;
        r.stats = o.stats;
        if (agree) {
          r.scores["agreement.first_token"] = agree->first_token;
          r.scores["agreement.top1"] = agree->top1;
          r.scores["agreement.kl_mean"] = agree->kl_mean;
          r.scores["agreement.kl_max"] = agree->kl_max;
          r.stats["agreement_steps"] = agree->steps;
        }
        trials.push_back(std::move(r));
      }
      if (g_interrupts) break;  // the case in flight is dropped, never half-recorded
      store.record_case(trials);
      ++sum.completed;
    } catch (const std::exception& e) {
      if (g_interrupts) break;
      store.record_failure(base, e.what());
      ++sum.failed;
      log << (tty ? "\n" : "") << "case failed: " << c.label(plan) << ": " << e.what() << "\n";
    }
    ++finished;
    sum.measured_s += measured_case;
    sum.setup_s += setup_case;
    const double elapsed = since(t_start);
    const double eta = finished ? elapsed / double(finished) * double(todo - finished) : 0;
    if (tty || since(last_line) > 10 || finished == todo) {
      char line[512];
      std::snprintf(line, sizeof line, "[%zu/%zu] %s | elapsed %s | ETA %s", finished, todo,
                    c.label(plan).c_str(), fmt_duration(elapsed).c_str(),
                    fmt_duration(eta).c_str());
      log << (tty ? "\r\033[K" : "") << line << (tty ? "" : "\n") << std::flush;
      last_line = Clock::now();
    }
    // Bookkeeping = the case's wall time less model setup, warm-ups and measured trials.
    sum.overhead_s += since(t_case) - setup_case - warmup_case - measured_case;
  }
  if (tty) log << "\n";
  sum.interrupted = g_interrupts > 0;
  store.end_run(sum.run_id);
  std::signal(SIGINT, old_handler);
  return sum;
}

}  // namespace accel
