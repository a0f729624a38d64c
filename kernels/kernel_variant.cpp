// kernel_variant(): reads the constants where the kernels define them, so the record cannot drift
// from the code.
#include "kernels/kernel_variant.h"

#include "kernels/decode_prefetch.h"
#include "kernels/gemm.h"
#include "kernels/kquant_panel.h"
#include "kernels/simd.h"
#include "kernels/stream_memory.h"
#include "kernels/threading.h"

namespace accel {

KernelVariant kernel_variant() {
  KernelVariant v;
  v.simd_width = simd::W;
  // kquant_panel.h's dot4: VNNI's one instruction where the build targets it, else the pair sums
  // widened by vpmaddwd (AVX-512 and AVX2 alike), which is when its narrow sums are in use.
  v.int8_dot = kq::iv::kNarrowSums ? "vpmaddubsw+vpmaddwd" : "vpdpbusd";
  const GemmBlocking b = gemm_blocking();
  v.gemm_tile_rows = b.tile_rows;
  v.gemm_tile_cols = b.tile_cols;
  v.gemm_k_block = b.k_block;
  v.gemm_row_block = b.row_block;
  v.gemm_panels_per_chunk = b.panels_per_chunk;
  v.intdot_rows_per_tile = b.intdot_rows_per_tile;
  const DecodePrefetch& prefetch = decode_prefetch();
  v.kquant_prefetch_superblocks = prefetch.kquant_superblocks;
  v.block_prefetch_blocks = prefetch.blocks;
  v.decode_prefetch_source = prefetch.source;
  v.pool_spin_us = pool_spin_us();
  v.transparent_hugepages = transparent_hugepage_mode();
  return v;
}

}  // namespace accel
