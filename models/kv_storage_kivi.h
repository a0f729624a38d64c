// The KIVI-style KV storage types `kivi4` and `kivi2` (methods.md §4.4): keys quantized per
// channel over each complete block of 32 tokens, values per token, the newest incomplete block
// kept in full precision (the residual). Owns the block bookkeeping; the formats are
// kernels/kv_quant_kivi.h and the registry row is in kv_storage.cpp.
//
// What differs from KIVI's reference: its residual_length R and group size G are separate knobs;
// here both are 32, and the full-precision residual is the incomplete block (0-31 tokens) for
// values as for keys, where KIVI keeps exactly the newest R values. A batch of up to 16 rows
// (decode, verification) attends with the fused kernel (kernels/attention_kivi.h) straight on the
// codes, the residual and its own rows; a larger batch dequantizes the stored blocks once into a
// scratch freed after the call and runs the engine's attention kernel. The two round differently
// (within the fused kernel's stated tolerance). A batch attends before its rows are stored, as
// KIVI's prefill does, so results depend on batching (not batch-invariant).
//
// On a ring (a sliding-window layer, kv_cache.h), slots are rows and a lap reuses the blocks: the
// block a row lands in becomes the residual (reopened from its codes below the row, as after a
// trim), and a batch attends over every other block, sealed oldest first, then the residual and
// its own rows. Empty and out-of-window slots are masked by their positions. A batch the ring
// writes in pieces (at its last slot, or past its piece limit) attends piece by piece, so a later
// piece sees the blocks an earlier one sealed as codes, where a linear cache would show the whole
// batch in f32.
#pragma once
#include <memory>

#include "models/kv_storage.h"

namespace accel {

// bits: 2 or 4.
std::unique_ptr<KVStorage> make_kivi_storage(int bits, int n_layer, int n_kv_heads, int head_dim);
// Exact bytes per token per layer once its block is quantized (codes, and its share of the
// block's per-channel key scales and mins; values' scales and mins); the residual's f32 rows are
// a fixed 2 * 32 * kv_dim * 4 bytes per layer on top.
size_t kivi_bytes_per_row(int bits, int n_kv_heads, int head_dim);

}  // namespace accel
