// run_load_case and its records (see load_runner.h).
#include "harness/load_runner.h"

#include <cmath>

#include "harness/endpoint_backend.h"
#include "harness/load_sweep.h"

namespace accel {

std::vector<results::TrialRecord> load_trial_records(const Case& c,
                                                     const results::TrialRecord& identity,
                                                     const LoadResult& r) {
  std::vector<results::TrialRecord> out;
  for (const RequestTiming& q : r.requests) {
    results::TrialRecord t = identity;
    t.trial_index = q.index;
    t.workload = "load";
    // assign, not = "1": at -O3 GCC 12 reports a bogus overlapping copy (-Wrestrict) for the latter
    t.workload_version.assign(1, '1');
    t.reference_method.reset();  // a load point is compared with nothing
    t.sample_id = "request-" + std::to_string(q.index);
    t.prompt_tokens = c.context_len;
    t.kept_tokens = c.context_len;
    t.ttft_s = q.ttft_s;
    t.decode_tokens = q.output_tokens;
    if (std::isfinite(q.tpot_s) && q.tpot_s > 0) t.decode_tok_s = 1.0 / q.tpot_s;
    t.stats = {{"e2e_s", q.e2e_s},
               {"tpot_s", std::isfinite(q.tpot_s) ? nlohmann::json(q.tpot_s) : nlohmann::json()},
               {"itl_s", q.itl_s},
               {"load", {{"max_concurrency", c.concurrency}, {"request_rate", c.request_rate}}}};
    out.push_back(std::move(t));
  }
  return out;
}

LoadCaseOutcome run_load_case(const Plan& plan, const Case& c, const results::TrialRecord& identity,
                              int n_vocab, results::ResultStore& store) {
  if (!plan.backend || c.concurrency < 1)
    throw std::logic_error("run_load_case: not a load-sweep case of an endpoint plan");
  const EndpointMethod* config = plan.backend->find(c.method);
  if (!config) throw std::logic_error("run_load_case: unknown configuration " + c.method);
  LoadSpec spec;
  spec.requests = plan.load.requests;
  spec.prompt_tokens = size_t(c.context_len);
  spec.max_tokens = plan.decode_tokens;
  spec.vocab = n_vocab > 0 ? n_vocab : 256;
  spec.seed = plan.seed;
  spec.extras = config->extras();
  spec.model = plan.backend->spec().model;
  const LoadResult r =
      run_load_point(plan.backend->client(), spec, {c.concurrency, c.request_rate});
  LoadCaseOutcome o{"", r.completed, r.failed, r.wall_s};
  if (r.failed > 0) {
    o.error = std::to_string(r.failed) + " of " + std::to_string(spec.requests) +
              " requests failed; first: " + (r.errors.empty() ? "?" : r.errors[0]);
    store.record_failure(identity, o.error);
    return o;
  }
  results::LoadPointRecord p;
  p.case_key = identity.case_key;
  p.run_id = identity.run_id;
  p.method = c.method;
  p.context_len = c.context_len;
  p.concurrency = c.concurrency;
  p.request_rate = c.request_rate;
  p.requests = spec.requests;
  p.wall_s = r.wall_s;
  p.output_tokens = r.output_tokens;
  store.record_load_point(p, load_trial_records(c, identity, r));
  return o;
}

}  // namespace accel
