// Streaming read bandwidth of this machine: a SIMD sum over a 1 GiB float buffer on 1 and 2
// threads, reported as GB/s, so that memory-bound figures (decode GB/s in bench_engine) can be read
// as a fraction of what the memory system delivers. Measures only; owns no engine code and must not
// be used as a kernel (the sum order is irrelevant here and not batch invariant).
#include <benchmark/benchmark.h>
#include <immintrin.h>
#include <omp.h>

#include "kernels/stream_memory.h"

namespace {

constexpr size_t kBytes = size_t(1) << 30;  // 1 GiB: far beyond the last-level cache
constexpr size_t kFloats = kBytes / sizeof(float);

// The buffer is first touched by the same static split the readers use, so with 2 threads each
// half is faulted in by the thread that streams it. It comes from the allocator of the buffers it
// bounds (packed weights, KV caches: kernels/stream_memory.h), so both sides read memory of the
// same page size.
float* buffer() {
  static float* p = [] {
    auto* b = static_cast<float*>(accel::stream_alloc(kBytes));
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < kFloats; ++i) b[i] = float(i & 1023) * 1e-3f;
    return b;
  }();
  return p;
}

// Sum of [p, p + n), n a multiple of 128 floats. Eight independent accumulators so that the add
// latency never limits the stream; one cache line (or two on AVX2) per accumulator per step.
// kAhead > 0 adds a software prefetch that many bytes ahead: on some CPUs (AMD Zen 5 here) the
// decode kernels' software prefetch reads faster than a plain stream, so the read-bandwidth
// ceiling is the fastest variant (scripts/decode_bandwidth.sh takes the largest per round).
// GCC 12 warns about a self-initialised variable inside _mm512_reduce_add_ps once inlined (bug
// 105593, as in kernels/simd.h); the value is never used.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
template <size_t kAhead>
float sum_range(const float* p, size_t n) {
#if defined(__AVX512F__)
  __m512 a[8];
  for (auto& x : a) x = _mm512_setzero_ps();
  for (size_t i = 0; i < n; i += 128) {
    if constexpr (kAhead > 0)
      for (int u = 0; u < 8; ++u)
        __builtin_prefetch(reinterpret_cast<const char*>(p + i + u * 16) + kAhead, 0, 3);
    for (int u = 0; u < 8; ++u) a[u] = _mm512_add_ps(a[u], _mm512_load_ps(p + i + u * 16));
  }
  for (int u = 1; u < 8; ++u) a[0] = _mm512_add_ps(a[0], a[u]);
  return _mm512_reduce_add_ps(a[0]);
#else
  __m256 a[8];
  for (auto& x : a) x = _mm256_setzero_ps();
  for (size_t i = 0; i < n; i += 64) {
    if constexpr (kAhead > 0)
      for (int u = 0; u < 8; u += 2)
        __builtin_prefetch(reinterpret_cast<const char*>(p + i + u * 8) + kAhead, 0, 3);
    for (int u = 0; u < 8; ++u) a[u] = _mm256_add_ps(a[u], _mm256_load_ps(p + i + u * 8));
  }
  for (int u = 1; u < 8; ++u) a[0] = _mm256_add_ps(a[0], a[u]);
  alignas(32) float t[8];
  _mm256_store_ps(t, a[0]);
  return ((t[0] + t[1]) + (t[2] + t[3])) + ((t[4] + t[5]) + (t[6] + t[7]));
#endif
}

#pragma GCC diagnostic pop

// Arg: threads. One iteration reads the whole buffer once; the counter is bytes read per second.
template <size_t kAhead>
void BM_StreamRead(benchmark::State& st) {
  const int threads = int(st.range(0));
  const float* b = buffer();
  for (auto _ : st) {
    float total = 0.f;
#pragma omp parallel num_threads(threads) reduction(+ : total)
    {
      const size_t t = size_t(omp_get_thread_num()), nt = size_t(omp_get_num_threads());
      const size_t chunks = kFloats / 128;
      const size_t a = chunks * t / nt * 128, e = chunks * (t + 1) / nt * 128;
      total += sum_range<kAhead>(b + a, e - a);
    }
    benchmark::DoNotOptimize(total);
  }
  st.counters["GB/s"] = benchmark::Counter(double(kBytes) * double(st.iterations()) * 1e-9,
                                           benchmark::Counter::kIsRate);
}

template <size_t kAhead>
void register_stream_read(const char* name) {
  benchmark::RegisterBenchmark(name, BM_StreamRead<kAhead>)
      ->ArgName("threads")
      ->Arg(1)
      ->Arg(2)
      ->MinTime(2.0)
      ->UseRealTime()
      ->Unit(benchmark::kMillisecond);
}

// Plain (hardware prefetch only), then with a software prefetch 1 KiB and 4 KiB ahead.
const bool kRegistered = (register_stream_read<0>("BM_StreamRead"),
                          register_stream_read<1024>("BM_StreamReadPrefetch1K"),
                          register_stream_read<4096>("BM_StreamReadPrefetch4K"), true);

}  // namespace

BENCHMARK_MAIN();
