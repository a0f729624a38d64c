// OpenMP thread-count plumbing (see threading.h).
#include "kernels/threading.h"

#include <omp.h>

namespace accel {

namespace {
const int kDefaultThreads = omp_get_max_threads();
}

void set_num_threads(int n) {
  omp_set_num_threads(n < 1 ? 1 : n);
}
int num_threads() {
  return omp_get_max_threads();
}
int default_num_threads() {
  return kDefaultThreads;
}

}  // namespace accel
