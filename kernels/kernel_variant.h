// The kernel variant this binary runs: its SIMD width, its integer dot-product instruction, and the
// blocking, prefetch and pool constants chosen by measurement, so that a stored figure can be
// traced to the code that produced it. Reports only; nothing may choose a code path from it.
#pragma once
#include <cstddef>
#include <string>

namespace accel {

struct KernelVariant {
  int simd_width = 0;                          // floats per vector: 16 (AVX-512) or 8 (AVX2)
  std::string int8_dot;                        // the integer-dot kernels' instruction sequence
  int gemm_tile_rows = 0, gemm_tile_cols = 0;  // the float micro-kernel's tile
  size_t gemm_k_block = 0, gemm_row_block = 0, gemm_panels_per_chunk = 0;
  int intdot_rows_per_tile = 0;
  // Decode's software prefetch distance: k-quant super-blocks of a panel, and 32-element blocks
  // (q8_0, mxfp4), as this process chose them for its CPU kind (kernels/decode_prefetch.h), and
  // how they were chosen.
  size_t kquant_prefetch_superblocks = 0, block_prefetch_blocks = 0;
  std::string decode_prefetch_source;
  int pool_spin_us = 0;  // ACCELBENCH_SPIN_US or its default (kernels/threading.h)
  // The system's transparent huge page mode, which decides whether streamed buffers (weights, KV
  // caches) sit on 2 MiB pages (kernels/stream_memory.h).
  std::string transparent_hugepages;
};

KernelVariant kernel_variant();

}  // namespace accel
