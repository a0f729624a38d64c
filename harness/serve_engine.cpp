// ServeEngine (see serve_engine.h).
#include "harness/serve_engine.h"

namespace accel {

namespace {
// Thrown from Request::on_token when the job's client went away; ends the method's run there.
struct Cancelled {};
}  // namespace

ServeEngine::ServeEngine(Engine engine, size_t depth)
    : engine_(std::move(engine)), depth_(depth), worker_([this] { work(); }) {}

ServeEngine::~ServeEngine() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  worker_.join();
}

bool ServeEngine::submit(std::shared_ptr<ServeJob> job) {
  {
    std::lock_guard lock(mu_);
    if (queue_.size() + running_ >= depth_) return false;
    queue_.push_back(std::move(job));
  }
  cv_.notify_one();
  return true;
}

size_t ServeEngine::waiting() const {
  std::lock_guard lock(mu_);
  return queue_.size();
}

size_t ServeEngine::running() const {
  std::lock_guard lock(mu_);
  return running_;
}

void ServeEngine::work() {
  for (;;) {
    std::shared_ptr<ServeJob> job;
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [&] { return stop_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping with nothing left
      job = std::move(queue_.front());
      queue_.pop_front();
      ++running_;
    }
    run(*job);
    std::lock_guard lock(mu_);
    --running_;
  }
}

void ServeEngine::run(ServeJob& job) {
  {
    std::lock_guard lock(job.mu);
    job.started = ServeJob::Clock::now();
  }
  job.cv.notify_all();
  Request req = job.request;
  req.on_token = [&job](int32_t tok) {
    {
      std::lock_guard lock(job.mu);
      job.tokens.push_back(tok);
      job.token_times.push_back(ServeJob::Clock::now());
    }
    job.cv.notify_all();
    if (job.cancel.load()) throw Cancelled{};
  };
  std::optional<Outcome> out;
  std::string error;
  bool cancelled = false;
  try {
    if (job.cancel.load()) throw Cancelled{};  // the client left while the job waited
    out = job.method->run(engine_, req, job.params);
  } catch (const Cancelled&) {
    cancelled = true;
  } catch (const std::exception& e) {
    error = e.what();
  }
  {
    std::lock_guard lock(job.mu);
    job.outcome = std::move(out);
    job.error = std::move(error);
    job.cancelled = cancelled;
    job.done = true;
  }
  job.cv.notify_all();
}

}  // namespace accel
