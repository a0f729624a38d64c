// run_load_point and its table and plot (see load_sweep.h).
#include "harness/load_sweep.h"

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <random>
#include <thread>

#include "reports/serve_table.h"
#include "reports/stats.h"

namespace accel {

namespace {

using Clock = std::chrono::steady_clock;

std::vector<int32_t> prompt_ids(const LoadSpec& s, int i) {
  std::mt19937_64 rng(s.seed * 1000003 + uint64_t(i));
  std::uniform_int_distribution<int32_t> d(0, s.vocab - 1);
  std::vector<int32_t> ids(s.prompt_tokens);
  for (auto& x : ids) x = d(rng);
  return ids;
}

double ms_pct(const std::vector<double>& v, double q) {
  return v.empty() ? NAN : 1000 * reports::percentile(v, q);
}

std::string cell(double x) {
  if (std::isnan(x)) return "–";
  char b[32];
  std::snprintf(b, sizeof b, "%.1f", x);
  return b;
}

}  // namespace

LoadResult run_load_point(const OpenAIClient& client, const LoadSpec& spec, LoadPoint point) {
  LoadResult out;
  out.point = point;
  std::mutex mu;
  std::condition_variable cv;
  int in_flight = 0;
  std::mt19937_64 rng(spec.seed);
  std::exponential_distribution<double> gap(point.request_rate > 0 ? point.request_rate : 1.0);
  std::vector<std::thread> threads;
  out.requests.resize(size_t(spec.requests));
  const auto t0 = Clock::now();
  auto next = t0;
  for (int i = 0; i < spec.requests; ++i) {
    if (point.request_rate > 0) {
      next += std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(gap(rng)));
      std::this_thread::sleep_until(next);
    }
    {
      std::unique_lock lock(mu);
      cv.wait(lock, [&] { return in_flight < point.concurrency; });
      ++in_flight;
    }
    nlohmann::json body = spec.extras;
    body["model"] = spec.model;
    body["prompt"] = prompt_ids(spec, i);
    body["max_tokens"] = spec.max_tokens;
    body["temperature"] = 0;
    body["stream"] = true;
    body["stream_options"] = {{"include_usage", true}};
    body["ignore_eos"] = true;
    threads.emplace_back([&, i, body = std::move(body)] {
      OpenAIClient c = client;
      const CompletionResult r = c.complete(body, false);
      std::lock_guard lock(mu);
      --in_flight;
      cv.notify_all();
      RequestTiming& rt = out.requests[size_t(i)];
      rt.index = i;
      if (!r.ok()) {
        ++out.failed;
        rt.error = r.error.empty() ? "failed without a reason" : r.error;
        if (out.errors.size() < 5) out.errors.push_back(r.error);
        return;
      }
      ++out.completed;
      const size_t n = r.have_token_ids      ? r.token_ids.size()
                       : r.usage.is_object() ? r.usage.value("completion_tokens", size_t(0))
                                             : size_t(r.content_chunks);
      out.output_tokens += int64_t(n);
      out.ttft_s.push_back(r.ttft_s);
      out.e2e_s.push_back(r.e2e_s);
      if (n > 1) out.tpot_s.push_back((r.e2e_s - r.ttft_s) / double(n - 1));
      out.itl_s.insert(out.itl_s.end(), r.itl_s.begin(), r.itl_s.end());
      rt.ttft_s = r.ttft_s;
      rt.e2e_s = r.e2e_s;
      if (n > 1) rt.tpot_s = out.tpot_s.back();
      rt.itl_s = r.itl_s;
      rt.output_tokens = int64_t(n);
    });
  }
  for (auto& t : threads) t.join();
  out.wall_s = std::chrono::duration<double>(Clock::now() - t0).count();
  return out;
}

std::string load_table_markdown(const std::vector<LoadResult>& rs) {
  std::string t =
      "| concurrency | rate (req/s) | ok | failed | req/s | output tok/s | TTFT p50 | TTFT p90 | "
      "TTFT p99 | TPOT p50 | TPOT p90 | TPOT p99 | ITL p50 | ITL p90 | ITL p99 |\n"
      "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
  for (const LoadResult& r : rs) {
    t += "| " + std::to_string(r.point.concurrency) + " | " +
         (r.point.request_rate > 0 ? cell(r.point.request_rate) : "inf") + " | " +
         std::to_string(r.completed) + " | " + std::to_string(r.failed) + " | " +
         cell(r.completed / r.wall_s) + " | " + cell(double(r.output_tokens) / r.wall_s);
    for (const auto* v : {&r.ttft_s, &r.tpot_s, &r.itl_s})
      for (double q : {0.5, 0.9, 0.99}) t += " | " + cell(ms_pct(*v, q));
    t += " |\n";
  }
  return t +
         "\nTimes in ms at the client; TTFT = request sent to the first streamed chunk with "
         "content; TPOT = (end - TTFT) / (tokens - 1) per request; ITL = gaps between "
         "content chunks.\n";
}

nlohmann::json load_results_json(const std::vector<LoadResult>& rs) {
  nlohmann::json out = nlohmann::json::array();
  for (const LoadResult& r : rs)
    out.push_back({{"concurrency", r.point.concurrency},
                   {"request_rate", r.point.request_rate},
                   {"completed", r.completed},
                   {"failed", r.failed},
                   {"errors", r.errors},
                   {"wall_s", r.wall_s},
                   {"output_tokens", r.output_tokens},
                   {"ttft_s", r.ttft_s},
                   {"tpot_s", r.tpot_s},
                   {"itl_s", r.itl_s},
                   {"e2e_s", r.e2e_s}});
  return out;
}

std::string load_plot_svg(const std::vector<LoadResult>& rs, const std::string& title) {
  std::vector<reports::ServePlotPoint> pts;
  for (const LoadResult& r : rs) {
    if (r.ttft_s.empty()) continue;
    const std::string rate = r.point.request_rate > 0 ? cell(r.point.request_rate) : "inf";
    pts.push_back({"median TTFT", double(r.output_tokens) / r.wall_s, ms_pct(r.ttft_s, 0.5),
                   "concurrency " + std::to_string(r.point.concurrency) + ", rate " + rate});
  }
  return reports::latency_throughput_svg(pts, title);
}

}  // namespace accel
