// KVCache: per-layer keys (post-RoPE) and values with each entry's absolute position, stored in
// one of several formats (`kv_dtype`). The cache owns its storage and the attention read: the model
// hands each layer's new K/V rows and queries to attend(), and the storage type decides how rows
// are kept and which kernel reads them. Positions are data: nothing assumes entry i has position i.
// Adding a storage type is a KVStorage subclass (kv_storage.h) plus its kernel in kernels/.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kernels/attention.h"
#include "models/kv_storage.h"

namespace accel {

class KVCache {
 public:
  KVCache() = default;
  // kv_dim values per entry per layer, as one head (enough for dense types).
  KVCache(int n_layer, int kv_dim, KVDType dtype = KVDType::F32);
  // n_kv_heads heads of head_dim values (quantized types group values within a head).
  KVCache(int n_layer, int n_kv_heads, int head_dim, KVDType dtype);
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
  // Drops the newest n entries (all of them when n >= size()).
  void trim(size_t n);
  void clear() { n_ = 0; }
  // Frees the storage (size and capacity become 0).
  void release();
  // Exact bytes held by the committed entries (K/V in the storage format, scales, positions);
  // allocated_bytes() counts capacity.
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

 private:
  void grow(size_t need);
  void check_batch(int layer, size_t n) const;  // aborts on a batch past the capacity
  int n_layer_ = 0, kv_dim_ = 0;
  size_t n_ = 0, cap_ = 0;
  std::unique_ptr<KVStorage> storage_;
  std::vector<int32_t> pos_;  // [cap]
};

}  // namespace accel
