// Record builders shared by the results and reports tests: a RunInfo and TrialRecords with every
// field set to a distinct non-default value, and a helper that writes one case of given TTFTs.
#pragma once
#include <string>
#include <vector>

#include "results/result_store.h"

namespace accel::test {

inline results::RunInfo full_run(const std::string& host = "host-a") {
  results::RunInfo r;
  r.git_commit = "0123456789abcdef0123456789abcdef01234567";
  r.git_dirty = true;
  r.build_type = "Release";
  r.compiler = "g++ 12.2 | -O3 -march=native";
  r.cpu_model = "Test CPU @ 3.0GHz";
  r.cpu_flags = "avx2 fma f16c";
  r.threads = 8;
  r.seeds = {{"plan", 42}, {"family:tiny", 7}};
  r.plan = {{"methods", {"baseline", "specprefill"}}, {"trials", 3}};
  r.config = {{"db", "x.sqlite"}, {"nested", {{"a", 1.5}}}};
  r.hostname = host;
  r.accelbench_version = "0.1.0";
  r.fma_peak_gflops = 123.25;
  r.inputs = {{"tiny", {{"target", {{"path", "/m/t.gguf"}, {"sha256", "aa"}, {"n_params", 5}}}}}};
  r.suite = {{"name", "agreement"},
             {"version", "1"},
             {"metrics", {{{"name", "agreement.top1"}, {"higher_is_better", true}}}}};
  r.git_diff_sha256 = std::string(64, 'e');
  return r;
}

inline results::TrialRecord full_trial(const std::string& run_id, const std::string& case_key,
                                       int64_t trial_index, bool with_draft = true) {
  results::TrialRecord t;
  t.case_key = case_key;
  t.config_key = case_key + "-config";
  t.trial_index = trial_index;
  t.run_id = run_id;
  t.method = "specprefill";
  t.params = {{"keep", 0.3}, {"lookahead", 8}, {"pool", "max"}};
  t.target = {"/models/tiny-target.gguf",
              std::string(64, 'a'),
              "llama",
              1234567,
              {{"n_layer", 4}, {"n_embd", 128}, {"synthetic_family", "tiny"}}};
  if (with_draft)
    t.draft = results::ModelRef{"/models/tiny-draft.gguf", std::string(64, 'b'), "qwen3", 4321};
  t.context_len = 4096;
  t.workload = "ruler/niah_single_1";
  t.workload_version = "3";
  t.sample_id = "sample-17";
  t.ttft_s = 0.123456789012345;
  t.phases = {
      {"draft_prefill", 0.01}, {"lookahead", 0.002}, {"prefill", 0.1}, {"first_token", 0.011}};
  t.decode_tokens = 64;
  t.decode_tok_s = 31.5;
  t.prompt_tokens = 4096;
  t.kept_tokens = 1229;
  t.peak_rss_bytes = 987654321;
  t.kv_bytes = 12345678;
  t.output_tokens = {1, 2, 3, -1, 2147483647};
  t.scores = {{"exact_match", 1.0}, {"rouge_l", 0.75}};
  t.stats = {{"kept_chunks", {1, 5, 9}}, {"draft_layers", 2}};
  t.recorded_at = "2025-01-02T03:04:05.678Z";
  t.sample_hash = std::string(64, 'c');
  t.kv_dtype = "f16";
  t.inputs = {{"target", {{"path", "/models/tiny-target.gguf"}, {"sha256", std::string(64, 'a')}}},
              {"predictor", {{"path", "/w/p.gguf"}, {"sha256", "dd"}, {"file", true}}}};
  t.reference_method = "baseline";
  t.other_cpu_s = 0.015;
  t.loadavg_1m = 1.25;
  t.prediction = "It is 42.\n\u00e9\xe2\x82\xac";  // non-ASCII UTF-8 and a newline
  t.sample_reference = {"42", {{"alt", nullptr}}};
  t.backoffs_in_region = 3;
  return t;
}

// A minimal trial for report/compare tests: the case key is derived from the identity fields.
inline results::TrialRecord simple_trial(const std::string& run_id, const std::string& method,
                                         const nlohmann::json& params, int64_t ctx,
                                         const std::string& sample, int64_t trial, double ttft) {
  results::TrialRecord t;
  t.run_id = run_id;
  t.method = method;
  t.params = params;
  t.target = {"/m/target.gguf", "sha-target", "llama", 1000};
  t.context_len = ctx;
  t.workload = "synthetic";
  t.sample_id = sample;
  t.case_key = method + "|" + params.dump() + "|" + std::to_string(ctx) + "|" + sample;
  t.trial_index = trial;
  t.ttft_s = ttft;
  t.decode_tokens = 16;
  t.decode_tok_s = 10.0 / ttft;
  return t;
}

// Records one case whose trials have the given TTFTs.
inline void add_case(results::ResultStore& s, const std::string& run_id, const std::string& method,
                     const nlohmann::json& params, int64_t ctx, const std::string& sample,
                     const std::vector<double>& ttfts,
                     const std::map<std::string, double>& phases = {},
                     const std::map<std::string, double>& scores = {}) {
  std::vector<results::TrialRecord> v;
  for (size_t i = 0; i < ttfts.size(); ++i) {
    auto t = simple_trial(run_id, method, params, ctx, sample, int64_t(i), ttfts[i]);
    t.phases = phases;
    t.scores = scores;
    v.push_back(t);
  }
  s.record_case(v);
}

}  // namespace accel::test
