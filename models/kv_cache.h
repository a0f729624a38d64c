// KVCache: per-layer keys and values (f32, post-RoPE) with each entry's absolute position.
// Owns storage and bookkeeping only; attention reads it through plain pointers. Entries are
// appended by Model::forward in two steps (reserve rows, then commit) so every layer of one batch
// sees the same rows. Positions are data: nothing assumes entry i has position i.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

namespace accel {

class KVCache {
 public:
  KVCache() = default;
  KVCache(int n_layer, int kv_dim);

  size_t size() const { return n_; }  // committed entries
  size_t capacity() const { return cap_; }
  int n_layer() const { return n_layer_; }
  int kv_dim() const { return kv_dim_; }
  const int32_t* positions() const { return pos_.data(); }

  // Makes room for n entries in total without changing size() (avoids regrowth while timing).
  void reserve(size_t n) { grow(n); }
  // Drops the newest n entries (all of them when n >= size()).
  void trim(size_t n);
  void clear() { n_ = 0; }
  // Frees the storage (size and capacity become 0).
  void release();
  // Bytes held by committed K/V entries and their positions; allocated_bytes() counts capacity.
  size_t bytes() const;
  size_t allocated_bytes() const;

  // Row-major [capacity][kv_dim] storage of one layer.
  float* k(int layer) { return k_[size_t(layer)].data(); }
  float* v(int layer) { return v_[size_t(layer)].data(); }
  const float* k(int layer) const { return k_[size_t(layer)].data(); }
  const float* v(int layer) const { return v_[size_t(layer)].data(); }

  // For Model::forward: makes room for n more entries past size() and writes their positions;
  // the caller fills rows size()..size()+n-1 of every layer and then calls commit(n).
  void stage(const int32_t* positions, size_t n);
  void commit(size_t n);

 private:
  void grow(size_t need);
  int n_layer_ = 0, kv_dim_ = 0;
  size_t n_ = 0, cap_ = 0;
  std::vector<std::vector<float>> k_, v_;  // (layer) -> [cap][kv_dim]
  std::vector<int32_t> pos_;               // [cap]
};

}  // namespace accel
