// Google Benchmark of accel::gemm on k-quant weights (q4_K, q5_K, q6_K) and mxfp4 (GPT-OSS's
// experts) beside q8_0 and q4_0 in
// the same process: decode GEMV (M = 1), verify (M = 16) and prefill (M = 256) over a 4096 x 4096
// weight, 1 or 2 threads. Reports GB/s of packed weight bytes read (the decode figure of merit),
// GFLOP/s, and speed relative to q8_0 at the same M and threads (q8_0 runs first in each group).
// Each entry also reports its bytes and multiply-adds, and the run measures the machine's read
// bandwidth and compute peaks (machine_rates.h), so `accelbench bench-table --family kquant
// --reference q8_0 --floor none` gives every entry's time over its roofline bound.
// Measures only; correctness lives in tests/kernels/{gemm,kquant}_test.cpp.
#include <benchmark/benchmark.h>

#include <chrono>
#include <map>
#include <string>
#include <vector>

#include "kernels/dtype.h"
#include "kernels/gemm.h"
#include "kernels/quant.h"
#include "kernels/threading.h"
#include "tests/bench/machine_rates.h"
#include "tests/support/test_support.h"

namespace {

using accel::DType;

constexpr DType kTypes[] = {DType::Q8_0, DType::Q4_0, DType::Q4_K,
                            DType::Q5_K, DType::Q6_K, DType::MXFP4};
constexpr size_t kN = 4096, kK = 4096;
// Calls cycle through this many separately packed copies, so the weights streamed per call come
// from memory rather than a cache that kept the previous call's (4 x 9.4 MB for q4_K, 4 x 17.8 MB
// for q8_0: past the last-level cache of the machines this runs on).
constexpr int kCopies = 4;

const std::vector<accel::PackedWeight>& weights(int ti) {
  static std::map<int, std::vector<accel::PackedWeight>> cache;
  auto it = cache.find(ti);
  if (it != cache.end()) return it->second;
  const std::vector<float> w = accel::test::random_normal(kN * kK, 4321, 0.02f);
  std::vector<uint8_t> raw(accel::dtype_row_bytes(kTypes[ti], kK) * kN);
  accel::quantize_row(kTypes[ti], w.data(), raw.data(), kN * kK);
  std::vector<accel::PackedWeight> v;
  for (int c = 0; c < kCopies; ++c)
    v.push_back(accel::PackedWeight::pack(kTypes[ti], raw.data(), kN, kK));
  return cache[ti] = std::move(v);
}

// Seconds per call of q8_0 at (M, threads), recorded when its benchmark runs.
std::map<std::pair<int64_t, int>, double>& q8_seconds() {
  static std::map<std::pair<int64_t, int>, double> m;
  return m;
}

// Every type but q4_0 multiplies with integer dot products on q8_0-quantized activations
// (gemm_intdot_part); q4_0 widens its codes to f32 and uses FMAs. The roofline counter follows.
bool integer_dot(DType t) {
  return t != DType::Q4_0;
}

void BM_KQuantGemm(benchmark::State& state, int ti, size_t M, int threads) {
  accel::set_num_threads(threads);
  // The thread count asked for, throughout (threading.h's back-off would run regions on one).
  const accel::ScopedParallelBackoff all_threads(false);
  const auto& W = weights(ti);
  const std::vector<float> x = accel::test::random_normal(M * kK, 99);
  std::vector<float> y(M * kN);
  int c = 0;
  const auto t0 = std::chrono::steady_clock::now();
  for (auto _ : state) {
    accel::gemm(x.data(), M, kK, W[size_t(c)], y.data(), kN);
    c = (c + 1) % kCopies;
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const double it = double(state.iterations()), per_call = secs / it;
  state.counters["weight_GB/s"] = double(W[0].bytes()) / per_call * 1e-9;
  state.counters["GFLOP/s"] = 2.0 * double(M) * kN * kK / per_call * 1e-9;
  state.counters["bits/weight"] = 8.0 * double(W[0].bytes()) / double(kN * kK);
  // What the roofline column (accelbench bench-table) bounds the call by: the packed weights
  // read, and the multiply-adds as the instruction mix does them.
  state.counters["bytes"] = double(W[0].bytes());
  state.counters["threads"] = threads;
  const double macs = double(M) * kN * kK;
  state.counters[integer_dot(kTypes[ti]) ? "int8_macs" : "fma_flops"] =
      integer_dot(kTypes[ti]) ? macs : 2 * macs;
  auto& q8 = q8_seconds();
  if (kTypes[ti] == DType::Q8_0) q8[{int64_t(M), threads}] = per_call;
  const auto f = q8.find({int64_t(M), threads});
  if (f != q8.end()) state.counters["speed_vs_q8_0"] = f->second / per_call;
  state.SetLabel(std::string(accel::dtype_name(kTypes[ti])) + " M=" + std::to_string(M) +
                 " t=" + std::to_string(threads));
  accel::set_num_threads(accel::default_num_threads());
}

// Names kquant/<type>/m<M>-t<threads>/4096, the form `accelbench bench-table --family kquant
// --reference q8_0` reads; the type varies fastest, so q8_0 runs first for each M and threads.
void register_all() {
  accel::bench::register_machine_rates("kquant");
  for (int threads : {1, 2})
    for (size_t M : {size_t(1), size_t(16), size_t(256)})
      for (int ti = 0; ti < int(std::size(kTypes)); ++ti) {
        const std::string name = "kquant/" + std::string(accel::dtype_name(kTypes[ti])) + "/m" +
                                 std::to_string(M) + "-t" + std::to_string(threads) + "/" +
                                 std::to_string(kK);
        benchmark::RegisterBenchmark(name.c_str(), BM_KQuantGemm, ti, M, threads)
            ->UseRealTime()
            ->MinTime(0.3)
            ->Unit(benchmark::kMillisecond);
      }
}

}  // namespace

int main(int argc, char** argv) {
  register_all();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
