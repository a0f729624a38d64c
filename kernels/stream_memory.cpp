// stream_alloc (stream_memory.h): aligned_alloc plus huge-page advice, and the system's mode read
// from sysfs for the run record.
#include "kernels/stream_memory.h"

#include <sys/mman.h>

#include <fstream>

namespace accel {

void* stream_alloc(size_t bytes) {
  if (bytes == 0) bytes = 1;
  const bool huge = bytes >= kStreamHugePageBytes;
  const size_t align = huge ? kStreamHugePageBytes : 64;
  if (bytes > std::numeric_limits<size_t>::max() - align) throw std::bad_alloc();
  const size_t rounded = (bytes + align - 1) / align * align;  // aligned_alloc's contract
  void* p = std::aligned_alloc(align, rounded);
  if (!p) throw std::bad_alloc();
  // Advice only: where the system refuses it (mode "never", or no THP support) the buffer stays
  // on 4 KiB pages and works the same.
  if (huge) (void)madvise(p, rounded, MADV_HUGEPAGE);
  return p;
}

void stream_free(void* p) noexcept {
  std::free(p);
}

std::string parse_hugepage_mode(const std::string& line) {
  const auto open = line.find('['), close = line.find(']');
  if (open == std::string::npos || close == std::string::npos || close <= open + 1)
    return "unknown";
  return line.substr(open + 1, close - open - 1);
}

std::string transparent_hugepage_mode() {
  std::ifstream f("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string line;
  if (!f || !std::getline(f, line)) return "unknown";
  return parse_hugepage_mode(line);
}

}  // namespace accel
