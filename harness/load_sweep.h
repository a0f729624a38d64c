// Load sweeps against an OpenAI-compatible endpoint in the style of `vllm bench serve`: for each
// (max concurrency, request rate) point, N streamed requests of seeded random token-id prompts
// arrive as a Poisson process (or all at once for rate 0 = unlimited), at most `concurrency` in
// flight, and each is timed at the client. Results are per-point percentiles of TTFT, TPOT and
// ITL with request and output-token throughput, as a Markdown table and a latency-vs-throughput
// SVG. Owns no store: `bench-serve` prints and writes files; an endpoint plan's sweep stores each
// request (harness/load_runner.h).
#pragma once
#include <cmath>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "harness/openai_client.h"

namespace accel {

struct LoadPoint {
  int concurrency = 1;
  double request_rate = 0;  // requests/s of the Poisson arrivals; 0 = all at once
};

struct LoadSpec {
  int requests = 32;
  size_t prompt_tokens = 256;
  int max_tokens = 32;
  int vocab = 256;  // prompt ids are uniform in [0, vocab)
  uint64_t seed = 0;
  nlohmann::json extras = nlohmann::json::object();  // request members (e.g. "accelbench")
  std::string model;
};

// One request of a point, as the client timed it.
struct RequestTiming {
  int index = 0;      // in arrival order
  std::string error;  // "" = completed
  double ttft_s = 0, e2e_s = 0;
  double tpot_s = NAN;  // (e2e - TTFT) / (tokens - 1); NaN for a one-token answer
  std::vector<double> itl_s;
  int64_t output_tokens = 0;
};

struct LoadResult {
  LoadPoint point;
  int completed = 0, failed = 0;
  std::vector<std::string> errors;  // the first few failure reasons
  double wall_s = 0;                // first request sent -> last answer ended
  int64_t output_tokens = 0;
  std::vector<double> ttft_s, tpot_s, itl_s, e2e_s;  // pooled over the completed requests
  std::vector<RequestTiming> requests;               // every request, by index
};

LoadResult run_load_point(const OpenAIClient& client, const LoadSpec& spec, LoadPoint point);

// The `serve` table: one row per point (p50/p90/p99 TTFT, TPOT and ITL in ms, req/s, output tok/s).
std::string load_table_markdown(const std::vector<LoadResult>& results);
nlohmann::json load_results_json(const std::vector<LoadResult>& results);
// Median TTFT (y) against output tokens/s (x), one point per sweep point, labelled.
std::string load_plot_svg(const std::vector<LoadResult>& results, const std::string& title);

}  // namespace accel
