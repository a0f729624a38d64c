// Streaming TTFT through `accelbench serve` against the in-process TTFT of the same request: the
// baseline on a 2,048-token prompt of the tiny family, timed in-process by the method (prompt in
// hand -> first token) and over HTTP by the endpoint client (request sent -> first content chunk
// of the SSE stream). The bound is serve <= in-process x 1.05 + 5 ms.
// BM_TtftServeVsInProcess is the benchmark of that bound: one in-process request and one streamed
// request of the same prompt alternate in each iteration of one process (same engine thread count,
// loopback server), and its counters give both medians, their ratio, their difference and whether
// the bound held. The two single benchmarks time each path alone; the streamed one also reports
// overhead_ms: client TTFT less the server's own compute TTFT of the same request (HTTP, queue,
// SSE, parsing).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <memory>
#include <thread>

#include "harness/model_session.h"
#include "harness/openai_client.h"
#include "harness/serve_server.h"
#include "kernels/threading.h"
#include "models/tokenizer.h"
#include "tests/support/tiny_family.h"

namespace accel {
namespace {

constexpr size_t kPrompt = 2048;

Engine tiny_engine() {
  Engine e;
  e.target = test::tiny_family().target.get();
  return e;
}

std::vector<int32_t> prompt() {
  return random_prompt(test::tiny_family().target->config().n_vocab, kPrompt, 7);
}

// The in-process baseline TTFT of the benchmark's prompt, one token long.
double ttft_in_process() {
  static const Method& m = find_method("baseline");
  static const nlohmann::json params = resolve_params(m, nlohmann::json::object());
  static const Request r = [] {
    Request q;
    q.prompt = prompt();
    q.max_new_tokens = 1;
    return q;
  }();
  return m.run(tiny_engine(), r, params).ttft_s;
}

void BM_TtftInProcess(benchmark::State& st) {
  for (auto _ : st) st.SetIterationTime(ttft_in_process());
  st.SetItemsProcessed(int64_t(st.iterations() * kPrompt));
}
BENCHMARK(BM_TtftInProcess)->UseManualTime()->Unit(benchmark::kMillisecond);

// Our serve over the tiny target on a loopback port, in this process (the engine's thread count
// is the process's, so the same as the in-process runs'), with a client for it.
class LoopbackServe {
 public:
  LoopbackServe() {
    ServeConfig cfg;
    cfg.port = 0;
    cfg.access_log = false;
    cfg.model_id = "tiny";
    server_ = std::make_unique<ServeServer>(cfg, tiny_engine(), nullptr);
    const int port = server_->bind();
    thread_ = std::thread([this] { server_->listen(); });
    client_ =
        std::make_unique<OpenAIClient>("http://127.0.0.1:" + std::to_string(port) + "/v1", "", 60);
    while (!client_->get_json("/health")) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ~LoopbackServe() {
    server_->stop();
    thread_.join();
  }
  // One streamed greedy request of the benchmark's prompt, one token long.
  CompletionResult stream_one() {
    static const nlohmann::json body = {
        {"prompt", prompt()}, {"max_tokens", 1}, {"stream", true}, {"ignore_eos", true}};
    return client_->complete(body, false);
  }

 private:
  std::unique_ptr<ServeServer> server_;
  std::thread thread_;
  std::unique_ptr<OpenAIClient> client_;
};

void BM_TtftStreamedThroughServe(benchmark::State& st) {
  LoopbackServe serve;
  double overhead_s = 0;
  for (auto _ : st) {
    const CompletionResult r = serve.stream_one();
    if (!r.ok()) {
      st.SkipWithError(r.error.c_str());
      break;
    }
    st.SetIterationTime(r.ttft_s);
    overhead_s += r.ttft_s - r.accelbench.value("compute_ttft_s", 0.0);
  }
  st.counters["overhead_ms"] = 1000 * overhead_s / double(std::max<int64_t>(1, st.iterations()));
  st.SetItemsProcessed(int64_t(st.iterations() * kPrompt));
}
BENCHMARK(BM_TtftStreamedThroughServe)->UseManualTime()->Unit(benchmark::kMillisecond);

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n == 0 ? 0.0 : n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// The bound as a benchmark: each iteration runs the prompt in-process, then streams it
// through the loopback serve, so both see the same machine state (interleaved, not one block
// after the other). The iteration time is the streamed TTFT; the counters are the medians of
// both (ms), serve / in-process, serve - in-process (ms), the bound 1.05 x in-process + 5 ms and
// whether the streamed median is within it (1) or not (0), and the engine's thread count.
void BM_TtftServeVsInProcess(benchmark::State& st) {
  LoopbackServe serve;
  std::vector<double> local_s, served_s;
  for (auto _ : st) {
    local_s.push_back(ttft_in_process());
    const CompletionResult c = serve.stream_one();
    if (!c.ok()) {
      st.SkipWithError(c.error.c_str());
      break;
    }
    served_s.push_back(c.ttft_s);
    st.SetIterationTime(c.ttft_s);
  }
  const double local_ms = 1000 * median(local_s), served_ms = 1000 * median(served_s);
  const double bound_ms = 1.05 * local_ms + 5;
  st.counters["inproc_ms"] = local_ms;
  st.counters["serve_ms"] = served_ms;
  st.counters["ratio"] = local_ms > 0 ? served_ms / local_ms : 0;
  st.counters["diff_ms"] = served_ms - local_ms;
  st.counters["bound_ms"] = bound_ms;
  st.counters["within_bound"] = served_ms <= bound_ms ? 1 : 0;
  st.counters["threads"] = num_threads();
}
BENCHMARK(BM_TtftServeVsInProcess)->UseManualTime()->Iterations(15)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace accel

BENCHMARK_MAIN();
