// Tests of the machine-load probe (harness/machine_load.h): a busy child process's CPU time shows
// up in other_cpu_s, this process's own CPU time does not, and load_between's arithmetic (wall
// time, clamping of tick jitter) on hand-made samples.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "harness/machine_load.h"

namespace accel {
namespace {

double tick_s() {
  return 1.0 / double(sysconf(_SC_CLK_TCK));
}

double seconds(const timeval& t) {
  return double(t.tv_sec) + double(t.tv_usec) * 1e-6;
}

// /proc/stat and /proc/self/stat each round to whole ticks at both ends of the interval, so a
// difference of two of them can be off by up to 2 ticks each: 4 ticks in all.
double tick_tolerance_s() {
  return 4 * tick_s();
}

TEST(MachineLoad, SampleReadsTheCounters) {
  const LoadSample s = sample_load();
  EXPECT_GT(s.machine_busy_ticks, 0u);  // the machine has run something since boot
  EXPECT_GE(s.loadavg_1m, 0.0);
}

TEST(MachineLoad, BusyChildProcessCountsAsOtherCpu) {
  const LoadSample start = sample_load();
  const pid_t child = fork();
  ASSERT_GE(child, 0) << "fork failed";
  if (child == 0)
    for (;;) __asm__ __volatile__("");  // spin until killed
  std::this_thread::sleep_for(std::chrono::milliseconds(800));
  kill(child, SIGKILL);
  int status = 0;
  rusage ru{};
  ASSERT_EQ(wait4(child, &status, 0, &ru), child);
  const TrialLoad load = load_between(start, sample_load());
  const double child_cpu = seconds(ru.ru_utime) + seconds(ru.ru_stime);
  // Only meaningful if the child got some CPU; on a saturated machine it may get little.
  if (child_cpu < 10 * tick_s()) GTEST_SKIP() << "child ran only " << child_cpu << " s";
  // Other processes' CPU includes at least the child's (everything else only adds to it).
  EXPECT_GE(load.other_cpu_s, child_cpu - tick_tolerance_s())
      << "child used " << child_cpu << " s of CPU";
  EXPECT_GT(load.wall_s, 0.7);
}

TEST(MachineLoad, OwnCpuTimeIsNotCountedAsOther) {
  rusage r0{}, r1{};
  getrusage(RUSAGE_SELF, &r0);
  const LoadSample start = sample_load();
  const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(500);
  while (std::chrono::steady_clock::now() < end) {
  }
  const LoadSample stop = sample_load();
  getrusage(RUSAGE_SELF, &r1);
  const double own =
      seconds(r1.ru_utime) + seconds(r1.ru_stime) - seconds(r0.ru_utime) - seconds(r0.ru_stime);
  const TrialLoad load = load_between(start, stop);
  const double machine = double(stop.machine_busy_ticks - start.machine_busy_ticks) * tick_s();
  // What the probe attributes to this process is machine - other; it must be our own CPU time.
  EXPECT_NEAR(machine - load.other_cpu_s, own, tick_tolerance_s() + 0.02)
      << "machine " << machine << " s, other " << load.other_cpu_s << " s";
}

TEST(MachineLoad, LoadBetweenComputesWallTimeAndClampsTickJitterAtZero) {
  LoadSample a, b;
  a.when = std::chrono::steady_clock::time_point{};
  b.when = a.when + std::chrono::milliseconds(1500);
  a.machine_busy_ticks = 100;
  b.machine_busy_ticks = 101;  // the machine moved 1 tick
  a.self_ticks = 10;
  b.self_ticks = 12;  // ... while we moved 2: jitter, not negative load
  a.steal_ticks = 5;
  b.steal_ticks = 5;
  b.loadavg_1m = 1.25;
  const TrialLoad t = load_between(a, b);
  EXPECT_DOUBLE_EQ(t.wall_s, 1.5);
  EXPECT_EQ(t.other_cpu_s, 0.0);
  EXPECT_EQ(t.steal_s, 0.0);
  EXPECT_EQ(t.loadavg_1m, 1.25);

  b.machine_busy_ticks = 100 + 3 * uint64_t(sysconf(_SC_CLK_TCK));  // 3 s of machine time
  b.self_ticks = 10 + uint64_t(sysconf(_SC_CLK_TCK));               // 1 s of ours
  EXPECT_NEAR(load_between(a, b).other_cpu_s, 2.0, 1e-12);
}

}  // namespace
}  // namespace accel
