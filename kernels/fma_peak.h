// Measures the machine's FP32 FMA peak (GFLOP/s) with a register-only kernel, so benchmarks and the
// harness can express kernel throughput as a fraction of peak. Must not touch memory in the timed
// loop or depend on anything else in the engine.
#pragma once

namespace accel {

// Runs independent FMA chains on `threads` OpenMP threads for about `seconds` per vector width
// (AVX-512 when compiled in, and AVX2) and returns the best rate in GFLOP/s (2 flops per FMA lane).
double measure_fma_peak_gflops(int threads, double seconds);

}  // namespace accel
