// The counters and latency histograms of `accelbench serve`, rendered in the Prometheus text
// exposition format for GET /metrics. Thread-safe (one mutex); owns no HTTP and no engine. Queueing
// delay and compute time are separate series, so a slow answer says which it was.
#pragma once
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace accel {

// A cumulative Prometheus histogram over fixed upper bounds (seconds).
class LatencyHistogram {
 public:
  explicit LatencyHistogram(std::vector<double> bounds);
  void observe(double seconds);
  void render(const std::string& name, const std::string& help, std::string& out) const;
  uint64_t count() const { return count_; }

 private:
  std::vector<double> bounds_;
  std::vector<uint64_t> buckets_;  // per bound, not cumulative; render accumulates
  uint64_t count_ = 0;
  double sum_ = 0;
};

// What one finished (or refused) request contributes.
struct RequestRecord {
  std::string endpoint;  // "completions", "chat", "models", ...
  int status = 200;
  bool cancelled = false;      // the client went away mid-stream
  std::string method;          // "" when none ran
  std::string fallback;        // the method's declared fallback reason, "" when none
  double queue_s = -1;         // admitted -> the engine took it (-1: never queued)
  double ttft_s = -1;          // admitted -> first token (queueing included)
  double compute_ttft_s = -1;  // the method's own TTFT (prompt in hand -> first token)
  double e2e_s = -1;
  std::vector<double> itl_s;  // gaps between consecutive tokens as the engine produced them
  int64_t prompt_tokens = 0, prefilled_tokens = 0, generated_tokens = 0;
};

class ServeMetrics {
 public:
  ServeMetrics();
  void record(const RequestRecord& r);
  void set_queue(size_t waiting, size_t running);
  std::string render() const;
  // Requests counted under an endpoint and status (tests compare these with a client's counts).
  uint64_t requests(const std::string& endpoint, int status) const;

 private:
  mutable std::mutex mu_;
  std::map<std::pair<std::string, int>, uint64_t> requests_;
  std::map<std::pair<std::string, std::string>, uint64_t> method_use_;  // (method, fallback)
  uint64_t cancelled_ = 0;
  int64_t prompt_tokens_ = 0, prefilled_tokens_ = 0, generated_tokens_ = 0;
  size_t waiting_ = 0, running_ = 0;
  LatencyHistogram queue_, ttft_, compute_ttft_, itl_, e2e_;
};

}  // namespace accel
