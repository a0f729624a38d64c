// Google Benchmark of accel::gemm over the `small` benchmark model's projection shapes (hidden 768,
// FFN 2048) for every weight type, M in {1, 16, 256, 2048} and 1 or 2 threads: GFLOP/s, the
// fraction of the FMA peak measured in the same process, and GB/s of packed weights + X + Y. And a
// Q4_K_M layer's mixed-type QKV weight at M 1 and 16.
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

// A Q4_K_M layer's fused QKV projection in the `medium` family's shape (TinyLlama-1.1B: hidden
// 2048, 4 KV heads of 64): Q and K in q4_K, V in q6_K, one mixed weight, so one call multiplies
// three parts of different types (gemm.cpp runs them in one parallel region). Args: M, threads.
// The counters are per call: GB/s of packed weights, and microseconds.
void BM_GemmMixedQKV(benchmark::State& state) {
  const size_t M = size_t(state.range(0)), K = 2048;
  const int threads = int(state.range(1));
  static const accel::PackedWeight W = [] {
    const std::pair<DType, size_t> parts[] = {
        {DType::Q4_K, 2048}, {DType::Q4_K, 256}, {DType::Q6_K, 256}};
    std::vector<std::vector<uint8_t>> raws;
    std::vector<accel::PackedWeight::TypedRowSource> src;
    for (const auto& [t, rows] : parts) {
      const std::vector<float> w = accel::test::random_normal(rows * K, 77 + rows, 0.05f);
      raws.emplace_back(accel::dtype_row_bytes(t, K) * rows);
      accel::quantize_row(t, w.data(), raws.back().data(), rows * K);
    }
    for (size_t i = 0; i < raws.size(); ++i)
      src.push_back({parts[i].first, {raws[i].data(), parts[i].second}});
    return accel::PackedWeight::pack_mixed(src, K);
  }();
  accel::set_num_threads(threads);
  const accel::ScopedParallelBackoff all_threads(false);
  const std::vector<float> x = accel::test::random_normal(M * K, 98);
  std::vector<float> y(M * W.rows());
  for (auto _ : state) {
    accel::gemm(x.data(), M, K, W, y.data(), W.rows());
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  state.counters["GB/s"] =
      benchmark::Counter(double(W.bytes()) * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  state.SetLabel("q4_K 2048 + q4_K 256 + q6_K 256 rows, K=2048, M=" + std::to_string(M) +
                 " t=" + std::to_string(threads));
  accel::set_num_threads(accel::default_num_threads());
}

BENCHMARK(BM_GemmMixedQKV)
    ->ArgNames({"M", "threads"})
    ->ArgsProduct({{1, 16}, {1, 2}})
    ->UseRealTime()
    ->MinTime(0.2)
    ->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
