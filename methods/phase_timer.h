// PhaseTimer: one monotonic clock around named phases of a request (ARCHITECTURE.md invariant 3).
// Owns only the clock and the ordered list of (phase, seconds); methods decide what a phase is.
#pragma once
#include <chrono>
#include <string>
#include <utility>
#include <vector>

namespace accel {

class PhaseTimer {
 public:
  using Clock = std::chrono::steady_clock;
  PhaseTimer() : start_(Clock::now()), mark_(start_) {}

  // Closes the phase that began at the previous mark (or at construction) under `name`.
  void lap(const std::string& name) {
    const auto now = Clock::now();
    phases_.emplace_back(name, std::chrono::duration<double>(now - mark_).count());
    mark_ = now;
  }
  // Runs f outside the clock: the open phase and the request's elapsed time both exclude it. For
  // measurements a method takes for the record (e.g. SpecPrefill's state drift), never for work
  // the method itself needs.
  template <class F>
  void untimed(F&& f) {
    const auto t0 = Clock::now();
    f();
    const auto skipped = Clock::now() - t0;
    start_ += skipped;
    mark_ += skipped;
  }
  // Seconds since construction (the moment the prompt tokens were in hand), less untimed work.
  double elapsed() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }
  const std::vector<std::pair<std::string, double>>& phases() const { return phases_; }

 private:
  Clock::time_point start_, mark_;
  std::vector<std::pair<std::string, double>> phases_;
};

}  // namespace accel
