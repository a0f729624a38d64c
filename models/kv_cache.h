// KVCache: per-layer keys (post-RoPE) and values with each entry's absolute position, stored in
// one of several formats (`kv_dtype`). The cache owns its storage and the attention read: the model
// hands each layer's new K/V rows and queries to attend(), and the storage type decides how rows
// are kept and which kernel reads them. Positions are data: nothing assumes entry i has position i.
// Adding a storage type is a KVStorage subclass (kv_storage.h) plus its kernel in kernels/.
//
// Sliding-window layers (KVCache(layers, ...)) keep a ring of R = round_up(window + max_rollback,
// 64) slots per layer: entry e lives in slot e % R, so a sliding layer's memory does not grow with
// the context. Why it stays exact and batch-invariant:
//  - a query at entry e (positions strictly increase with e) needs entries whose positions are
//    within `window` of its own: at most the `window` newest up to e. A batch is written and
//    attended in pieces of at most R - window + 1 entries that do not wrap, so while a piece
//    attends none of its queries' window entries has been overwritten;
//  - attention runs over all R slots with each slot's position (INT32_MAX when empty or rolled
//    back); anything not in the query's window is masked, and a masked key changes no bit
//    (attention.h). The slot of an entry, hence the kernel's block of it, depends on e only, so a
//    token's result is the same whatever the chunking (and equals, within rounding, a linear
//    cache's: the kernel visits the same keys in another block order);
//  - trim(r) keeps every entry a later query can see only if the slots of the last `window`
//    entries were not overwritten: entries written since (the high-water mark) minus the new size
//    must be at most R - window. max_rollback <= R - window, so rolling back up to max_rollback
//    entries after any batch is always possible; anything further is refused (std::logic_error).
//  - KIVI (kv_storage_kivi.h) seals and reopens whole 32-slot blocks, so a new lap's first row in
//    a block retires the block's 31 older entries with it. Its ring keeps 31 slots of slack: R =
//    round_up(window + max_rollback + 31, 64), and every bound above reads R - 31 for R (the
//    cache's reach: pieces of at most reach - window + 1, rollbacks up to reach - window).
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "kernels/attention.h"
#include "models/kv_storage.h"
#include "models/recurrent_state.h"

namespace accel {

// One layer's cache rows: n_kv_heads x head_dim per entry; window > 0 for a sliding-window layer.
struct KVLayerShape {
  int n_kv_heads = 0;
  int head_dim = 0;
  int window = 0;
};

// Re-runs a recurrent layer's kernels over the first n rows of the inputs the last batch logged
// for it (KVCache::recurrent_inputs), advancing `state` from its checkpoint; what trim() replays.
// Supplied by the model that made the cache (Model::make_cache), which must outlive it.
using RecurrentReplay =
    std::function<void(int layer, RecurrentState& state, const float* inputs, size_t n)>;

// A hybrid model's recurrent layers as the cache holds them: flags per layer, one state shape for
// all of them, the floats each token's logged inputs take, and the replay.
struct RecurrentLayers {
  std::vector<uint8_t> layers;  // [n_layer]: non-zero for a recurrent layer
  // [n_layer] or empty: non-zero for a layer that holds nothing (Nemotron-H's FFN-only blocks):
  // no K/V rows, no state, no bytes.
  std::vector<uint8_t> stateless;
  RecurrentStateShape state;
  size_t input_width = 0;
  RecurrentReplay replay;
};

class KVCache {
 public:
  KVCache() = default;
  // kv_dim values per entry per layer, as one head (enough for dense types).
  KVCache(int n_layer, int kv_dim, KVDType dtype = KVDType::F32);
  // n_kv_heads heads of head_dim values (quantized types group values within a head).
  KVCache(int n_layer, int n_kv_heads, int head_dim, KVDType dtype);
  // Layers of two kinds: full layers (window 0) share one row shape and a linear store, sliding
  // layers share one row shape and one window and keep a ring of window + max_rollback slots
  // (rounded up to 64). Throws std::invalid_argument when the kinds mix shapes or windows, when
  // max_rollback is 0 while a layer slides.
  KVCache(const std::vector<KVLayerShape>& layers, KVDType dtype, size_t max_rollback);
  // Hybrid models (qwen35): the flagged layers hold a RecurrentState instead of K/V; the others
  // are full attention layers of n_kv_heads x head_dim in one linear store.
  //
  // Rollback of recurrent layers, which cannot drop entries: stage() checkpoints every state at
  // the last committed entry and the forward pass logs the batch's per-token layer inputs
  // (recurrent_inputs); trim() restores the checkpoint and replays the kept tokens' inputs. The
  // kernels scan in token order on every path, so the replayed state equals the state of
  // decoding those tokens one by one, bit for bit (recurrent_state.h says why replay rather than
  // a state per token). Hence a rollback reaches back at most to the start of the last batch
  // (or to an empty cache); further is refused (std::logic_error).
  KVCache(RecurrentLayers recurrent, int n_kv_heads, int head_dim, KVDType dtype);
  KVCache(KVCache&&) noexcept = default;
  KVCache& operator=(KVCache&&) noexcept = default;

  size_t size() const { return n_; }  // committed entries
  size_t capacity() const { return cap_; }
  int n_layer() const { return n_layer_; }
  int kv_dim() const { return kv_dim_; }
  KVDType dtype() const { return storage_ ? storage_->dtype() : KVDType::F32; }
  const int32_t* positions() const { return pos_.data(); }

  // Makes room for n entries in total without changing size() (avoids regrowth while timing).
  void reserve(size_t n) { grow(n); }
  // Drops the newest n entries (all of them when n >= size()). With sliding layers, throws
  // std::logic_error when the ring has overwritten entries the new last entry's window needs;
  // with recurrent layers, when the last batch was staged without checkpoints (below).
  void trim(size_t n);
  // Whether staging a batch checkpoints the recurrent states (on by default): the copy that lets
  // trim() roll the last batch back. A loop that never trims (greedy decoding) turns it off and
  // saves a copy of every state per step (small-nemotron-h: 8.4 MB per token, ~10% of decode
  // time on a 2-core Zen 3, 2026-11-28). No effect on a cache without recurrent layers.
  void set_rollback_checkpoints(bool on) { rec_.checkpoints = on; }
  bool rollback_checkpoints() const { return rec_.checkpoints; }
  void clear();
  // Frees the storage (size and capacity become 0).
  void release();
  // Exact bytes held by the committed entries (K/V in the storage format, scales, positions);
  // allocated_bytes() counts capacity. A sliding layer counts the entries its window can still
  // see, min(size(), window) (what kvcalc counts); its ring's slack for rollback
  // (R - window slots) is in allocated_bytes() only.
  size_t bytes() const;
  size_t allocated_bytes() const;
  // Bytes one entry takes in every layer together (K, V, their scales, and its position).
  size_t bytes_per_entry() const;

  // For Model::forward, one batch of n tokens: stage() makes room past size() and records their
  // positions; then, per layer, attend() stores the batch's K/V rows and computes the batch's
  // attention over every entry (committed and staged); commit(n) ends the batch.
  void stage(const int32_t* positions, size_t n);
  // q: [n][n_heads * head_dim] row stride ldq, at positions q_pos (the staged ones); k_new, v_new:
  // [n][kv_dim] row stride ld_new; out: [n][n_heads * head_dim] row stride ldo.
  void attend(int layer, const AttentionShape& shape, const float* q, size_t ldq,
              const int32_t* q_pos, const float* k_new, const float* v_new, size_t ld_new, size_t n,
              float* out, size_t ldo);
  void commit(size_t n);
  // Instead of attend(): stores the staged batch's rows of `layer` (post-RoPE keys) without
  // computing attention, for rows made outside the cache's attention (KV Prediction's predicted
  // rows, Model::store_pre_rope_kv; a ForwardHooks::attend layer). k, v: [n][kv_dim] with row
  // stride ld.
  void store(int layer, const float* k, const float* v, size_t ld, size_t n);

  // Keys of layer `layer` as f32 rows [capacity][kv_dim], for readers that need them unconverted
  // (SpecPrefill's draft scoring). Throws std::logic_error unless dtype() is f32.
  const float* f32_keys(int layer) const;

  // Sliding-window layers: the window of `layer` (0 for a full layer), the ring's slot count and
  // the largest rollback it guarantees.
  int window(int layer) const;
  size_t ring_slots() const { return ring_.slots; }
  size_t max_rollback() const { return ring_.slots ? ring_.reach - size_t(ring_.window) : 0; }

  // Recurrent layers (hybrid models; see the constructor).
  bool is_recurrent(int layer) const;
  // Whether layer `layer` keeps K/V rows (false for recurrent and stateless layers).
  bool has_kv(int layer) const;
  bool has_recurrent() const { return !rec_.states.empty(); }
  RecurrentState& recurrent_state(int layer);
  const RecurrentState& recurrent_state(int layer) const;
  // The staged batch's inputs of recurrent layer `layer`: [n][input_width] floats for the model
  // to fill (n = the staged batch size), kept until the next stage() for trim()'s replay.
  float* recurrent_inputs(int layer, size_t n);
  // Bytes of the recurrent states themselves (fixed: independent of the context length).
  size_t recurrent_bytes() const;

 private:
  // The sliding layers' storage: R slots per layer, slot positions of committed entries.
  struct Ring {
    std::unique_ptr<KVStorage> storage;
    int window = 0;
    size_t slots = 0;
    size_t reach = 0;  // slots a lap keeps readable: all of them, or slots - 31 for KIVI
    int n_layer = 0;
    std::vector<int32_t> pos;   // [slots]: INT32_MAX where empty or rolled back
    std::vector<int32_t> view;  // scratch: pos with a batch's staged entries laid over it
  };
  // Writes (and, with q, attends) entries [n_, n_ + n) of ring layer `local` in pieces.
  void ring_batch(int local, const AttentionShape* shape, const float* q, size_t ldq,
                  const int32_t* q_pos, const float* k, const float* v, size_t ld, size_t n,
                  float* out, size_t ldo);
  void ring_forget(size_t from, size_t to);  // empties the slots of entries [from, to)
  size_t full_layers() const;
  void grow(size_t need);
  void check_batch(int layer, size_t n) const;  // aborts on a batch past the capacity
  int n_layer_ = 0, kv_dim_ = 0;
  int n_stateless_ = 0;  // layers that hold nothing (RecurrentLayers::stateless)
  size_t n_ = 0, cap_ = 0;
  std::unique_ptr<KVStorage> storage_;  // full layers (every layer without a ring)
  std::vector<int32_t> pos_;            // [cap]
  // Per layer: its index in storage_ (>= 0) or, as -1 - i, in the ring. Empty: every layer full.
  std::vector<int> local_;
  Ring ring_;
  // Recurrent layers: states, each one's logged inputs of the last batch, and where it started.
  struct Recurrent {
    std::vector<RecurrentState> states;
    std::vector<int> index;  // [n_layer]: the layer's state or -1
    std::vector<std::vector<float>> inputs;
    size_t width = 0;
    size_t logged = 0;  // tokens the inputs hold (the last staged batch)
    size_t base = 0;    // entries committed when that batch was staged (the checkpoint's)
    RecurrentReplay replay;
    bool checkpoints = true;    // stage() checkpoints the states
    bool checkpointed = false;  // the last staged batch was checkpointed
  };
  void recurrent_stage(size_t n);
  void recurrent_trim(size_t keep);  // throws before changing anything when keep is out of reach
  Recurrent rec_;
  size_t high_ = 0;  // entries written so far that a rollback may have to forget (high-water)
};

}  // namespace accel
