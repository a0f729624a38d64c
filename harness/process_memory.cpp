// Peak RSS helpers (see process_memory.h).
#include "harness/process_memory.h"

#include <fstream>
#include <string>

namespace accel {

void reset_peak_rss() {
  std::ofstream f("/proc/self/clear_refs");
  if (f) f << "5";
}

int64_t status_field_bytes(const std::string& name) {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind(name, 0) == 0) return std::stoll(line.substr(name.size())) * 1024;
  return 0;
}

int64_t peak_rss_bytes() {
  return status_field_bytes("VmHWM:");
}

int64_t current_rss_bytes() {
  return status_field_bytes("VmRSS:");
}

}  // namespace accel
