// Google Benchmark wrapper around accel::measure_fma_peak_gflops for 1 and 2 threads, so the peak
// that GEMM results are divided by is itself on record. Measures only.
#include <benchmark/benchmark.h>

#include "kernels/fma_peak.h"

namespace {

// Arg: threads. Each iteration is one 0.2 s probe; the counter is its GFLOP/s.
void BM_FmaPeak(benchmark::State& state) {
  const int threads = int(state.range(0));
  double gflops = 0;
  for (auto _ : state) {
    gflops = accel::measure_fma_peak_gflops(threads, 0.2);
    benchmark::DoNotOptimize(gflops);
  }
  state.counters["GFLOP/s"] = gflops;
  state.counters["GFLOP/s/thread"] = gflops / threads;
}

BENCHMARK(BM_FmaPeak)
    ->ArgName("threads")
    ->Arg(1)
    ->Arg(2)
    ->UseRealTime()
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
