// KVCache bookkeeping (see kv_cache.h): positions, size and capacity; rows live in the storage.
// Grows geometrically so long prompts do not reallocate per chunk.
#include "models/kv_cache.h"

#include <algorithm>
#include <stdexcept>

#include "kernels/check.h"

namespace accel {

KVCache::KVCache(int n_layer, int kv_dim, KVDType dtype) : KVCache(n_layer, 1, kv_dim, dtype) {}

KVCache::KVCache(int n_layer, int n_kv_heads, int head_dim, KVDType dtype)
    : n_layer_(n_layer),
      kv_dim_(n_kv_heads * head_dim),
      storage_(make_kv_storage(dtype, n_layer, n_kv_heads, head_dim)) {}

void KVCache::trim(size_t n) {
  n_ = n >= n_ ? 0 : n_ - n;
}

void KVCache::release() {
  if (storage_) storage_->release();
  std::vector<int32_t>().swap(pos_);
  n_ = cap_ = 0;
}

size_t KVCache::bytes_per_entry() const {
  return storage_ ? size_t(n_layer_) * storage_->row_bytes() + sizeof(int32_t) : 0;
}
size_t KVCache::bytes() const {
  return n_ * bytes_per_entry();
}
size_t KVCache::allocated_bytes() const {
  return cap_ * bytes_per_entry();
}

void KVCache::grow(size_t need) {
  if (need <= cap_) return;
  ACCEL_CHECK(storage_ != nullptr, "a default-constructed KVCache has no storage to grow");
  const size_t cap = std::max(need, std::max<size_t>(64, cap_ * 2));
  storage_->resize(cap);
  pos_.resize(cap);
  cap_ = cap;
}

void KVCache::stage(const int32_t* positions, size_t n) {
  grow(n_ + n);
  std::copy(positions, positions + n, pos_.begin() + std::ptrdiff_t(n_));
}

// Writing past the capacity would land outside the storage; a wrong layer in another layer's rows.
void KVCache::check_batch(int layer, size_t n) const {
  ACCEL_CHECK(n_ + n <= cap_, "a batch of %zu entries after %zu: capacity %zu (stage() first)", n,
              n_, cap_);
  ACCEL_CHECK(layer >= 0 && layer < n_layer_, "layer %d of %d", layer, n_layer_);
}

void KVCache::attend(int layer, const AttentionShape& shape, const float* q, size_t ldq,
                     const int32_t* q_pos, const float* k_new, const float* v_new, size_t ld_new,
                     size_t n, float* out, size_t ldo) {
  check_batch(layer, n);
  storage_->attend(layer, shape, AttendBatch{q, ldq, q_pos, k_new, v_new, ld_new, n, out, ldo}, n_,
                   pos_.data());
}

void KVCache::store(int layer, const float* k, const float* v, size_t ld, size_t n) {
  check_batch(layer, n);
  storage_->store(layer, k, v, ld, n, n_);
}

void KVCache::commit(size_t n) {
  ACCEL_CHECK(n_ + n <= cap_, "commit of %zu entries after %zu: capacity %zu (stage() first)", n,
              n_, cap_);
  n_ += n;
}

const float* KVCache::f32_keys(int layer) const {
  const float* k = storage_ ? storage_->f32_keys(layer) : nullptr;
  if (!k)
    throw std::logic_error("KVCache::f32_keys: the cache stores " + kv_dtype_name(dtype()) +
                           ", not f32");
  return k;
}

}  // namespace accel
