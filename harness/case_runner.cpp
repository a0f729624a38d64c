// One case (see case_runner.h). The order inside a case: the reference run (untimed, cached), the
// method's scoring run (counts as its first warm-up), the remaining warm-ups, the measured trials.
#include "harness/case_runner.h"

#include <chrono>
#include <stdexcept>

#include "harness/file_hash.h"
#include "harness/machine_load.h"
#include "harness/process_memory.h"
#include "kernels/threading.h"
#include "models/kv_storage.h"

namespace accel {

namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

const Suite& suite_of(const Plan& p) {
  return find_suite(p.suite.name);
}

// The engine a method runs on: the target, and every other input it declares, by role.
Engine engine_for(const CaseInput& in, const Method& m, const std::string& kv_dtype) {
  Engine e;
  e.target = &in.models.model("target");
  e.digests["target"] = in.models.digest("target");
  e.prefill_chunk = in.plan.prefill_chunk;
  e.kv_dtype = *kv_dtype_from_name(kv_dtype);
  for (const InputSpec& spec : m.inputs()) {
    if (spec.role == "target") continue;
    if (spec.kind == InputSpec::Kind::Model) {
      e.models[spec.role] = &in.models.model(spec.role);
      e.digests[spec.role] = in.models.digest(spec.role);
    } else if (const std::string p = in.models.spec().path(spec.role); !p.empty())
      e.files[spec.role] = p;
    else
      throw std::runtime_error("method '" + m.name() + "' needs input '" + spec.role +
                               "' but model set '" + in.models.spec().name + "' has none");
  }
  return e;
}

bool is_reference(const CaseInput& in) {
  return in.c.method == in.plan.reference.method && in.c.params == in.plan.reference.params &&
         in.c.kv_dtype == "f32";
}

Request make_request(const CaseInput& in, const Sample& s) {
  Request r;
  r.prompt = s.prompt;
  r.messages = s.messages;
  r.max_new_tokens = s.max_new_tokens > 0 ? s.max_new_tokens : in.plan.decode_tokens;
  r.eos = -1;  // a fixed decode length keeps timings comparable across methods
  const int n_ctx = in.models.model("target").config().n_ctx;
  if (r.prompt.size() + size_t(r.max_new_tokens) > size_t(n_ctx))
    throw std::runtime_error("sample '" + s.id + "': " + std::to_string(r.prompt.size()) +
                             " prompt tokens + " + std::to_string(r.max_new_tokens) +
                             " to generate: exceeds the context length " + std::to_string(n_ctx) +
                             " of " + in.models.spec().path("target"));
  return r;
}

// The request of a ForcedLogits scoring run: `steps` decode steps with their logits kept.
Request scoring_request(const Request& r, int steps) {
  Request s = r;
  s.max_new_tokens = steps;
  s.keep_logits = steps;
  return s;
}

bool forced_kind(const ReferenceNeed& need) {
  return need.kind == ReferenceNeed::Kind::ForcedLogits ||
         need.kind == ReferenceNeed::Kind::ForcedContinuation;
}

// The request the reference runs for scoring: its plain request, or a scoring run (teacher-forced
// on the sample's continuation for ForcedContinuation).
Request reference_request(const Request& r, const ReferenceNeed& need, const Sample& s) {
  if (!forced_kind(need)) return r;
  Request f = scoring_request(r, need.steps);
  if (need.kind == ReferenceNeed::Kind::ForcedContinuation) {
    if (s.continuation.size() != size_t(need.steps))
      throw std::logic_error("sample '" + s.id + "': " + std::to_string(s.continuation.size()) +
                             " continuation tokens for " + std::to_string(need.steps) +
                             " forced steps");
    f.forced_tokens = s.continuation;
  }
  return f;
}

Generation generation_of(Outcome&& o) {
  return {std::move(o.tokens), std::move(o.logits)};
}

std::tuple<size_t, int, int> reference_key(const CaseInput& in) {
  return {in.c.model_set, in.c.context_len, in.c.sample};
}

// The reference method's generation for this (set, context, sample), run once and cached.
const Generation& reference_for(const CaseInput& in, const Request& req, const ReferenceNeed& need,
                                const Sample& sample, CaseTimes& times) {
  const auto key = reference_key(in);
  if (const auto it = in.references.find(key); it != in.references.end()) return it->second;
  const auto t0 = Clock::now();
  const Method& ref = plan_method(in.plan, in.plan.reference.method);
  const Request r = reference_request(req, need, sample);
  Generation g = generation_of(ref.run(engine_for(in, ref, "f32"), r, in.plan.reference.params));
  times.setup_s += since(t0);
  return in.references[key] = std::move(g);
}

results::TrialRecord measure_trial(const Method& m, const Engine& e, const Request& req,
                                   const nlohmann::json& params, const results::TrialRecord& id,
                                   int index, CaseTimes& times, Outcome& out) {
  reset_peak_rss();
  const LoadSample before = sample_load();
  const auto t0 = Clock::now();
  // The timed region keeps every thread the run asked for: a back-off would run part of it on one
  // thread, mixing two thread counts in one figure. Under load that costs nothing here: 2 threads,
  // `small` at 256 tokens beside 4 nice-19 busy loops measured 15.7 and 13.6 s with back-off (2-10
  // back-offs per trial) and 9.6 and 8.6 s without (2026-11-27, 2-core Xeon). The window still
  // counts, so a row says how its region ran (0 here; NULL only on rows older than schema v7).
  const ScopedParallelBackoff all_threads(false);
  const BackoffWindow backoffs;
  out = m.run(e, req, params);
  const int64_t backoff_events = backoffs.events();
  times.measured_s += since(t0);
  const TrialLoad load = load_between(before, sample_load());
  check_declared_fallback(m, out);
  results::TrialRecord r = id;
  r.trial_index = index;
  r.ttft_s = out.ttft_s;
  for (const auto& [name, s] : out.phases) r.phases[name] += s;
  r.decode_tokens = int64_t(out.tokens.size());
  if (out.tokens.size() > 1 && out.decode_s > 0)
    r.decode_tok_s = double(out.tokens.size() - 1) / out.decode_s;
  r.prompt_tokens = int64_t(out.prompt_tokens);
  r.kept_tokens = int64_t(out.kept_tokens);
  r.peak_rss_bytes = peak_rss_bytes();
  r.kv_bytes = int64_t(out.kv_bytes);
  r.output_tokens = out.tokens;
  r.stats = out.stats;
  r.other_cpu_s = load.other_cpu_s;
  r.loadavg_1m = load.loadavg_1m;
  r.backoffs_in_region = backoff_events;
  // When the trial ended, so a store shows the order trials ran in (plans may interleave cases).
  r.recorded_at = results::utc_now();
  return r;
}

}  // namespace

void check_declared_fallback(const Method& m, const Outcome& o) {
  if (!o.stats.contains("fallback")) return;
  const nlohmann::json& why = o.stats["fallback"];
  for (const auto& r : m.fallback_reasons())
    if (why.is_string() && why.get<std::string>() == r) return;
  throw std::runtime_error("method '" + m.name() +
                           "' fell back for an undeclared reason: " + why.dump());
}

results::TrialRecord case_identity(const CaseInput& in, const std::string& case_key,
                                   const std::string& config_key, const std::string& run_id) {
  const Method& m = plan_method(in.plan, in.c.method);
  const Suite& suite = suite_of(in.plan);
  results::TrialRecord r;
  r.case_key = case_key;
  r.config_key = config_key;
  r.run_id = run_id;
  r.method = in.c.method;
  r.params = in.c.params;
  r.context_len = in.c.context_len;
  r.workload = suite.name();
  r.workload_version = suite.version();
  r.sample_id = std::to_string(in.c.sample);
  r.decode_tokens = in.plan.decode_tokens;
  r.kv_dtype = in.c.kv_dtype;
  r.target.path = in.models.spec().path("target");
  r.target.sha256 = in.models.digest("target");
  if (suite.reference_need(in.plan.suite.params).kind != ReferenceNeed::Kind::None &&
      !is_reference(in))
    r.reference_method = in.plan.reference.method;
  for (const InputSpec& spec : m.inputs()) {
    const std::string path = in.models.spec().path(spec.role);
    r.inputs[spec.role] = {{"path", path}};
    if (spec.kind == InputSpec::Kind::File) r.inputs[spec.role]["file"] = true;
  }
  return r;
}

PreparedCase prepare_case(const CaseInput& in, const results::TrialRecord& identity,
                          CaseTimes& times) {
  const Method& method = plan_method(in.plan, in.c.method);
  const Suite& suite = suite_of(in.plan);
  const nlohmann::json& sp = in.plan.suite.params;
  PreparedCase p;
  results::TrialRecord& id = p.id;
  id = identity;
  id.target = in.models.ref("target");
  for (auto& [role, e] : id.inputs.items()) e["sha256"] = in.models.digest(role);
  // A draft model is also stored in the draft_* columns the cost-model reports read.
  if (id.inputs.contains("draft")) id.draft = in.models.ref("draft");

  p.sample =
      suite.make_sample(in.c.context_len, in.c.sample, in.plan.seed, in.models.suite_context(), sp);
  const Sample& sample = p.sample;
  id.sample_id = sample.id;
  if (const auto t = sample.meta.find("task"); t != sample.meta.end() && t->is_string())
    id.sample_task = t->get<std::string>();
  id.sample_hash = sha256_text(
      nlohmann::json{{"prompt", sample.prompt}, {"reference", sample.reference}}.dump());
  p.request = make_request(in, sample);
  p.engine = engine_for(in, method, in.c.kv_dtype);
  p.need = suite.reference_need(sp);
  const Request& req = p.request;
  const Engine& engine = p.engine;
  const ReferenceNeed& need = p.need;
  const bool self_ref = is_reference(in);

  // Scoring inputs that do not come from the measured trials.
  const auto t_warm = Clock::now();
  const double setup_before = times.setup_s;
  if (need.kind != ReferenceNeed::Kind::None && !self_ref)
    p.reference = &reference_for(in, req, need, sample, times);
  int warmups_left = in.plan.warmup;
  const auto ref_key = reference_key(in);
  if (self_ref && need.kind == ReferenceNeed::Kind::ForcedLogits && warmups_left > 0 &&
      !in.references.count(ref_key)) {
    // The reference's own first warm-up produces what the other methods are scored against.
    in.references[ref_key] =
        generation_of(method.run(engine, scoring_request(req, need.steps), in.c.params));
    --warmups_left;
  }
  // The method's teacher-forced run (Forced*) doubles as a warm-up.
  if (need.kind == ReferenceNeed::Kind::ForcedLogits && p.reference) {
    Request r = scoring_request(req, need.steps);
    r.forced_tokens = p.reference->tokens;
    p.forced = generation_of(method.run(engine, r, in.c.params));
    --warmups_left;
  } else if (need.kind == ReferenceNeed::Kind::ForcedContinuation) {
    p.forced = generation_of(method.run(engine, reference_request(req, need, sample), in.c.params));
    --warmups_left;
    if (self_ref && !in.references.count(ref_key)) in.references[ref_key] = p.forced;
  }
  for (int w = 0; w < warmups_left && !in.interrupts; ++w) method.run(engine, req, in.c.params);
  times.warmup_s += since(t_warm) - (times.setup_s - setup_before);
  return p;
}

void measure_next_trial(const CaseInput& in, PreparedCase& p, CaseTimes& times) {
  const Method& method = plan_method(in.plan, in.c.method);
  const int t = int(p.trials.size());
  Outcome o;
  p.trials.push_back(measure_trial(method, p.engine, p.request, in.c.params, p.id, t, times, o));
  if (t == 0) p.first = std::move(o);
}

std::vector<results::TrialRecord> finish_case(const CaseInput& in, PreparedCase&& p) {
  if (p.trials.empty()) return {};
  const Generation scored =
      forced_kind(p.need) ? std::move(p.forced) : Generation{p.first.tokens, {}};
  const SuiteContext ctx = in.models.suite_context();
  const Scores scores =
      suite_of(in.plan).score(p.sample, scored, p.reference, ctx, in.plan.suite.params);
  std::optional<std::string> prediction;
  if (ctx.tokenizer && !forced_kind(p.need)) prediction = ctx.tokenizer->decode(p.first.tokens);
  for (auto& r : p.trials) {
    r.scores = scores;
    r.prediction = prediction;
    r.sample_reference = p.sample.reference;
  }
  return std::move(p.trials);
}

std::vector<results::TrialRecord> run_case(const CaseInput& in,
                                           const results::TrialRecord& identity, CaseTimes& times) {
  PreparedCase p = prepare_case(in, identity, times);
  for (int t = 0; t < in.plan.trials && !in.interrupts; ++t) measure_next_trial(in, p, times);
  return finish_case(in, std::move(p));
}

}  // namespace accel
