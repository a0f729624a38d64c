// `accelbench bench-serve`: a load sweep (load_sweep.h) against an OpenAI-compatible endpoint over
// lists of max concurrency and Poisson request rates; prints the serve table and writes the raw
// per-request times (JSON) and a latency-vs-throughput SVG when asked. Results are not stored in
// a results database.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>

#include "harness/cli.h"
#include "harness/load_sweep.h"

namespace accel {

namespace {

struct BenchServeArgs {
  std::string base_url, model, api_key_env, extras = "{}", json_out, svg_out;
  std::vector<int> concurrency{1, 2, 4, 8};
  std::vector<double> rates{0};
  LoadSpec spec;
  double timeout_s = 600;
};

int run_bench_serve(BenchServeArgs& a) {
  if (a.spec.requests < 1) throw std::invalid_argument("--requests must be >= 1");
  if (a.spec.max_tokens < 1) throw std::invalid_argument("--max-tokens must be >= 1");
  if (a.spec.prompt_tokens < 1) throw std::invalid_argument("--prompt-tokens must be >= 1");
  if (a.spec.vocab < 1) throw std::invalid_argument("--vocab must be >= 1");
  for (int c : a.concurrency)
    if (c < 1 || c > 4096) throw std::invalid_argument("--concurrency values must be in [1, 4096]");
  for (double r : a.rates)
    if (!(r >= 0) || !std::isfinite(r))
      throw std::invalid_argument("--request-rate values must be >= 0 (0 = all at once)");
  a.spec.extras = nlohmann::json::parse(a.extras, nullptr, false);
  if (!a.spec.extras.is_object())
    throw std::invalid_argument("--request: expected a JSON object of request members");
  a.spec.model = a.model;
  std::string key;
  if (!a.api_key_env.empty()) {
    const char* k = std::getenv(a.api_key_env.c_str());
    if (!k) throw std::invalid_argument("--api-key-env " + a.api_key_env + " is unset");
    key = k;
  }
  const OpenAIClient client(a.base_url, key, a.timeout_s);
  std::vector<LoadResult> results;
  for (double rate : a.rates)
    for (int c : a.concurrency) {
      results.push_back(run_load_point(client, a.spec, {c, rate}));
      const LoadResult& r = results.back();
      std::fprintf(stderr, "bench-serve: concurrency %d rate %g: %d ok, %d failed in %.2f s%s%s\n",
                   c, rate, r.completed, r.failed, r.wall_s, r.errors.empty() ? "" : "; first: ",
                   r.errors.empty() ? "" : r.errors[0].c_str());
    }
  std::printf("%s", load_table_markdown(results).c_str());
  if (!a.json_out.empty()) {
    std::ofstream f(a.json_out);
    f << nlohmann::json{{"base_url", a.base_url},
                        {"model", a.model},
                        {"prompt_tokens", a.spec.prompt_tokens},
                        {"max_tokens", a.spec.max_tokens},
                        {"requests", a.spec.requests},
                        {"seed", a.spec.seed},
                        {"request", a.spec.extras},
                        {"points", load_results_json(results)}}
             .dump(1);
    if (!f) throw std::runtime_error("cannot write --json '" + a.json_out + "'");
  }
  if (!a.svg_out.empty()) {
    std::ofstream f(a.svg_out);
    f << load_plot_svg(results, "Latency vs throughput: " + a.model + " at " + a.base_url);
    if (!f) throw std::runtime_error("cannot write --svg '" + a.svg_out + "'");
  }
  int failed = 0;
  for (const auto& r : results) failed += r.failed;
  return failed ? 4 : 0;
}

}  // namespace

void register_bench_serve_command(CLI::App& app, CliCommands& out) {
  auto a = std::make_shared<BenchServeArgs>();
  CLI::App* sub = app.add_subcommand(
      "bench-serve",
      "Load sweep against an OpenAI-compatible server (as `vllm bench serve`): per (concurrency, "
      "request rate) point, N streamed greedy requests of seeded random token-id prompts; prints "
      "p50/p90/p99 TTFT, TPOT, ITL, request and output-token throughput. Not stored in a results "
      "database (see --json); to store a sweep, list max_concurrency in an endpoint plan and use "
      "`report --table serve`");
  sub->add_option("--base-url", a->base_url, "e.g. http://127.0.0.1:8080/v1")->required();
  sub->add_option("--model", a->model, "The request's model id")->required();
  sub->add_option("--api-key-env", a->api_key_env, "Environment variable holding the API key");
  sub->add_option("--concurrency", a->concurrency,
                  "Max requests in flight (list; default 1 2 4 8)");
  sub->add_option("--request-rate", a->rates,
                  "Poisson arrival rates in requests/s (list; 0 = all at once; default 0)");
  sub->add_option("--requests", a->spec.requests, "Requests per point (default 32)");
  sub->add_option("--prompt-tokens", a->spec.prompt_tokens, "Prompt length (default 256)");
  sub->add_option("--max-tokens", a->spec.max_tokens,
                  "Tokens per answer (default 32; EOS ignored)");
  sub->add_option("--vocab", a->spec.vocab, "Prompt ids are uniform in [0, vocab) (default 256)");
  sub->add_option("--seed", a->spec.seed, "Seed of prompts and arrivals (default 0)");
  sub->add_option("--request", a->extras,
                  "Extra request members as JSON, e.g. '{\"accelbench\":{\"method\":\"pld\"}}'");
  sub->add_option("--timeout", a->timeout_s, "Per-request time-out in seconds (default 600)");
  sub->add_option("--json", a->json_out, "Write every request's times as JSON");
  sub->add_option("--svg", a->svg_out, "Write the latency-vs-throughput plot");
  out.push_back({sub, [a] { return run_bench_serve(*a); }});
}

}  // namespace accel
