// The dense storage types (f32, f16) and the storage registry (see kv_storage.h). Both attend with
// the engine's batch-invariant attention kernel; f16 rows are widened inside it, block by block.
#include "models/kv_storage.h"

#include <cstring>
#include <stdexcept>

#include "kernels/quant.h"

namespace accel {

namespace {

// Rows of element type T (float or IEEE half as uint16_t), one [capacity][kv_dim] array per
// layer for K and for V.
template <class T, KVDType kType, KVFormat kFormat>
class DenseStorage final : public KVStorage {
 public:
  DenseStorage(int n_layer, int kv_dim)
      : kv_dim_(size_t(kv_dim)), k_(size_t(n_layer)), v_(size_t(n_layer)) {}
  KVDType dtype() const override { return kType; }
  size_t row_bytes() const override { return 2 * kv_dim_ * sizeof(T); }
  void resize(size_t capacity) override {
    for (auto& x : k_) x.resize(capacity * kv_dim_);
    for (auto& x : v_) x.resize(capacity * kv_dim_);
  }
  void release() override {
    for (auto& x : k_) std::vector<T>().swap(x);
    for (auto& x : v_) std::vector<T>().swap(x);
  }
  void attend(int layer, const AttentionShape& s, const AttendBatch& b, size_t row0,
              const int32_t* kv_pos) override {
    T* kd = k_[size_t(layer)].data();
    T* vd = v_[size_t(layer)].data();
    for (size_t t = 0; t < b.n; ++t) {
      store_row(b.k_new + t * b.ld_new, kd + (row0 + t) * kv_dim_);
      store_row(b.v_new + t * b.ld_new, vd + (row0 + t) * kv_dim_);
    }
    attention_causal(s, b.q, b.ldq, b.q_pos, b.n, KVRows{kd, vd, kv_dim_, kFormat}, kv_pos,
                     row0 + b.n, b.out, b.ldo);
  }
  const float* f32_keys(int layer) const override {
    if constexpr (kType == KVDType::F32) return k_[size_t(layer)].data();
    return nullptr;
  }

 private:
  void store_row(const float* src, T* dst) const {
    if constexpr (kType == KVDType::F32)
      std::memcpy(dst, src, kv_dim_ * sizeof(float));
    else
      quantize_row(DType::F16, src, dst, kv_dim_);  // round to nearest even
  }
  size_t kv_dim_;
  std::vector<std::vector<T>> k_, v_;  // (layer) -> [capacity][kv_dim]
};

using F32Storage = DenseStorage<float, KVDType::F32, KVFormat::F32>;
using F16Storage = DenseStorage<uint16_t, KVDType::F16, KVFormat::F16>;

// The registry: one row per storage type. A new type is one row here (and its enum value).
struct KVTypeEntry {
  KVDType type;
  const char* name;
  std::unique_ptr<KVStorage> (*make)(int n_layer, int kv_dim);
};

template <class S>
std::unique_ptr<KVStorage> make_storage(int n_layer, int kv_dim) {
  return std::make_unique<S>(n_layer, kv_dim);
}

constexpr KVTypeEntry kKVTypes[] = {
    {KVDType::F32, "f32", &make_storage<F32Storage>},
    {KVDType::F16, "f16", &make_storage<F16Storage>},
};

const KVTypeEntry& entry(KVDType t) {
  for (const auto& e : kKVTypes)
    if (e.type == t) return e;
  throw std::logic_error("KV storage type " + std::to_string(int(t)) + " is not registered");
}

}  // namespace

std::string kv_dtype_name(KVDType t) {
  return entry(t).name;
}

std::vector<std::string> kv_dtype_names() {
  std::vector<std::string> out;
  for (const auto& e : kKVTypes) out.push_back(e.name);
  return out;
}

std::optional<KVDType> kv_dtype_from_name(std::string_view name) {
  for (const auto& e : kKVTypes)
    if (name == e.name) return e.type;
  return std::nullopt;
}

std::unique_ptr<KVStorage> make_kv_storage(KVDType t, int n_layer, int kv_dim) {
  return entry(t).make(n_layer, kv_dim);
}

}  // namespace accel
