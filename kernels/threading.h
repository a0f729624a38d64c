// The engine's thread count: one process-wide setting applied to OpenMP. Kept here because
// threading lives in kernels (ARCHITECTURE.md); callers never include <omp.h> themselves.
#pragma once

namespace accel {

void set_num_threads(int n);  // n >= 1
int num_threads();
// Threads OpenMP would use by default on this machine (before any set_num_threads call).
int default_num_threads();

}  // namespace accel
