// Google Benchmark of accel::attention_causal on the `small` model's attention shape (12 query
// heads, 4 kv heads, head_dim 64; one head_dim 128 case each): causal prefill (n_q = n_kv) in
// GFLOP/s and fraction of the FMA peak measured in this process, decode (n_q = 1) in GB/s of K/V
// read. Measures only; correctness and batch invariance live in tests/kernels/attention_test.cpp.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "kernels/attention.h"
#include "kernels/fma_peak.h"
#include "kernels/threading.h"
#include "tests/support/test_support.h"

namespace {

struct Inputs {
  accel::AttentionShape s;
  size_t n_q, n_kv;
  std::vector<float> q, k, v, out;
  std::vector<int32_t> q_pos, kv_pos;
};

// Queries are the last n_q rows of a cache of n_kv contiguous positions (prefill: n_q == n_kv).
Inputs make(int D, size_t n_q, size_t n_kv) {
  Inputs in;
  in.s = {12, 4, D, float(1.0 / std::sqrt(double(D)))};
  in.n_q = n_q;
  in.n_kv = n_kv;
  in.q = accel::test::random_normal(n_q * 12 * D, 1);
  in.k = accel::test::random_normal(n_kv * 4 * D, 2);
  in.v = accel::test::random_normal(n_kv * 4 * D, 3);
  in.out.assign(n_q * 12 * D, 0.f);
  for (size_t j = 0; j < n_kv; ++j) in.kv_pos.push_back(int32_t(j));
  for (size_t i = 0; i < n_q; ++i) in.q_pos.push_back(int32_t(n_kv - n_q + i));
  return in;
}

void call(Inputs& in) {
  const size_t wq = size_t(in.s.n_heads) * in.s.head_dim,
               wk = size_t(in.s.n_kv_heads) * in.s.head_dim;
  accel::attention_causal(in.s, in.q.data(), wq, in.q_pos.data(), in.n_q, in.k.data(), in.v.data(),
                          wk, in.kv_pos.data(), in.n_kv, in.out.data(), wq);
}

double fma_peak(int threads) {
  static double peak[3] = {0, 0, 0};
  if (peak[threads] == 0) peak[threads] = accel::measure_fma_peak_gflops(threads, 0.3);
  return peak[threads];
}

// Args: n (= n_q = n_kv), head_dim, threads.
void BM_Prefill(benchmark::State& state) {
  const size_t n = size_t(state.range(0));
  const int D = int(state.range(1)), threads = int(state.range(2));
  const double peak = fma_peak(threads);
  accel::set_num_threads(threads);
  Inputs in = make(D, n, n);
  for (auto _ : state) {
    call(in);
    benchmark::DoNotOptimize(in.out.data());
  }
  // 4 * D flops per visible (query, key) pair per head: q.k and p.v, one FMA = 2 flops each.
  const double pairs = double(n) * double(n + 1) / 2;
  const double flops = 4.0 * D * pairs * in.s.n_heads;
  state.counters["GFLOP/s"] =
      benchmark::Counter(flops * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["peak_GFLOP/s"] = peak;
  state.counters["frac_peak"] =
      benchmark::Counter(flops * 1e-9 / peak, benchmark::Counter::kIsIterationInvariantRate);
}

// Args: n_kv, head_dim, threads. One query at the last position.
void BM_Decode(benchmark::State& state) {
  const size_t n_kv = size_t(state.range(0));
  const int D = int(state.range(1)), threads = int(state.range(2));
  accel::set_num_threads(threads);
  Inputs in = make(D, 1, n_kv);
  for (auto _ : state) {
    call(in);
    benchmark::DoNotOptimize(in.out.data());
  }
  const double bytes = 2.0 * double(n_kv) * in.s.n_kv_heads * D * sizeof(float);
  state.counters["KV_GB/s"] =
      benchmark::Counter(bytes * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

BENCHMARK(BM_Prefill)
    ->ArgNames({"n", "D", "threads"})
    ->Args({1024, 64, 2})
    ->Args({2048, 64, 2})
    ->Args({4096, 64, 2})
    ->Args({8192, 64, 2})
    ->Args({4096, 128, 2})
    ->Args({4096, 64, 1})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

BENCHMARK(BM_Decode)
    ->ArgNames({"n_kv", "D", "threads"})
    ->Args({1024, 64, 2})
    ->Args({4096, 64, 2})
    ->Args({8192, 64, 2})
    ->Args({16384, 64, 2})
    ->Args({32768, 64, 2})
    ->Args({16384, 128, 2})
    ->Args({16384, 64, 1})
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);

// Sliding-window prefill (Gemma 4 / gpt-oss layers): args n, window, sinks (0/1), threads. Blocks
// wholly outside every row's window are skipped, so the cost is linear in n beyond the window;
// GFLOP/s counts only the visible pairs, n * min(n, window) - window (window - 1) / 2 for n > w.
void BM_PrefillWindow(benchmark::State& state) {
  const size_t n = size_t(state.range(0));
  const int window = int(state.range(1)), threads = int(state.range(3));
  accel::set_num_threads(threads);
  Inputs in = make(64, n, n);
  const std::vector<float> sinks = accel::test::random_normal(12, 4);
  in.s.window = window;
  in.s.sinks = state.range(2) ? sinks.data() : nullptr;
  for (auto _ : state) {
    call(in);
    benchmark::DoNotOptimize(in.out.data());
  }
  double pairs = 0;
  for (size_t i = 0; i < n; ++i) pairs += double(std::min<size_t>(i + 1, size_t(window)));
  const double flops = 4.0 * 64 * pairs * in.s.n_heads;
  state.counters["GFLOP/s"] =
      benchmark::Counter(flops * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

// Sliding-window decode over a cache of n_kv entries of which `window` are visible.
void BM_DecodeWindow(benchmark::State& state) {
  const size_t n_kv = size_t(state.range(0));
  accel::set_num_threads(int(state.range(2)));
  Inputs in = make(64, 1, n_kv);
  in.s.window = int(state.range(1));
  for (auto _ : state) {
    call(in);
    benchmark::DoNotOptimize(in.out.data());
  }
}

BENCHMARK(BM_PrefillWindow)
    ->ArgNames({"n", "window", "sinks", "threads"})
    ->Args({4096, 128, 0, 2})
    ->Args({4096, 128, 1, 2})
    ->Args({4096, 512, 0, 2})
    ->Args({4096, 4096, 0, 2})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

BENCHMARK(BM_DecodeWindow)
    ->ArgNames({"n_kv", "window", "threads"})
    ->Args({640, 512, 2})
    ->Args({16384, 512, 2})
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
