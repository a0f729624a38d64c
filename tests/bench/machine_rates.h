// The machine's rates measured inside a benchmark run, for `accelbench bench-table`'s roofline
// column: the read bandwidth of a 1 GiB buffer, the f32 FMA peak and the int8 dot-product peak of
// the kernels' instruction sequence, and whether those two share execution ports, on 1 and 2
// threads, registered as <family>/{dram_read,fma_peak,int8_peak,fma_int8_overlap}/t<threads> with
// a threads counter (bench-table bounds an entry by the rates of its own thread count). Measures
// only; shared by the kernel benchmarks.
#pragma once
#include <benchmark/benchmark.h>
#include <immintrin.h>

#include <string>
#include <vector>

#include "kernels/fma_peak.h"
#include "kernels/stream_memory.h"
#include "kernels/threading.h"

namespace accel::bench {

// Reads the first nf floats of buf (a multiple of 64) once with a SIMD sum split over the
// engine's threads, into partial (parallel_slots() x 16): a plain read, nothing else. `work` is
// parallel_ranges' estimate (threading.h), so a caller keeps the split it had.
inline void simd_sum_read(const float* buf, size_t nf, std::vector<float>& partial,
                          double work = 1e12) {
  parallel_ranges(nf / 64, work, [&](size_t b, size_t e, int slot) {
    __m256 a[8];
    for (auto& x : a) x = _mm256_setzero_ps();
    for (size_t i = b * 64; i < e * 64; i += 64)
      for (int u = 0; u < 8; ++u) a[u] = _mm256_add_ps(a[u], _mm256_loadu_ps(&buf[i + u * 8]));
    for (int u = 1; u < 8; ++u) a[0] = _mm256_add_ps(a[0], a[u]);
    _mm256_storeu_ps(&partial[size_t(slot) * 16], a[0]);
  });
  benchmark::DoNotOptimize(partial.data());
}

// Sums a 1 GiB buffer (far beyond the last-level cache): `bytes` / time is what bench-table
// divides a kernel's bytes by.
inline void dram_read(benchmark::State& st, int threads) {
  set_num_threads(threads);
  constexpr size_t kBytes = size_t(1) << 30;
  // From the allocator of the buffers it bounds (kernels/stream_memory.h): the same page size.
  static std::vector<float, StreamAllocator<float>> buf(kBytes / 4, 1.f);
  std::vector<float> partial(size_t(parallel_slots()) * 16);
  for (auto _ : st) simd_sum_read(buf.data(), buf.size(), partial);
  st.counters["bytes"] = double(kBytes);
  st.counters["threads"] = threads;
  st.counters["GB/s"] =
      benchmark::Counter(double(kBytes) * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  set_num_threads(default_num_threads());
}

// The f32 FMA peak (flops_per_s, 2 flops per FMA lane).
inline void fma_peak(benchmark::State& st, int threads) {
  double gflops = 0;
  for (auto _ : st) gflops = measure_fma_peak_gflops(threads, 0.3);
  st.counters["flops_per_s"] = gflops * 1e9;
  st.counters["threads"] = threads;
}

// The u8 x s8 dot-product peak (ops_per_s multiply-adds; the label names the instruction).
inline void int8_peak(benchmark::State& st, int threads) {
  double gops = 0;
  for (auto _ : st) gops = measure_int8_dot_peak_gops(threads, 0.3);
  st.counters["ops_per_s"] = gops * 1e9;
  st.counters["threads"] = threads;
  st.SetLabel(int8_dot_instruction());
}

// Whether f32 FMAs and the int8 dot steps share execution ports (shared: 0 separate, 1 all
// shared; fma_peak.h), for bounding a kernel that does both. Not registered where the build cannot
// measure it (no AVX-512 VNNI): bench-table then bounds by the larger term alone.
inline void fma_int8_overlap(benchmark::State& st, int threads) {
  FmaInt8Overlap o;
  for (auto _ : st) o = measure_fma_int8_overlap(threads, 0.3);
  st.counters["shared"] = o.shared;
  st.counters["fma_per_s"] = o.fma_per_s;
  st.counters["dot_per_s"] = o.dot_per_s;
  st.counters["mixed_pairs_per_s"] = o.mixed_pairs_per_s;
  st.counters["threads"] = threads;
}

inline void register_machine_rates(const std::string& family) {
  for (int t : {1, 2}) {
    const std::string tail = "/t" + std::to_string(t);
    benchmark::RegisterBenchmark((family + "/dram_read" + tail).c_str(), dram_read, t)
        ->UseRealTime()
        ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark((family + "/fma_peak" + tail).c_str(), fma_peak, t)
        ->Iterations(1)
        ->UseRealTime()
        ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark((family + "/int8_peak" + tail).c_str(), int8_peak, t)
        ->Iterations(1)
        ->UseRealTime()
        ->Unit(benchmark::kMillisecond);
#if defined(__AVX512F__) && defined(__AVX512VNNI__)  // where measure_fma_int8_overlap measures
    benchmark::RegisterBenchmark((family + "/fma_int8_overlap" + tail).c_str(), fma_int8_overlap, t)
        ->Iterations(1)
        ->UseRealTime()
        ->Unit(benchmark::kMillisecond);
#endif
  }
}

}  // namespace accel::bench
