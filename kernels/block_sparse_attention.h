// Block-sparse causal GQA attention for segment-wise sparse prefill (CritiPrefill, specs/methods.md
// §5.4): each query segment attends, per kv head, only to the key blocks listed for it plus a
// dense range of keys (its own rows), with the position mask of attention.h on every key. Owns the
// kernel and its double reference; knows nothing of layers, caches or how blocks are chosen.
//
// Numerics: the same online-softmax family as attention_causal (attention.cpp), key for key. For
// one (query row, head) the kernel walks the segment's key list (the listed blocks in the given
// order, then the dense range) in steps of 64 list entries, and runs on each step exactly the
// dense kernel's per-block sequence (fma score chain over d, scale * log2 e, running max, exp2,
// key-order sums, o = o * alpha then fma(p_j, v_j, o) over visible keys). So when the list is every
// key before the segment, in ascending blocks whose total is a multiple of 64, followed by the
// segment's own rows, the result is bit-identical to attention_causal over all keys. A row's bits
// depend only on its own query, its key list and positions: not on the other segments or rows of
// the call, the tile it lands in, or the thread count.
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>

#include "kernels/attention.h"

namespace accel {

// One query segment. Key block b covers key rows [b * block, (b + 1) * block).
struct SparseSegment {
  size_t q_begin = 0, q_end = 0;      // query rows [q_begin, q_end) of q and out
  size_t own_begin = 0, own_end = 0;  // key rows attended in full, after the listed blocks
  const int32_t* blocks = nullptr;    // [n_kv_heads][n_blocks]: per kv head, strictly ascending
  size_t n_blocks = 0;                // blocks per kv head (0: the dense range only)
};

// q: [n_q][n_heads * head_dim], row stride ldq; q_pos[n_q]. kv: rows [n_kv][n_kv_heads * head_dim]
// (f32 or f16), kv_pos[n_kv]. out: [n_q][n_heads * head_dim], row stride ldo; only the rows of the
// segments are written (a query that sees no key gets zeros). Key j of a segment's list is visible
// to query i iff kv_pos[j] <= q_pos[i]. Throws std::invalid_argument naming the segment when
// block == 0, a range is out of bounds, a block list is not strictly ascending, or a listed block
// does not end at or before own_begin (keys would be visited twice).
void attention_block_sparse(const AttentionShape& s, size_t block, const float* q, size_t ldq,
                            const int32_t* q_pos, size_t n_q, const KVRows& kv,
                            const int32_t* kv_pos, size_t n_kv,
                            std::span<const SparseSegment> segments, float* out, size_t ldo);

// Plain double-precision reference (two-pass softmax over each row's visible listed keys), f32
// rows, same layout and checks; out in double.
void attention_block_sparse_reference(const AttentionShape& s, size_t block, const float* q,
                                      size_t ldq, const int32_t* q_pos, size_t n_q, const float* k,
                                      const float* v, size_t ldkv, const int32_t* kv_pos,
                                      size_t n_kv, std::span<const SparseSegment> segments,
                                      double* out, size_t ldo);

}  // namespace accel
