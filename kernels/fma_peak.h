// Measures the machine's compute peaks with register-only kernels: the FP32 FMA peak (GFLOP/s),
// the u8 x s8 integer dot-product peak of the instruction sequence the quantized kernels use, and
// how much the two compete for execution ports, so benchmarks and the harness can express kernel
// throughput as a fraction of peak (the roofline bounds of reports/bench_table.h). Must not touch
// memory in the timed loops or depend on anything else in the engine.
#pragma once

namespace accel {

// Runs independent FMA chains on `threads` OpenMP threads for about `seconds` per vector width
// (AVX-512 when compiled in, and AVX2) and returns the best rate in GFLOP/s (2 flops per FMA lane).
double measure_fma_peak_gflops(int threads, double seconds);

// The same for u8 x s8 multiply-adds (G/s; one per byte pair, as a dot product counts them) through
// the sequence the integer-dot kernels (kernels/kquant_panel.h) compile to in this build:
// vpdpbusd when AVX-512 VNNI or AVX-VNNI is compiled in, else vpmaddubsw + vpmaddwd + vpaddd, at
// the kernels' vector width (512 bits in AVX-512 builds). CPUs differ far more here than in FMA
// rate.
double measure_int8_dot_peak_gops(int threads, double seconds);
// The sequence measure_int8_dot_peak_gops times in this build: "vpdpbusd" or "vpmaddubsw".
const char* int8_dot_instruction();

// Whether f32 FMAs and the int8 dot-product sequence compete for the same execution ports, for
// bounding a kernel doing F FMAs and D dot steps by max(F t_f, D t_d) + shared * min(F t_f, D t_d)
// (t_f, t_d: each kind's time per instruction at its own peak). shared is 0 where the two run on
// separate ports (the bound is the larger term), 1 where they share them all (the sum); both are
// exact bounds. In between the formula interpolates from a 1:1 mix, an approximation: a CPU whose
// ports overlap in part can beat it with a mix far from 1:1. Measured by three register-only loops
// at the kernels' vector width: FMAs alone, dot steps alone, and one of each per step interleaved.
struct FmaInt8Overlap {
  double fma_per_s = 0;          // FMA instructions per second (all threads)
  double dot_per_s = 0;          // dot-product steps per second
  double mixed_pairs_per_s = 0;  // (FMA, dot step) pairs per second, interleaved
  double shared = 0;             // fma_int8_shared_fraction of the three
  bool measured = false;         // false in builds without AVX-512 VNNI (see fma_peak.cpp)
};
FmaInt8Overlap measure_fma_int8_overlap(int threads, double seconds);
// (t_mixed - max(t_f, t_d)) / min(t_f, t_d), clamped to [0, 1]: the share of the smaller kind's
// time that a pair adds on top of the larger's (times per instruction or per pair). 0 when an
// input is not positive.
double fma_int8_shared_fraction(double fma_s, double dot_s, double mixed_s);

}  // namespace accel
