// KVCache bookkeeping (see kv_cache.h): positions, size and capacity; rows live in the storage.
// Grows geometrically so long prompts do not reallocate per chunk; sliding-window layers keep a
// fixed ring instead (the header says why it stays exact).
#include "models/kv_cache.h"

#include <algorithm>
#include <climits>
#include <stdexcept>
#include <string>

#include "kernels/check.h"

namespace accel {

KVCache::KVCache(int n_layer, int kv_dim, KVDType dtype) : KVCache(n_layer, 1, kv_dim, dtype) {}

KVCache::KVCache(int n_layer, int n_kv_heads, int head_dim, KVDType dtype)
    : n_layer_(n_layer),
      kv_dim_(n_kv_heads * head_dim),
      storage_(make_kv_storage(dtype, n_layer, n_kv_heads, head_dim)) {}

KVCache::KVCache(const std::vector<KVLayerShape>& layers, KVDType dtype, size_t max_rollback)
    : n_layer_(int(layers.size())) {
  const KVLayerShape* full = nullptr;
  const KVLayerShape* sliding = nullptr;
  int n_full = 0;
  for (const KVLayerShape& l : layers) {
    const KVLayerShape*& first = l.window > 0 ? sliding : full;
    if (!first) first = &l;
    if (l.n_kv_heads != first->n_kv_heads || l.head_dim != first->head_dim ||
        l.window != first->window)
      throw std::invalid_argument(std::string("KVCache: ") + (l.window > 0 ? "sliding" : "full") +
                                  " layers with different row shapes or windows");
    local_.push_back(l.window > 0 ? -1 - ring_.n_layer++ : n_full++);
  }
  if (full) {
    kv_dim_ = full->n_kv_heads * full->head_dim;
    storage_ = make_kv_storage(dtype, n_full, full->n_kv_heads, full->head_dim);
  }
  if (!sliding) return;
  if (max_rollback == 0 || max_rollback > (1u << 20))
    throw std::invalid_argument("KVCache: max_rollback " + std::to_string(max_rollback) +
                                " must be in [1, 2^20] when a layer slides");
  ring_.window = sliding->window;
  // KIVI reuses a slot block whole (kv_storage_kivi.cpp): its first new row retires the 31 older
  // entries after it, so those slots are slack.
  const size_t slack = dtype == KVDType::Kivi4 || dtype == KVDType::Kivi2 ? 31 : 0;
  ring_.slots = (size_t(sliding->window) + max_rollback + slack + 63) / 64 * 64;
  ring_.reach = ring_.slots - slack;
  ring_.storage = make_kv_storage(dtype, ring_.n_layer, sliding->n_kv_heads, sliding->head_dim);
  ring_.storage->resize(ring_.slots);
  ring_.pos.assign(ring_.slots, INT32_MAX);
}

KVCache::KVCache(RecurrentLayers r, int n_kv_heads, int head_dim, KVDType dtype)
    : n_layer_(int(r.layers.size())), kv_dim_(n_kv_heads * head_dim) {
  validate(r.state);
  if (r.input_width == 0 || !r.replay)
    throw std::invalid_argument("KVCache: recurrent layers need an input width and a replay");
  if (!r.stateless.empty() && r.stateless.size() != r.layers.size())
    throw std::invalid_argument("KVCache: stateless flags for " +
                                std::to_string(r.stateless.size()) + " layers, expected " +
                                std::to_string(r.layers.size()));
  int n_attn = 0;
  for (size_t l = 0; l < r.layers.size(); ++l) {
    const bool rec = r.layers[l] != 0, none = !r.stateless.empty() && r.stateless[l] != 0;
    if (rec && none)
      throw std::invalid_argument("KVCache: layer " + std::to_string(l) +
                                  " is flagged both recurrent and stateless");
    rec_.index.push_back(rec ? int(rec_.states.size()) : -1);
    local_.push_back(rec || none ? INT_MIN : n_attn++);
    if (rec) rec_.states.emplace_back(r.state);
    n_stateless_ += none ? 1 : 0;
  }
  rec_.inputs.resize(rec_.states.size());
  rec_.width = r.input_width;
  rec_.replay = std::move(r.replay);
  if (n_attn > 0) storage_ = make_kv_storage(dtype, n_attn, n_kv_heads, head_dim);
}

bool KVCache::is_recurrent(int layer) const {
  return !rec_.index.empty() && layer >= 0 && layer < n_layer_ && rec_.index[size_t(layer)] >= 0;
}

bool KVCache::has_kv(int layer) const {
  return layer >= 0 && layer < n_layer_ && (local_.empty() || local_[size_t(layer)] != INT_MIN);
}

RecurrentState& KVCache::recurrent_state(int layer) {
  ACCEL_CHECK(is_recurrent(layer), "layer %d holds no recurrent state", layer);
  return rec_.states[size_t(rec_.index[size_t(layer)])];
}

const RecurrentState& KVCache::recurrent_state(int layer) const {
  ACCEL_CHECK(is_recurrent(layer), "layer %d holds no recurrent state", layer);
  return rec_.states[size_t(rec_.index[size_t(layer)])];
}

float* KVCache::recurrent_inputs(int layer, size_t n) {
  ACCEL_CHECK(is_recurrent(layer), "layer %d holds no recurrent state", layer);
  ACCEL_CHECK(n == rec_.logged, "recurrent inputs of %zu tokens for a staged batch of %zu", n,
              rec_.logged);
  std::vector<float>& in = rec_.inputs[size_t(rec_.index[size_t(layer)])];
  in.resize(n * rec_.width);
  return in.data();
}

size_t KVCache::recurrent_bytes() const {
  size_t b = 0;
  for (const RecurrentState& s : rec_.states) b += s.bytes();
  return b;
}

// Every state is checkpointed at the last committed entry (unless checkpoints are off); a state a
// failed batch left advanced goes back to its checkpoint first, which needs one.
void KVCache::recurrent_stage(size_t n) {
  for (RecurrentState& s : rec_.states) {
    if (s.tokens() != n_) {
      if (!rec_.checkpointed || !s.has_checkpoint() || s.checkpoint_tokens() != n_)
        throw std::logic_error("KVCache: a recurrent state is at " + std::to_string(s.tokens()) +
                               " tokens and the cache at " + std::to_string(n_) +
                               " after a failed batch, with no checkpoint to restore");
      s.rollback();
    }
    if (rec_.checkpoints) s.checkpoint();
  }
  rec_.checkpointed = rec_.checkpoints;
  rec_.base = n_;
  rec_.logged = n;
}

void KVCache::recurrent_trim(size_t keep) {
  if (rec_.states.empty() || keep == n_) return;
  if (keep == 0) {
    for (RecurrentState& s : rec_.states) s.clear();
    rec_.logged = rec_.base = 0;
    return;
  }
  if (!rec_.checkpointed)
    throw std::logic_error(
        "KVCache::trim: rolling back to " + std::to_string(keep) +
        " entries: the last batch was staged without recurrent checkpoints "
        "(set_rollback_checkpoints(false)), so recurrent layers cannot roll back");
  if (keep < rec_.base)
    throw std::logic_error("KVCache::trim: rolling back to " + std::to_string(keep) +
                           " entries: recurrent layers roll back only to the start of the last "
                           "batch (entry " +
                           std::to_string(rec_.base) + ") or to an empty cache");
  const size_t n = keep - rec_.base;
  for (size_t i = 0; i < rec_.states.size(); ++i) {
    RecurrentState& s = rec_.states[i];
    s.rollback();
    int layer = 0;
    while (rec_.index[size_t(layer)] != int(i)) ++layer;
    if (n > 0) rec_.replay(layer, s, rec_.inputs[i].data(), n);
    s.advance(n);
  }
}

size_t KVCache::full_layers() const {
  return size_t(n_layer_ - ring_.n_layer - n_stateless_) - rec_.states.size();
}

int KVCache::window(int layer) const {
  return !local_.empty() && local_[size_t(layer)] < 0 ? ring_.window : 0;
}

void KVCache::ring_forget(size_t from, size_t to) {
  if (!ring_.slots) return;
  for (size_t e = std::max(from, to > ring_.slots ? to - ring_.slots : 0); e < to; ++e)
    ring_.pos[e % ring_.slots] = INT32_MAX;
}

void KVCache::trim(size_t n) {
  const size_t keep = n >= n_ ? 0 : n_ - n;
  recurrent_trim(keep);  // first: it throws before changing anything (hybrids have no rings)
  // The next entry (at index keep) needs entries [keep - window + 1, keep); entry x's slot was
  // overwritten once entry x + R was written, i.e. when x + R < high_.
  const size_t lo = keep + 1 > size_t(ring_.window) ? keep + 1 - size_t(ring_.window) : 0;
  if (ring_.slots && keep > 0 && lo + ring_.reach < high_)
    throw std::logic_error(
        "KVCache::trim: rolling back to " + std::to_string(keep) + " entries after " +
        std::to_string(high_) + " were written: the sliding-window layers' ring (window " +
        std::to_string(ring_.window) + " + rollback " + std::to_string(max_rollback()) +
        " slots) has overwritten entries that window needs; the cache's max_rollback is too small");
  ring_forget(keep, high_);
  high_ = keep;
  n_ = keep;
}

void KVCache::clear() {
  std::fill(ring_.pos.begin(), ring_.pos.end(), INT32_MAX);
  for (RecurrentState& s : rec_.states) s.clear();
  rec_.logged = rec_.base = 0;
  n_ = high_ = 0;
}

void KVCache::release() {
  if (storage_) storage_->release();
  if (ring_.storage) ring_.storage->release();  // the slot count stays: grow() reallocates
  std::vector<int32_t>().swap(ring_.pos);
  std::vector<int32_t>().swap(pos_);
  for (RecurrentState& s : rec_.states) s.clear();
  for (auto& in : rec_.inputs) std::vector<float>().swap(in);
  rec_.logged = rec_.base = 0;
  n_ = cap_ = high_ = 0;
}

size_t KVCache::bytes_per_entry() const {
  const size_t full = storage_ ? full_layers() * storage_->row_bytes() : 0;
  const size_t ring = ring_.storage ? size_t(ring_.n_layer) * ring_.storage->row_bytes() : 0;
  return storage_ || ring_.storage ? full + ring + sizeof(int32_t) : 0;
}
size_t KVCache::bytes() const {
  const size_t full = storage_ ? full_layers() * storage_->row_bytes() : 0;
  const size_t ring = ring_.storage ? size_t(ring_.n_layer) * ring_.storage->row_bytes() : 0;
  return n_ * (full + sizeof(int32_t)) + std::min(n_, size_t(ring_.window)) * ring +
         recurrent_bytes();
}
size_t KVCache::allocated_bytes() const {
  const size_t full = storage_ ? full_layers() * storage_->row_bytes() : 0;
  const size_t ring = ring_.storage ? size_t(ring_.n_layer) * ring_.storage->row_bytes() : 0;
  size_t rec = 0;  // states, their checkpoints and the logged inputs
  for (const RecurrentState& s : rec_.states) rec += s.bytes() + s.checkpoint_bytes();
  for (const auto& in : rec_.inputs) rec += in.capacity() * sizeof(float);
  return cap_ * (full + sizeof(int32_t)) + ring_.pos.size() * (ring + sizeof(int32_t)) + rec;
}

void KVCache::grow(size_t need) {
  if (need <= cap_) return;
  ACCEL_CHECK(storage_ != nullptr || ring_.storage != nullptr || has_recurrent(),
              "a default-constructed KVCache has no storage to grow");
  if (ring_.storage && ring_.pos.empty()) {  // after release()
    ring_.storage->resize(ring_.slots);
    ring_.pos.assign(ring_.slots, INT32_MAX);
  }
  const size_t cap = std::max(need, std::max<size_t>(64, cap_ * 2));
  if (storage_) storage_->resize(cap);
  pos_.resize(cap);
  cap_ = cap;
}

void KVCache::stage(const int32_t* positions, size_t n) {
  grow(n_ + n);
  if (ring_.slots) {
    // Rows a previous batch wrote but did not commit are forgotten (their slots read as empty).
    if (high_ > n_) trim(0);
    for (size_t t = 0; t < n; ++t)
      if ((n_ + t > 0 && positions[t] <= (t ? positions[t - 1] : pos_[n_ - 1])))
        throw std::invalid_argument(
            "KVCache::stage: positions must increase from entry to entry when layers slide "
            "(entry " +
            std::to_string(n_ + t) + " has position " + std::to_string(positions[t]) + ")");
    high_ = n_ + n;
  }
  std::copy(positions, positions + n, pos_.begin() + std::ptrdiff_t(n_));
  if (has_recurrent()) recurrent_stage(n);
}

// Writing past the capacity would land outside the storage; a wrong layer in another layer's rows.
void KVCache::check_batch(int layer, size_t n) const {
  ACCEL_CHECK(n_ + n <= cap_, "a batch of %zu entries after %zu: capacity %zu (stage() first)", n,
              n_, cap_);
  ACCEL_CHECK(layer >= 0 && layer < n_layer_, "layer %d of %d", layer, n_layer_);
  ACCEL_CHECK(has_kv(layer), "layer %d is recurrent or stateless: it has no K/V rows", layer);
}

void KVCache::attend(int layer, const AttentionShape& shape, const float* q, size_t ldq,
                     const int32_t* q_pos, const float* k_new, const float* v_new, size_t ld_new,
                     size_t n, float* out, size_t ldo) {
  check_batch(layer, n);
  const int local = local_.empty() ? layer : local_[size_t(layer)];
  if (local < 0) {
    ACCEL_CHECK(shape.window == ring_.window, "layer %d: window %d, its ring keeps %d", layer,
                shape.window, ring_.window);
    ring_batch(-1 - local, &shape, q, ldq, q_pos, k_new, v_new, ld_new, n, out, ldo);
    return;
  }
  storage_->attend(local, shape, AttendBatch{q, ldq, q_pos, k_new, v_new, ld_new, n, out, ldo, 0},
                   n_, pos_.data());
}

void KVCache::ring_batch(int local, const AttentionShape* shape, const float* q, size_t ldq,
                         const int32_t* q_pos, const float* k, const float* v, size_t ld, size_t n,
                         float* out, size_t ldo) {
  const size_t R = ring_.slots, piece = ring_.reach - size_t(ring_.window) + 1;
  for (size_t t0 = 0; t0 < n;) {
    const size_t e0 = n_ + t0, slot = e0 % R;
    const size_t len = std::min({n - t0, R - slot, piece});
    if (!shape) {
      ring_.storage->store(local, k + t0 * ld, v + t0 * ld, ld, len, slot);
      t0 += len;
      continue;
    }
    // Slot positions once this piece is written: committed entries, then the batch's so far.
    ring_.view = ring_.pos;
    const size_t end = e0 + len;
    for (size_t e = std::max(n_, end > R ? end - R : 0); e < end; ++e) ring_.view[e % R] = pos_[e];
    ring_.storage->attend(local, *shape,
                          AttendBatch{q + t0 * ldq, ldq, q_pos + t0, k + t0 * ld, v + t0 * ld, ld,
                                      len, out + t0 * ldo, ldo, R},
                          slot, ring_.view.data());
    t0 += len;
  }
}

void KVCache::store(int layer, const float* k, const float* v, size_t ld, size_t n) {
  check_batch(layer, n);
  const int local = local_.empty() ? layer : local_[size_t(layer)];
  if (local < 0) {
    ring_batch(-1 - local, nullptr, nullptr, 0, nullptr, k, v, ld, n, nullptr, 0);
    return;
  }
  storage_->store(local, k, v, ld, n, n_);
}

void KVCache::commit(size_t n) {
  ACCEL_CHECK(n_ + n <= cap_, "commit of %zu entries after %zu: capacity %zu (stage() first)", n,
              n_, cap_);
  for (const RecurrentState& s : rec_.states)
    ACCEL_CHECK(s.tokens() == n_ + n, "commit of %zu entries after %zu: a recurrent state has %zu",
                n, n_, s.tokens());
  if (ring_.slots) {
    const size_t end = n_ + n;
    for (size_t e = std::max(n_, end > ring_.slots ? end - ring_.slots : 0); e < end; ++e)
      ring_.pos[e % ring_.slots] = pos_[e];
  }
  n_ += n;
}

const float* KVCache::f32_keys(int layer) const {
  if (is_recurrent(layer))
    throw std::logic_error("KVCache::f32_keys: layer " + std::to_string(layer) +
                           " is a recurrent layer; it keeps a state, not keys");
  if (!has_kv(layer))
    throw std::logic_error("KVCache::f32_keys: layer " + std::to_string(layer) +
                           " holds no K/V rows (an FFN-only block)");
  if (!local_.empty() && local_[size_t(layer)] < 0)
    throw std::logic_error(
        "KVCache::f32_keys: layer " + std::to_string(layer) +
        " is a sliding-window layer; its rows are a ring, not one row per entry");
  const int local = local_.empty() ? layer : local_[size_t(layer)];
  const float* k = storage_ ? storage_->f32_keys(local) : nullptr;
  if (!k)
    throw std::logic_error("KVCache::f32_keys: the cache stores " + kv_dtype_name(dtype()) +
                           ", not f32");
  return k;
}

}  // namespace accel
