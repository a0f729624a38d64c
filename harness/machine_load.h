// How busy the rest of the machine was during a trial, from /proc (Linux): other processes' CPU
// time, the wall time and the 1-minute load average. Owns only the sampling and the arithmetic;
// it must not decide whether a trial was too noisy (reports filter on the stored figures).
#pragma once

#include <chrono>
#include <cstdint>

namespace accel {

// One reading; take one before and one after the work you time.
struct LoadSample {
  uint64_t machine_busy_ticks = 0;  // /proc/stat "cpu": user+nice+system+irq+softirq
  uint64_t steal_ticks = 0;         // /proc/stat "cpu": time the hypervisor ran other guests
  uint64_t self_ticks = 0;          // /proc/self/stat: utime+stime of all this process's threads
  std::chrono::steady_clock::time_point when;
  double loadavg_1m = 0;  // /proc/loadavg
};

struct TrialLoad {
  double other_cpu_s = 0;  // CPU seconds used by every other process over the interval
  double steal_s = 0;      // CPU seconds the hypervisor gave to other guests (0 on bare metal)
  double wall_s = 0;       // the interval's wall time
  double loadavg_1m = 0;   // at the end of the interval
};

// Throws std::runtime_error naming the file when /proc cannot be read or parsed.
LoadSample sample_load();

// Other CPU and steal are clamped at 0: /proc/stat and /proc/self/stat tick at the clock-tick
// granularity (usually 10 ms) and independently, so short intervals can read slightly negative.
TrialLoad load_between(const LoadSample& start, const LoadSample& stop);

}  // namespace accel
