// FP32 FMA peak probe (see fma_peak.h). Hand-written intrinsics because the point is to issue
// exactly one FMA per chain per step with enough independent chains (12) to hide FMA latency
// (4 cycles on Zen 4 with 2 pipes -> at least 8 chains in flight).
#include "kernels/fma_peak.h"

// GCC 12's AVX-512 reduction helpers read a self-initialised "undefined" operand; harmless.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#include <omp.h>

#include <algorithm>
#include <chrono>

namespace accel {

namespace {

constexpr int kChains = 12;

// `iters` steps of kChains independent FMAs on 8-lane vectors; returns a value that depends on
// every chain so the compiler cannot drop any. noipa, not just noinline: GCC otherwise proves the
// function const and reuses the result of an identical earlier call, so the calibration timed
// nothing (1e-13 s per step in the AVX2 build) and the measurement then ran for many minutes.
__attribute__((noipa)) float run_avx2(long iters, float seed) {
  __m256 acc[kChains];
  for (int i = 0; i < kChains; ++i) acc[i] = _mm256_set1_ps(seed + float(i));
  const __m256 a = _mm256_set1_ps(0.999999f), b = _mm256_set1_ps(1e-7f);
  for (long it = 0; it < iters; ++it)
    for (int i = 0; i < kChains; ++i) acc[i] = _mm256_fmadd_ps(acc[i], a, b);
  __m256 s = acc[0];
  for (int i = 1; i < kChains; ++i) s = _mm256_add_ps(s, acc[i]);
  float out[8];
  _mm256_storeu_ps(out, s);
  return out[0];
}

#if defined(__AVX512F__)
__attribute__((noipa)) float run_avx512(long iters, float seed) {
  __m512 acc[kChains];
  for (int i = 0; i < kChains; ++i) acc[i] = _mm512_set1_ps(seed + float(i));
  const __m512 a = _mm512_set1_ps(0.999999f), b = _mm512_set1_ps(1e-7f);
  for (long it = 0; it < iters; ++it)
    for (int i = 0; i < kChains; ++i) acc[i] = _mm512_fmadd_ps(acc[i], a, b);
  __m512 s = acc[0];
  for (int i = 1; i < kChains; ++i) s = _mm512_add_ps(s, acc[i]);
  return _mm512_reduce_add_ps(s);
}
#endif

using Fn = float (*)(long, float);

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// GFLOP/s of `fn` (lanes wide) on `threads` threads, run for about `seconds`.
double measure(Fn fn, int lanes, int threads, double seconds) {
  volatile float sink = 0;
  // Calibrate on one thread: grow the step count until a run takes >= 5 ms.
  long iters = 1 << 14;
  for (;;) {
    const auto t0 = std::chrono::steady_clock::now();
    sink = sink + fn(iters, 1.f);
    if (seconds_since(t0) >= 5e-3) break;
    iters *= 2;
  }
  const auto t0 = std::chrono::steady_clock::now();
  sink = sink + fn(iters, 1.f);
  const double per_iter = seconds_since(t0) / double(iters);
  const long n = std::max<long>(1, long(seconds / per_iter));
  double best = 0;
  // Three timed trials, best kept: other processes on a shared machine only ever slow us down.
  for (int trial = 0; trial < 3; ++trial) {
    const long each = std::max<long>(1, n / 3);
    const auto s0 = std::chrono::steady_clock::now();
#pragma omp parallel num_threads(threads)
    {
      const float r = fn(each, float(omp_get_thread_num()));
#pragma omp critical
      sink = sink + r;
    }
    const double dt = seconds_since(s0);
    best = std::max(best, double(each) * kChains * lanes * 2.0 * threads / dt * 1e-9);
  }
  return best;
}

}  // namespace

double measure_fma_peak_gflops(int threads, double seconds) {
  threads = std::max(1, threads);
  double best = measure(&run_avx2, 8, threads, seconds);
#if defined(__AVX512F__)
  best = std::max(best, measure(&run_avx512, 16, threads, seconds));
#endif
  return best;
}

}  // namespace accel
