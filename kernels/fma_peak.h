// Measures the machine's compute peaks with register-only kernels: the FP32 FMA peak (GFLOP/s) and
// the u8 x s8 integer dot-product peak of the instruction sequence the quantized kernels use, so
// benchmarks and the harness can express kernel throughput as a fraction of peak (the roofline
// bounds of reports/bench_table.h). Must not touch memory in the timed loops or depend on anything
// else in the engine.
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

}  // namespace accel
