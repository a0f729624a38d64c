// FP32 FMA and integer dot-product peak probes (see fma_peak.h). Hand-written intrinsics because
// the point is to issue exactly one FMA (or one dot-product step) per chain per step with enough
// independent chains (12) to hide the latency (4 cycles on Zen 4 with 2 pipes -> at least 8
// chains in flight; vpdpbusd's 5 cycles likewise).
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

// One step of a u8 x s8 dot-product chain as the integer-dot kernels issue it: vpdpbusd with VNNI,
// else vpmaddubsw (pair sums in 16 bits), vpmaddwd by ones (to 32 bits) and vpaddd. The empty asm
// makes the operands opaque each step, so the compiler cannot hoist the products out of the loop
// (they do not depend on the accumulator without VNNI), yet emits no instruction for it.
// kernels/kquant_panel.h runs 512-bit code in AVX-512 builds (VNNI with AVX-512 VNNI) and 256-bit
// code otherwise (VNNI with AVX-VNNI); the probe times the width and rule the kernels use.
#if !defined(__AVX512F__)
inline __m256i dot_step256(__m256i acc, __m256i u, __m256i s) {
#if defined(__AVXVNNI__)
  return _mm256_dpbusd_avx_epi32(acc, u, s);
#else
  const __m256i pairs = _mm256_maddubs_epi16(u, s);
  return _mm256_add_epi32(acc, _mm256_madd_epi16(pairs, _mm256_set1_epi16(1)));
#endif
}

__attribute__((noipa)) float run_dot256(long iters, float seed) {
  __m256i acc[kChains];
  for (int i = 0; i < kChains; ++i) acc[i] = _mm256_set1_epi32(int(seed) + i);
  __m256i u = _mm256_set1_epi8(3), s = _mm256_set1_epi8(-2);
  for (long it = 0; it < iters; ++it) {
    asm volatile("" : "+x"(u), "+x"(s));
    for (int i = 0; i < kChains; ++i) acc[i] = dot_step256(acc[i], u, s);
  }
  __m256i t = acc[0];
  for (int i = 1; i < kChains; ++i) t = _mm256_add_epi32(t, acc[i]);
  return float(_mm256_extract_epi32(t, 0));
}
#endif

#if defined(__AVX512F__)
// The lanes' sum as a float, only to keep the chains' results alive. The lanes wrap around after
// enough steps (vpdpbusd's 32-bit accumulators wrap, which is defined); _mm512_reduce_add_epi32
// adds them as signed ints in GCC's header, which UBSan reports as overflow, so they are summed as
// floats.
inline float lane_sum(__m512i x) {
  return _mm512_reduce_add_ps(_mm512_cvtepi32_ps(x));
}

inline __m512i dot_step512(__m512i acc, __m512i u, __m512i s) {
#if defined(__AVX512VNNI__)
  return _mm512_dpbusd_epi32(acc, u, s);
#else
  const __m512i pairs = _mm512_maddubs_epi16(u, s);
  return _mm512_add_epi32(acc, _mm512_madd_epi16(pairs, _mm512_set1_epi16(1)));
#endif
}

__attribute__((noipa)) float run_dot512(long iters, float seed) {
  __m512i acc[kChains];
  for (int i = 0; i < kChains; ++i) acc[i] = _mm512_set1_epi32(int(seed) + i);
  __m512i u = _mm512_set1_epi8(3), s = _mm512_set1_epi8(-2);
  for (long it = 0; it < iters; ++it) {
    asm volatile("" : "+v"(u), "+v"(s));
    for (int i = 0; i < kChains; ++i) acc[i] = dot_step512(acc[i], u, s);
  }
  __m512i t = acc[0];
  for (int i = 1; i < kChains; ++i) t = _mm512_add_epi32(t, acc[i]);
  return lane_sum(t);
}
#endif

// The overlap probe's loops: kOverlapChains FMA chains, as many vpdpbusd chains, or both
// interleaved, each written as asm blocks per step so that all three are the same code whatever
// the build does to intrinsics. With intrinsics GCC 12 copied the mixed loop's dot accumulators
// between registers every step and spilled one through the stack, so it timed a store-to-load
// chain rather than the ports (2.77 G pairs/s on one Zen 5 thread, where the asm reaches 4.12),
// and a sanitizer build kept run_avx512's accumulators in memory (0.36 G FMAs/s). 10 chains of a
// kind keep two pipes busy (latency 4-5 cycles) even if the kinds had separate ports. Built only
// with AVX-512 VNNI (the sequence the int4 kernel's scores use); other builds report no overlap.
#if defined(__AVX512F__) && defined(__AVX512VNNI__)
constexpr int kOverlapChains = 10;
template <bool kFma, bool kDot>
__attribute__((noipa)) float run_overlap_steps(long iters, float seed) {
  // Named variables, not arrays: GCC keeps array elements bound to asm operands in memory and
  // stored them back every step.
#define ACCEL_MIX_INIT(i)                        \
  __m512 f##i = _mm512_set1_ps(seed + float(i)); \
  __m512i d##i = _mm512_set1_epi32(int(seed) + i)
  ACCEL_MIX_INIT(0);
  ACCEL_MIX_INIT(1);
  ACCEL_MIX_INIT(2);
  ACCEL_MIX_INIT(3);
  ACCEL_MIX_INIT(4);
  ACCEL_MIX_INIT(5);
  ACCEL_MIX_INIT(6);
  ACCEL_MIX_INIT(7);
  ACCEL_MIX_INIT(8);
  ACCEL_MIX_INIT(9);
#undef ACCEL_MIX_INIT
  const __m512 a = _mm512_set1_ps(0.999999f), b = _mm512_set1_ps(1e-7f);
  const __m512i u = _mm512_set1_epi8(3), sg = _mm512_set1_epi8(-2);
#define ACCEL_FMA(i) "vfmadd132ps %[a], %[b], %[f" #i "]\n\t"
#define ACCEL_DOT(i) "vpdpbusd %[s], %[u], %[d" #i "]\n\t"
#define ACCEL_PAIR(i) ACCEL_FMA(i) ACCEL_DOT(i)
#define ACCEL_OPS(i) [f##i] "+v"(f##i), [d##i] "+v"(d##i)
#define ACCEL_IN [a] "v"(a), [b] "v"(b), [u] "v"(u), [s] "v"(sg)
  // Two blocks of five chains of each kind: an in-out operand counts twice against asm's limit of
  // 30 (the single-kind loops carry the other kind's registers untouched).
#define ACCEL_BLOCKS(STEP)                                                            \
  asm volatile(STEP(0) STEP(1) STEP(2) STEP(3) STEP(4)                                \
               : ACCEL_OPS(0), ACCEL_OPS(1), ACCEL_OPS(2), ACCEL_OPS(3), ACCEL_OPS(4) \
               : ACCEL_IN);                                                           \
  asm volatile(STEP(5) STEP(6) STEP(7) STEP(8) STEP(9)                                \
               : ACCEL_OPS(5), ACCEL_OPS(6), ACCEL_OPS(7), ACCEL_OPS(8), ACCEL_OPS(9) \
               : ACCEL_IN)
  for (long it = 0; it < iters; ++it) {
    if constexpr (kFma && kDot) {
      ACCEL_BLOCKS(ACCEL_PAIR);
    } else if constexpr (kFma) {
      ACCEL_BLOCKS(ACCEL_FMA);
    } else {
      ACCEL_BLOCKS(ACCEL_DOT);
    }
  }
#undef ACCEL_BLOCKS
#undef ACCEL_FMA
#undef ACCEL_DOT
#undef ACCEL_PAIR
#undef ACCEL_OPS
#undef ACCEL_IN
  const __m512 fs =
      _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(_mm512_add_ps(f0, f1), _mm512_add_ps(f2, f3)),
                                  _mm512_add_ps(_mm512_add_ps(f4, f5), _mm512_add_ps(f6, f7))),
                    _mm512_add_ps(f8, f9));
  const __m512i ds = _mm512_add_epi32(
      _mm512_add_epi32(_mm512_add_epi32(_mm512_add_epi32(d0, d1), _mm512_add_epi32(d2, d3)),
                       _mm512_add_epi32(_mm512_add_epi32(d4, d5), _mm512_add_epi32(d6, d7))),
      _mm512_add_epi32(d8, d9));
  return _mm512_reduce_add_ps(fs) + lane_sum(ds);
}
#endif

using Fn = float (*)(long, float);

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// G ops/s of `fn` (ops_per_step per chain and step: 2 x lanes for FMA flops, the byte pairs of one
// dot-product step for int8; `chains` chains) on `threads` threads, run for about `seconds`.
double measure(Fn fn, int ops_per_step, int threads, double seconds, int chains = kChains) {
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
    best = std::max(best, double(each) * chains * ops_per_step * double(threads) / dt * 1e-9);
  }
  return best;
}

}  // namespace

double measure_fma_peak_gflops(int threads, double seconds) {
  threads = std::max(1, threads);
  double best = measure(&run_avx2, 2 * 8, threads, seconds);
#if defined(__AVX512F__)
  best = std::max(best, measure(&run_avx512, 2 * 16, threads, seconds));
#endif
  return best;
}

double measure_int8_dot_peak_gops(int threads, double seconds) {
  threads = std::max(1, threads);
#if defined(__AVX512F__)
  return measure(&run_dot512, 64, threads, seconds);
#else
  return measure(&run_dot256, 32, threads, seconds);
#endif
}

double fma_int8_shared_fraction(double fma_s, double dot_s, double mixed_s) {
  const double lo = std::min(fma_s, dot_s), hi = std::max(fma_s, dot_s);
  if (!(lo > 0) || !(mixed_s > 0)) return 0;
  return std::clamp((mixed_s - hi) / lo, 0.0, 1.0);
}

FmaInt8Overlap measure_fma_int8_overlap(int threads, double seconds) {
  FmaInt8Overlap o;
#if defined(__AVX512F__) && defined(__AVX512VNNI__)
  threads = std::max(1, threads);
  // Rates in steps of one chain (one instruction of each loop's kind; one FMA + one dot step for
  // the mixed loop), so their inverses are the per-instruction times the fraction compares.
  o.fma_per_s = measure(&run_overlap_steps<true, false>, 1, threads, seconds, kOverlapChains) * 1e9;
  o.dot_per_s = measure(&run_overlap_steps<false, true>, 1, threads, seconds, kOverlapChains) * 1e9;
  o.mixed_pairs_per_s =
      measure(&run_overlap_steps<true, true>, 1, threads, seconds, kOverlapChains) * 1e9;
  o.shared = fma_int8_shared_fraction(1 / o.fma_per_s, 1 / o.dot_per_s, 1 / o.mixed_pairs_per_s);
  o.measured = true;
#else
  (void)threads;
  (void)seconds;
#endif
  return o;
}

const char* int8_dot_instruction() {
#if defined(__AVX512F__) ? defined(__AVX512VNNI__) : defined(__AVXVNNI__)
  return "vpdpbusd";
#else
  return "vpmaddubsw";
#endif
}

}  // namespace accel
