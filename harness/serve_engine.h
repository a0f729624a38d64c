// The engine side of `accelbench serve`: a bounded FIFO of generation jobs and one worker thread
// that runs them one at a time through their method (so prefill is serialised, as in the
// SpecPrefill study's system; decode is not batched). Jobs stream their tokens to the HTTP thread
// that waits on them and are cancelled at the next token when that thread says the client left.
// Owns no HTTP, no JSON formatting and no tokenizing.
#pragma once
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "methods/method.h"

namespace accel {

struct ServeJob {
  using Clock = std::chrono::steady_clock;
  // Set before submit().
  const Method* method = nullptr;
  nlohmann::json params;  // resolved
  Request request;        // on_token is the engine's
  Clock::time_point admitted = Clock::now();

  // Set by the worker, read under mu.
  std::mutex mu;
  std::condition_variable cv;
  std::vector<int32_t> tokens;
  std::vector<Clock::time_point> token_times;
  std::optional<Clock::time_point> started;
  bool done = false;
  bool cancelled = false;  // stopped because cancel was set
  std::optional<Outcome> outcome;
  std::string error;  // the method threw (done with no outcome)

  std::atomic<bool> cancel{false};  // set by the HTTP side: the client went away
};

class ServeEngine {
 public:
  // `depth` bounds the jobs admitted and not finished (waiting + running).
  ServeEngine(Engine engine, size_t depth);
  ~ServeEngine();
  ServeEngine(const ServeEngine&) = delete;
  ServeEngine& operator=(const ServeEngine&) = delete;

  // Admits the job, or returns false when `depth` jobs are already admitted.
  bool submit(std::shared_ptr<ServeJob> job);
  const Engine& engine() const { return engine_; }
  size_t waiting() const;
  size_t running() const;

 private:
  void work();
  void run(ServeJob& job);

  Engine engine_;
  size_t depth_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::shared_ptr<ServeJob>> queue_;
  size_t running_ = 0;
  bool stop_ = false;
  std::thread worker_;
};

}  // namespace accel
