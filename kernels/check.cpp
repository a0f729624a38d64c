// The failure path of ACCEL_CHECK (check.h): one line on stderr, then abort. Must not throw or
// allocate: it runs when the process state is already known to be wrong.
#include "kernels/check.h"

#include <cstdarg>
#include <cstdio>
#include <cstdlib>

namespace accel::detail {

void check_failed(const char* file, int line, const char* condition, const char* format, ...) {
  std::fprintf(stderr, "%s:%d: check failed: %s: ", file, line, condition);
  va_list args;
  va_start(args, format);
  std::vfprintf(stderr, format, args);
  va_end(args);
  std::fputc('\n', stderr);
  std::fflush(stderr);
  std::abort();
}

}  // namespace accel::detail
