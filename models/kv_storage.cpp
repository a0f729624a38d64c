// The storage types and their registry (see kv_storage.h). Dense types (f32, f16) attend with
// the engine's batch-invariant attention kernel, f16 rows widened inside it; quantized types
// (int4, q8_0) keep key blocks and value blocks or records (kernels/kv_quant.h) and attend with
// the fused kernel
// (kernels/attention_quant.h) where their placement policy says so.
#include "models/kv_storage.h"
#include "models/kv_storage_kivi.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "kernels/attention_quant.h"
#include "kernels/kv_quant.h"
#include "kernels/kv_quant_kivi.h"
#include "kernels/quant.h"
#include "kernels/stream_memory.h"
#include "kernels/threading.h"

namespace accel {

namespace {

// Rows of element type T (float or IEEE half as uint16_t), one [capacity][kv_dim] array per
// layer for K and for V.
template <class T, KVDType kType, KVFormat kFormat>
class DenseStorage final : public KVStorage {
 public:
  DenseStorage(int n_layer, int n_kv_heads, int head_dim)
      : kv_dim_(size_t(n_kv_heads) * size_t(head_dim)), k_(size_t(n_layer)), v_(size_t(n_layer)) {}
  static size_t bytes_per_row(int n_kv_heads, int head_dim) {
    return 2 * size_t(n_kv_heads) * size_t(head_dim) * sizeof(T);
  }
  KVDType dtype() const override { return kType; }
  size_t row_bytes() const override { return 2 * kv_dim_ * sizeof(T); }
  void resize(size_t capacity) override {
    for (auto& x : k_) x.resize(capacity * kv_dim_);
    for (auto& x : v_) x.resize(capacity * kv_dim_);
  }
  void release() override {
    for (auto& x : k_) StreamVector<T>().swap(x);
    for (auto& x : v_) StreamVector<T>().swap(x);
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
                     b.n_kv ? b.n_kv : row0 + b.n, b.out, b.ldo);
  }
  void store(int layer, const float* k, const float* v, size_t ld, size_t n, size_t row0) override {
    T* kd = k_[size_t(layer)].data();
    T* vd = v_[size_t(layer)].data();
    for (size_t t = 0; t < n; ++t) {
      store_row(k + t * ld, kd + (row0 + t) * kv_dim_);
      store_row(v + t * ld, vd + (row0 + t) * kv_dim_);
    }
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
  std::vector<StreamVector<T>> k_, v_;  // (layer) -> [capacity][kv_dim]
};

using F32Storage = DenseStorage<float, KVDType::F32, KVFormat::F32>;
using F16Storage = DenseStorage<uint16_t, KVDType::F16, KVFormat::F16>;

// Where a quantized type's batch attends. Seed: as Open-TQ-Metal does, a multi-token batch
// (prefill, a verify step) attends over full-precision K/V (the history dequantized, its own rows
// as computed) and is stored quantized afterwards, while a one-token decode step quantizes its row
// first and attends over the quantized cache with the fused kernel. Uniform: every batch is
// quantized first and attends through the fused kernel, so results do not depend on how tokens
// are batched (SpecPrefill, PLD stay batch-invariant).
enum class QuantPlacement { Seed, Uniform };

// Head-major per layer: keys as key blocks [kv head][capacity / 32][block], values as value blocks
// likewise (int4) or records [kv head][capacity][record] (q8_0) (kernels/kv_quant.h).
template <KVDType kType, KVQuant kFormat, QuantPlacement kPlacement>
class QuantStorage final : public KVStorage {
 public:
  QuantStorage(int n_layer, int n_kv_heads, int head_dim)
      : n_heads_(n_kv_heads),
        head_dim_(head_dim),
        rec_(kv_quant_record_bytes(kFormat, head_dim)),
        k_(size_t(n_layer)),
        v_(size_t(n_layer)) {}
  static size_t bytes_per_row(int n_kv_heads, int head_dim) {
    return 2 * size_t(n_kv_heads) * kv_quant_record_bytes(kFormat, head_dim);
  }
  // How the fused decode kernel computes P.V: exact for every type but int4-pv8.
  static constexpr QuantPV kPV = kType == KVDType::Int4Pv8 ? QuantPV::Int8 : QuantPV::Exact;
  KVDType dtype() const override { return kType; }
  size_t row_bytes() const override { return bytes_per_row(n_heads_, head_dim_); }
  void resize(size_t capacity) override {
    for (auto& x : k_) relayout(x, khead(cap_), khead(capacity));
    for (auto& x : v_) relayout(x, vhead(cap_), vhead(capacity));
    cap_ = capacity;
  }
  void release() override {
    for (auto* side : {&k_, &v_})
      for (auto& x : *side) StreamVector<uint8_t>().swap(x);
    cap_ = 0;
  }
  void attend(int layer, const AttentionShape& s, const AttendBatch& b, size_t row0,
              const int32_t* kv_pos) override {
    const QuantKV kv = records(layer);
    store(kv, b, row0);
    const size_t n_kv = b.n_kv ? b.n_kv : row0 + b.n;
    if (kPlacement == QuantPlacement::Uniform || b.n == 1) {
      attention_quant(s, b.q, b.ldq, b.q_pos, b.n, kv, kv_pos, n_kv, b.out, b.ldo, kSplitKChunk,
                      QuantScorePath::Auto, kPV);
      return;
    }
    if (n_kv == b.n) {  // nothing stored besides this batch: its own rows are the whole context
      attention_causal(s, b.q, b.ldq, b.q_pos, b.n, b.k_new, b.v_new, b.ld_new, kv_pos, n_kv, b.out,
                       b.ldo);
      return;
    }
    const size_t kv_dim = size_t(n_heads_) * size_t(head_dim_);
    kf_.resize(n_kv * kv_dim);
    vf_.resize(n_kv * kv_dim);
    // The history (before the batch and, in a ring, after it) dequantized; the batch as computed.
    dequantize_kv_rows(kv, n_heads_, head_dim_, 0, row0, kf_.data(), vf_.data(), kv_dim);
    const size_t after = row0 + b.n;
    if (n_kv > after)
      dequantize_kv_rows(kv, n_heads_, head_dim_, after, n_kv - after, &kf_[after * kv_dim],
                         &vf_[after * kv_dim], kv_dim);
    for (size_t t = 0; t < b.n; ++t) {
      std::memcpy(&kf_[(row0 + t) * kv_dim], b.k_new + t * b.ld_new, kv_dim * sizeof(float));
      std::memcpy(&vf_[(row0 + t) * kv_dim], b.v_new + t * b.ld_new, kv_dim * sizeof(float));
    }
    attention_causal(s, b.q, b.ldq, b.q_pos, b.n, kf_.data(), vf_.data(), kv_dim, kv_pos, n_kv,
                     b.out, b.ldo);
  }
  void store(int layer, const float* k, const float* v, size_t ld, size_t n, size_t row0) override {
    if (n == 0) return;
    AttendBatch b{};
    b.k_new = k;
    b.v_new = v;
    b.ld_new = ld;
    b.n = n;
    store(records(layer), b, row0);
  }

 private:
  QuantKV records(int layer) {
    return QuantKV{kFormat, k_[size_t(layer)].data(), v_[size_t(layer)].data(), khead(cap_),
                   vhead(cap_)};
  }
  // Quantizes the batch's rows into entries [row0, row0 + n).
  void store(const QuantKV& kv, const AttendBatch& b, size_t row0) {
    uint8_t* kd = const_cast<uint8_t*>(kv.k);
    uint8_t* vd = const_cast<uint8_t*>(kv.v);
    const double work = double(b.n) * n_heads_ * head_dim_ * 20.0;
    const size_t kbb = kv_quant_kblock_bytes(kFormat, head_dim_);
    // Tokens of one key (and value) block go to one range, so no two threads write the same
    // block's bytes.
    const size_t first = row0 / kKBlockTokens, last = (row0 + b.n - 1) / kKBlockTokens;
    parallel_ranges(last - first + 1, work, [&](size_t b0, size_t b1, int) {
      std::vector<uint8_t> rec(rec_);
      const size_t t0 = std::max(row0, (first + b0) * kKBlockTokens);
      const size_t t1 = std::min(row0 + b.n, (first + b1) * kKBlockTokens);
      for (size_t j = t0; j < t1; ++j)
        for (int g = 0; g < n_heads_; ++g) {
          const size_t col = size_t(g) * size_t(head_dim_);
          const float* src = b.k_new + (j - row0) * b.ld_new + col;
          kv_quantize_head(kFormat, src, head_dim_, rec.data());
          kblock_put(kFormat, head_dim_, rec.data(),
                     kd + size_t(g) * kv.k_head_stride + j / kKBlockTokens * kbb,
                     int(j % kKBlockTokens));
          const float* vsrc = b.v_new + (j - row0) * b.ld_new + col;
          if constexpr (kFormat == KVQuant::Int4) {
            kv_quantize_head(kFormat, vsrc, head_dim_, rec.data());
            vblock_put(kFormat, head_dim_, rec.data(),
                       vd + size_t(g) * kv.v_head_stride + j / kKBlockTokens * kbb,
                       int(j % kKBlockTokens));
          } else {
            kv_quantize_head(kFormat, vsrc, head_dim_,
                             vd + size_t(g) * kv.v_head_stride + j * rec_);
          }
        }
    });
  }
  size_t khead(size_t capacity) const { return kv_quant_khead_bytes(kFormat, head_dim_, capacity); }
  size_t vhead(size_t capacity) const { return kv_quant_vhead_bytes(kFormat, head_dim_, capacity); }
  // Head-major arrays move when the capacity changes: each head's bytes start at head * stride.
  void relayout(StreamVector<uint8_t>& x, size_t old_stride, size_t new_stride) {
    StreamVector<uint8_t> y(size_t(n_heads_) * new_stride);
    const size_t keep = std::min(old_stride, new_stride);
    if (!x.empty())
      for (int g = 0; g < n_heads_; ++g)
        std::memcpy(&y[size_t(g) * new_stride], &x[size_t(g) * old_stride], keep);
    x.swap(y);
  }
  int n_heads_, head_dim_;
  size_t rec_, cap_ = 0;
  std::vector<StreamVector<uint8_t>> k_, v_;  // (layer) -> head-major key blocks / values
  std::vector<float> kf_, vf_;                // seed placement: f32 context of a batch
};

using Int4Storage = QuantStorage<KVDType::Int4, KVQuant::Int4, QuantPlacement::Seed>;
using Int4UniformStorage =
    QuantStorage<KVDType::Int4Uniform, KVQuant::Int4, QuantPlacement::Uniform>;
using Int4Pv8Storage = QuantStorage<KVDType::Int4Pv8, KVQuant::Int4, QuantPlacement::Seed>;
using Q8Storage = QuantStorage<KVDType::Q8_0, KVQuant::Q8_0, QuantPlacement::Seed>;
using Q8UniformStorage = QuantStorage<KVDType::Q8_0Uniform, KVQuant::Q8_0, QuantPlacement::Uniform>;

// The registry: one row per storage type. A new type is one row here (and its enum value).
struct KVTypeEntry {
  KVDType type;
  const char* name;
  int group;             // head_dim must be a multiple of this
  bool batch_invariant;  // a token's results do not depend on how tokens are batched
  std::unique_ptr<KVStorage> (*make)(int n_layer, int n_kv_heads, int head_dim);
  size_t (*row_bytes)(int n_kv_heads, int head_dim);
};

template <class S>
std::unique_ptr<KVStorage> make_storage(int n_layer, int n_kv_heads, int head_dim) {
  return std::make_unique<S>(n_layer, n_kv_heads, head_dim);
}

template <class S>
constexpr KVTypeEntry row(KVDType t, const char* name, int group, bool batch_invariant) {
  return {t, name, group, batch_invariant, &make_storage<S>, &S::bytes_per_row};
}

template <int Bits>
std::unique_ptr<KVStorage> make_kivi(int n_layer, int n_kv_heads, int head_dim) {
  return make_kivi_storage(Bits, n_layer, n_kv_heads, head_dim);
}
template <int Bits>
size_t kivi_row_bytes(int n_kv_heads, int head_dim) {
  return kivi_bytes_per_row(Bits, n_kv_heads, head_dim);
}

constexpr KVTypeEntry kKVTypes[] = {
    row<F32Storage>(KVDType::F32, "f32", 1, true),
    row<F16Storage>(KVDType::F16, "f16", 1, true),
    row<Int4Storage>(KVDType::Int4, "int4", kKVQuantGroup, false),
    row<Int4UniformStorage>(KVDType::Int4Uniform, "int4-uniform", kKVQuantGroup, true),
    row<Q8Storage>(KVDType::Q8_0, "q8_0", kKVQuantGroup, false),
    row<Q8UniformStorage>(KVDType::Q8_0Uniform, "q8_0-uniform", kKVQuantGroup, true),
    {KVDType::Kivi4, "kivi4", kKiviGroup, false, &make_kivi<4>, &kivi_row_bytes<4>},
    {KVDType::Kivi2, "kivi2", kKiviGroup, false, &make_kivi<2>, &kivi_row_bytes<2>},
    row<Int4Pv8Storage>(KVDType::Int4Pv8, "int4-pv8", kKVQuantGroup, false),
};

// The attention kernels of quantized types hold a head in registers: head_dim <= 256 there.
// Byte counts (kv_row_bytes) only need whole groups.
void check_shape(const KVTypeEntry& e, int n_kv_heads, int head_dim, bool for_kernel = true) {
  if (n_kv_heads <= 0 || head_dim <= 0 || head_dim % e.group != 0 ||
      (for_kernel && e.group > 1 && head_dim > 256))
    throw std::invalid_argument(std::string("kv_dtype ") + e.name + ": head_dim " +
                                std::to_string(head_dim) + " (" + std::to_string(n_kv_heads) +
                                " kv heads) is not supported; it needs head_dim a multiple of " +
                                std::to_string(e.group) +
                                (for_kernel && e.group > 1 ? " and at most 256" : ""));
}

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

bool kv_dtype_batch_invariant(KVDType t) {
  return entry(t).batch_invariant;
}

std::optional<KVDType> kv_dtype_from_name(std::string_view name) {
  for (const auto& e : kKVTypes)
    if (name == e.name) return e.type;
  return std::nullopt;
}

std::unique_ptr<KVStorage> make_kv_storage(KVDType t, int n_layer, int n_kv_heads, int head_dim) {
  const KVTypeEntry& e = entry(t);
  check_shape(e, n_kv_heads, head_dim);
  return e.make(n_layer, n_kv_heads, head_dim);
}

size_t kv_row_bytes(KVDType t, int n_kv_heads, int head_dim) {
  const KVTypeEntry& e = entry(t);
  check_shape(e, n_kv_heads, head_dim, /*for_kernel=*/false);
  return e.row_bytes(n_kv_heads, head_dim);
}

}  // namespace accel
