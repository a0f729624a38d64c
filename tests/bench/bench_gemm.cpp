// Google Benchmark of accel::gemm over the `small` benchmark model's projection shapes (hidden 768,
// FFN 2048) for every weight type, M in {1, 16, 256, 2048} and 1 or 2 threads. Reports GFLOP/s,
// the fraction of the FMA peak measured in the same process, and GB/s of packed weights + X + Y.
// Measures only; correctness lives in tests/kernels/gemm_test.cpp.
#include <benchmark/benchmark.h>

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "kernels/dtype.h"
#include "kernels/fma_peak.h"
#include "kernels/gemm.h"
#include "kernels/quant.h"
#include "kernels/threading.h"
#include "tests/support/test_support.h"

namespace {

using accel::DType;

constexpr DType kTypes[] = {DType::F32, DType::F16, DType::BF16, DType::Q8_0, DType::Q4_0};
struct Shape {
  size_t n, k;
};
// [M x K] · [N x K]ᵀ: attention projection, FFN up/gate, FFN down.
constexpr Shape kShapes[] = {{768, 768}, {2048, 768}, {768, 2048}};

// Packed weights per (type, shape), built once: packing is load-time work, not GEMM time.
const accel::PackedWeight& weight(int ti, int si) {
  static std::map<std::pair<int, int>, accel::PackedWeight> cache;
  auto it = cache.find({ti, si});
  if (it != cache.end()) return it->second;
  const Shape s = kShapes[si];
  const std::vector<float> w = accel::test::random_normal(s.n * s.k, 1234 + si, 0.05f);
  std::vector<uint8_t> raw(accel::dtype_row_bytes(kTypes[ti], s.k) * s.n);
  accel::quantize_row(kTypes[ti], w.data(), raw.data(), s.n * s.k);
  return cache[{ti, si}] = accel::PackedWeight::pack(kTypes[ti], raw.data(), s.n, s.k);
}

double peak_gflops(int threads) {
  static std::map<int, double> cache;
  auto it = cache.find(threads);
  if (it != cache.end()) return it->second;
  return cache[threads] = accel::measure_fma_peak_gflops(threads, 0.5);
}

// Args: M, type index, shape index, threads.
void BM_Gemm(benchmark::State& state) {
  const size_t M = size_t(state.range(0));
  const int ti = int(state.range(1)), si = int(state.range(2)), threads = int(state.range(3));
  const Shape s = kShapes[si];
  const double peak = peak_gflops(threads);
  accel::set_num_threads(threads);
  // The thread count asked for, throughout (threading.h's back-off would run regions on one).
  const accel::ScopedParallelBackoff all_threads(false);
  const accel::PackedWeight& W = weight(ti, si);
  const std::vector<float> x = accel::test::random_normal(M * s.k, 99);
  std::vector<float> y(M * s.n);
  // Own wall clock around the loop (same span UseRealTime() reports) so the counters are plain
  // numbers rather than Google Benchmark's "/s"-suffixed rates.
  const auto t0 = std::chrono::steady_clock::now();
  for (auto _ : state) {
    accel::gemm(x.data(), M, s.k, W, y.data(), s.n);
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const double flops = 2.0 * double(M) * double(s.n) * double(s.k);
  const double bytes = double(W.bytes()) + 4.0 * double(M) * double(s.k + s.n);
  const double it = double(state.iterations());
  const double gflops = flops * it / secs * 1e-9;
  state.counters["GFLOP/s"] = gflops;
  state.counters["peak_frac"] = gflops / peak;
  state.counters["GB/s"] = bytes * it / secs * 1e-9;  // packed weights + X + Y per call
  state.counters["peak_GFLOP/s"] = peak;
  state.SetLabel(std::string(accel::dtype_name(kTypes[ti])) + " M=" + std::to_string(M) +
                 " N=" + std::to_string(s.n) + " K=" + std::to_string(s.k) +
                 " t=" + std::to_string(threads));
  accel::set_num_threads(accel::default_num_threads());
}

BENCHMARK(BM_Gemm)
    ->ArgNames({"M", "type", "shape", "threads"})
    ->ArgsProduct({{1, 16, 256, 2048}, {0, 1, 2, 3, 4}, {0, 1, 2}, {1, 2}})
    ->UseRealTime()
    ->MinTime(0.2)
    ->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
