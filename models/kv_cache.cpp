// KVCache storage (see kv_cache.h). Grows geometrically so long prompts do not reallocate per
// chunk.
#include "models/kv_cache.h"

#include <algorithm>
#include <cassert>

namespace accel {

KVCache::KVCache(int n_layer, int kv_dim)
    : n_layer_(n_layer), kv_dim_(kv_dim), k_(size_t(n_layer)), v_(size_t(n_layer)) {}

void KVCache::trim(size_t n) {
  n_ = n >= n_ ? 0 : n_ - n;
}

void KVCache::release() {
  for (auto& x : k_) std::vector<float>().swap(x);
  for (auto& x : v_) std::vector<float>().swap(x);
  std::vector<int32_t>().swap(pos_);
  n_ = cap_ = 0;
}

size_t KVCache::bytes() const {
  return n_ * (size_t(n_layer_) * 2 * kv_dim_ * 4 + 4);
}
size_t KVCache::allocated_bytes() const {
  return cap_ * (size_t(n_layer_) * 2 * kv_dim_ * 4 + 4);
}

void KVCache::grow(size_t need) {
  if (need <= cap_) return;
  const size_t cap = std::max(need, std::max<size_t>(64, cap_ * 2));
  for (auto& x : k_) x.resize(cap * size_t(kv_dim_));
  for (auto& x : v_) x.resize(cap * size_t(kv_dim_));
  pos_.resize(cap);
  cap_ = cap;
}

void KVCache::stage(const int32_t* positions, size_t n) {
  grow(n_ + n);
  std::copy(positions, positions + n, pos_.begin() + std::ptrdiff_t(n_));
}

void KVCache::commit(size_t n) {
  assert(n_ + n <= cap_);
  n_ += n;
}

}  // namespace accel
