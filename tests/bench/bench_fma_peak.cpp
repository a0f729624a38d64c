// Google Benchmark wrapper around accel::measure_fma_peak_gflops and measure_int8_dot_peak_gops for
// 1 and 2 threads, so the peaks that kernel results are divided by are themselves on record.
// Measures only.
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

// Arg: threads. The u8 x s8 dot-product peak of the kernels' instruction sequence (G MACs/s).
void BM_Int8DotPeak(benchmark::State& state) {
  const int threads = int(state.range(0));
  double gops = 0;
  for (auto _ : state) {
    gops = accel::measure_int8_dot_peak_gops(threads, 0.2);
    benchmark::DoNotOptimize(gops);
  }
  state.counters["GMAC/s"] = gops;
  state.counters["GMAC/s/thread"] = gops / threads;
  state.SetLabel(accel::int8_dot_instruction());
}

BENCHMARK(BM_Int8DotPeak)
    ->ArgName("threads")
    ->Arg(1)
    ->Arg(2)
    ->UseRealTime()
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);

BENCHMARK(BM_FmaPeak)
    ->ArgName("threads")
    ->Arg(1)
    ->Arg(2)
    ->UseRealTime()
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
