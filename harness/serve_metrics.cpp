// ServeMetrics (see serve_metrics.h).
#include "harness/serve_metrics.h"

#include <cstdio>

namespace accel {

namespace {

std::string num(double x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.9g", x);
  return buf;
}

// Label values escape backslash, quote and newline (exposition format).
std::string label(const std::string& v) {
  std::string s;
  for (char c : v) {
    if (c == '\\' || c == '"') s += '\\';
    s += c == '\n' ? 'n' : c;
  }
  return s;
}

void header(std::string& out, const std::string& name, const std::string& type,
            const std::string& help) {
  out += "# HELP " + name + " " + help + "\n# TYPE " + name + " " + type + "\n";
}

// Seconds: 1 ms .. 60 s, roughly x2.5 apart; token gaps start lower (a tiny model decodes in
// well under a millisecond).
std::vector<double> latency_bounds() {
  return {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60};
}
std::vector<double> token_bounds() {
  return {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1};
}

}  // namespace

LatencyHistogram::LatencyHistogram(std::vector<double> bounds)
    : bounds_(std::move(bounds)), buckets_(bounds_.size(), 0) {}

void LatencyHistogram::observe(double s) {
  for (size_t i = 0; i < bounds_.size(); ++i)
    if (s <= bounds_[i]) {
      ++buckets_[i];
      break;
    }
  ++count_;
  sum_ += s;
}

void LatencyHistogram::render(const std::string& name, const std::string& help,
                              std::string& out) const {
  header(out, name, "histogram", help);
  uint64_t cum = 0;
  for (size_t i = 0; i < bounds_.size(); ++i) {
    cum += buckets_[i];
    out += name + "_bucket{le=\"" + num(bounds_[i]) + "\"} " + std::to_string(cum) + "\n";
  }
  out += name + "_bucket{le=\"+Inf\"} " + std::to_string(count_) + "\n";
  out += name + "_sum " + num(sum_) + "\n" + name + "_count " + std::to_string(count_) + "\n";
}

ServeMetrics::ServeMetrics()
    : queue_(latency_bounds()),
      ttft_(latency_bounds()),
      compute_ttft_(latency_bounds()),
      itl_(token_bounds()),
      e2e_(latency_bounds()) {}

void ServeMetrics::record(const RequestRecord& r) {
  std::lock_guard lock(mu_);
  ++requests_[{r.endpoint, r.status}];
  cancelled_ += r.cancelled;
  if (!r.method.empty()) ++method_use_[{r.method, r.fallback}];
  prompt_tokens_ += r.prompt_tokens;
  prefilled_tokens_ += r.prefilled_tokens;
  generated_tokens_ += r.generated_tokens;
  if (r.queue_s >= 0) queue_.observe(r.queue_s);
  if (r.ttft_s >= 0) ttft_.observe(r.ttft_s);
  if (r.compute_ttft_s >= 0) compute_ttft_.observe(r.compute_ttft_s);
  if (r.e2e_s >= 0) e2e_.observe(r.e2e_s);
  for (double g : r.itl_s) itl_.observe(g);
}

void ServeMetrics::set_queue(size_t waiting, size_t running) {
  std::lock_guard lock(mu_);
  waiting_ = waiting;
  running_ = running;
}

uint64_t ServeMetrics::requests(const std::string& endpoint, int status) const {
  std::lock_guard lock(mu_);
  const auto it = requests_.find({endpoint, status});
  return it == requests_.end() ? 0 : it->second;
}

std::string ServeMetrics::render() const {
  std::lock_guard lock(mu_);
  std::string out;
  header(out, "accelbench_requests_total", "counter", "HTTP requests by endpoint and status");
  for (const auto& [k, n] : requests_)
    out += "accelbench_requests_total{endpoint=\"" + label(k.first) + "\",status=\"" +
           std::to_string(k.second) + "\"} " + std::to_string(n) + "\n";
  header(out, "accelbench_requests_cancelled_total", "counter",
         "Requests whose client went away before the answer ended");
  out += "accelbench_requests_cancelled_total " + std::to_string(cancelled_) + "\n";
  header(out, "accelbench_method_requests_total", "counter",
         "Generations by the method that ran and its declared fallback reason (\"\" = none)");
  for (const auto& [k, n] : method_use_)
    out += "accelbench_method_requests_total{method=\"" + label(k.first) + "\",fallback=\"" +
           label(k.second) + "\"} " + std::to_string(n) + "\n";
  header(out, "accelbench_prompt_tokens_total", "counter", "Prompt tokens of finished generations");
  out += "accelbench_prompt_tokens_total " + std::to_string(prompt_tokens_) + "\n";
  header(out, "accelbench_prefill_tokens_total", "counter",
         "Prompt tokens the target prefilled (fewer than the prompt under sparse prefill)");
  out += "accelbench_prefill_tokens_total " + std::to_string(prefilled_tokens_) + "\n";
  header(out, "accelbench_decode_tokens_total", "counter", "Generated tokens");
  out += "accelbench_decode_tokens_total " + std::to_string(generated_tokens_) + "\n";
  header(out, "accelbench_queue_waiting", "gauge", "Admitted requests waiting for the engine");
  out += "accelbench_queue_waiting " + std::to_string(waiting_) + "\n";
  header(out, "accelbench_queue_running", "gauge", "Requests the engine is running");
  out += "accelbench_queue_running " + std::to_string(running_) + "\n";
  queue_.render("accelbench_queue_seconds", "Admission to the engine taking the request", out);
  ttft_.render("accelbench_ttft_seconds", "Admission to the first token (queueing included)", out);
  compute_ttft_.render("accelbench_compute_ttft_seconds",
                       "The method's TTFT: prompt tokens in hand to the first token", out);
  itl_.render("accelbench_inter_token_seconds", "Gap between consecutive generated tokens", out);
  e2e_.render("accelbench_request_seconds", "Admission to the last token", out);
  return out;
}

}  // namespace accel
