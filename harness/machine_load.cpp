// /proc readers behind machine_load.h. Kernel ticks (USER_HZ) are converted with sysconf; the
// machine total and this process's own time come from the same tick counters, so their difference
// is the rest of the machine's CPU time.
#include "harness/machine_load.h"

#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

namespace accel {

namespace {

[[noreturn]] void fail(const std::string& file, const std::string& what) {
  throw std::runtime_error("[machine_load] " + file + ": " + what);
}

std::string read_first_line(const std::string& file) {
  std::ifstream in(file);
  std::string line;
  if (!in || !std::getline(in, line)) fail(file, "cannot read");
  return line;
}

// "cpu  user nice system idle iowait irq softirq steal guest guest_nice" (guest time is already
// counted in user and nice, so it is not added again).
void read_machine(LoadSample& s) {
  const std::string file = "/proc/stat";
  std::istringstream in(read_first_line(file));
  std::string label;
  uint64_t user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0;
  in >> label >> user >> nice >> system >> idle >> iowait >> irq >> softirq;
  if (!in || label != "cpu") fail(file, "first line is not the aggregate 'cpu' line");
  if (!(in >> steal)) steal = 0;  // kernels before 2.6.11 have no steal field
  s.machine_busy_ticks = user + nice + system + irq + softirq;
  s.steal_ticks = steal;
}

// Field 2 (comm) is parenthesised and may hold spaces: parse from the last ')'. utime and stime
// are fields 14 and 15, i.e. the 12th and 13th after the ')'.
void read_self(LoadSample& s) {
  const std::string file = "/proc/self/stat";
  const std::string line = read_first_line(file);
  const size_t close = line.rfind(')');
  if (close == std::string::npos) fail(file, "no ')' after the command name");
  std::istringstream in(line.substr(close + 1));
  std::string field;
  for (int i = 0; i < 11; ++i) in >> field;  // state .. cmajflt
  uint64_t utime = 0, stime = 0;
  if (!(in >> utime >> stime)) fail(file, "cannot parse utime/stime");
  s.self_ticks = utime + stime;
}

double read_loadavg_1m() {
  const std::string file = "/proc/loadavg";
  std::istringstream in(read_first_line(file));
  double v = 0;
  if (!(in >> v)) fail(file, "cannot parse the 1-minute load average");
  return v;
}

double seconds_per_tick() {
  static const double s = [] {
    const long hz = sysconf(_SC_CLK_TCK);
    if (hz <= 0) fail("sysconf(_SC_CLK_TCK)", "no clock-tick rate");
    return 1.0 / double(hz);
  }();
  return s;
}

double ticks_to_s(uint64_t a, uint64_t b) {
  return (double(b) - double(a)) * seconds_per_tick();
}

}  // namespace

LoadSample sample_load() {
  LoadSample s;
  read_self(s);
  read_machine(s);
  s.loadavg_1m = read_loadavg_1m();
  s.when = std::chrono::steady_clock::now();
  return s;
}

TrialLoad load_between(const LoadSample& a, const LoadSample& b) {
  TrialLoad t;
  const double machine = ticks_to_s(a.machine_busy_ticks, b.machine_busy_ticks);
  const double self = ticks_to_s(a.self_ticks, b.self_ticks);
  t.other_cpu_s = std::max(0.0, machine - self);
  t.steal_s = std::max(0.0, ticks_to_s(a.steal_ticks, b.steal_ticks));
  t.wall_s = std::chrono::duration<double>(b.when - a.when).count();
  t.loadavg_1m = b.loadavg_1m;
  return t;
}

}  // namespace accel
