// A store for the figure tests: baseline and SpecPrefill (keep 0.2, 0.5) at two context lengths,
// with draft-scoring phases, realised keep and an agreement score, from seeded noise.
#pragma once
#include <random>
#include <string>

#include "results/result_store.h"
#include "tests/results/store_fixtures.h"

namespace accel::test {

inline void make_plot_store(const std::string& path, uint64_t seed = 1) {
  auto s = results::ResultStore::open(path);
  s.db().exec("PRAGMA synchronous = OFF");
  const std::string run = s.begin_run(full_run());
  std::mt19937_64 rng(seed);
  std::lognormal_distribution<double> noise(0.0, 0.03);
  for (int64_t ctx : {1024, 2048}) {
    const double base = 0.5 * double(ctx) / 1024.0;
    for (double keep : {0.0, 0.2, 0.5}) {
      const bool method = keep > 0;
      std::vector<results::TrialRecord> v;
      for (int i = 0; i < 5; ++i) {
        const double scoring = 0.1 * base, prefill = method ? keep * base : base;
        auto t = simple_trial(run, method ? "specprefill" : "baseline",
                              method ? nlohmann::json{{"keep", keep}} : nlohmann::json::object(),
                              ctx, "s0", i, 0);
        t.phases = {{"prefill", prefill * noise(rng)}, {"first_token", 0.01}};
        if (method) {
          t.phases["draft_prefill"] = scoring * 0.8 * noise(rng);
          t.phases["lookahead"] = scoring * 0.1;
          t.phases["score"] = scoring * 0.1;
          t.draft = results::ModelRef{"/m/draft.gguf", "sha-draft", "llama", 100};
          t.scores = {{"agreement.top1", 0.5 + keep}};
        }
        double ttft = 0;
        for (const auto& [n, x] : t.phases) ttft += x;
        t.ttft_s = ttft;
        t.decode_tok_s = 10.0 / ttft;
        t.prompt_tokens = ctx;
        t.kept_tokens = method ? int64_t(double(ctx) * keep) : ctx;
        v.push_back(t);
      }
      s.record_case(v);
    }
  }
}

}  // namespace accel::test
