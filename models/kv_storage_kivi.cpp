// KIVI-style storage (kv_storage_kivi.h). Per layer: the quantized key blocks and value records
// of every complete 32-token block below `quantized` (head-major, as QuantStorage lays them out),
// and the f32 residual: the rows of the block being filled. A store that lands below `quantized`
// (the cache was trimmed: a rejected draft, a rolled-back verify) reopens that block: its kept
// rows come back from their codes, so they stay as lossy as they were.
#include "models/kv_storage_kivi.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/attention_kivi.h"
#include "kernels/check.h"
#include "kernels/kv_quant_kivi.h"

namespace accel {

namespace {

constexpr size_t kBlock = kKiviGroup;
// Batches up to this many rows attend with the fused kernel (decode, speculative verification);
// larger ones dequantize once (attention_kivi_dequantized).
constexpr size_t kFusedMaxRows = 16;

class KiviStorage final : public KVStorage {
 public:
  KiviStorage(int bits, int n_layer, int n_kv_heads, int head_dim)
      : bits_(bits),
        heads_(size_t(n_kv_heads)),
        D_(size_t(head_dim)),
        kv_dim_(heads_ * D_),
        kbb_(kivi_key_block_bytes(bits, head_dim)),
        vrb_(kivi_value_record_bytes(bits, head_dim)),
        layers_(size_t(n_layer)) {
    for (Layer& l : layers_) {
      l.res_k.resize(kBlock * kv_dim_);
      l.res_v.resize(kBlock * kv_dim_);
    }
  }
  KVDType dtype() const override { return bits_ == 4 ? KVDType::Kivi4 : KVDType::Kivi2; }
  size_t row_bytes() const override { return kivi_bytes_per_row(bits_, int(heads_), int(D_)); }
  void resize(size_t capacity) override {
    const size_t blocks = (capacity + kBlock - 1) / kBlock;
    for (Layer& l : layers_) {
      relayout(l.k, blocks_ * kbb_, blocks * kbb_);
      relayout(l.v, cap_ * vrb_, capacity * vrb_);
      l.quantized = std::min(l.quantized, capacity / kBlock * kBlock);
    }
    cap_ = capacity;
    blocks_ = blocks;
  }
  void release() override {
    for (Layer& l : layers_) {
      std::vector<uint8_t>().swap(l.k);
      std::vector<uint8_t>().swap(l.v);
      l.quantized = 0;
    }
    cap_ = blocks_ = 0;
  }
  void attend(int layer, const AttentionShape& s, const AttendBatch& b, size_t row0,
              const int32_t* kv_pos) override {
    // KIVI's blocks and residual grow by appending; a ring (kv_cache.h) does not use this type.
    ACCEL_CHECK(b.n_kv == 0 || b.n_kv == row0 + b.n,
                "kivi storage attends over a linear cache only");
    Layer& l = layers_[size_t(layer)];
    reopen(l, row0);
    const size_t n_kv = row0 + b.n;
    const size_t res = row0 - l.quantized;  // residual rows stored before this batch
    KiviKV kv{bits_, l.k.data(), l.v.data(), blocks_ * kbb_, cap_ * vrb_, l.quantized, {}};
    kv.rows[0] = {l.res_k.data(), l.res_v.data(), kv_dim_, res};
    kv.rows[1] = {b.k_new, b.v_new, b.ld_new, b.n};
    if (b.n <= kFusedMaxRows && s.softcap == 0.f) {
      attention_kivi(s, b.q, b.ldq, b.q_pos, b.n, kv, kv_pos, n_kv, b.out, b.ldo);
    } else {
      // A prefill-sized batch: dequantizing once is amortized over its rows, and the f32 kernel's
      // row-lane layout is faster than per-row tiles. The scratch is released afterwards so that
      // decode holds none.
      std::vector<float> kf, vf;
      attention_kivi_dequantized(s, b.q, b.ldq, b.q_pos, b.n, kv, kv_pos, n_kv, b.out, b.ldo, kf,
                                 vf);
    }
    put(l, b.k_new, b.v_new, b.ld_new, b.n, row0);
  }
  void store(int layer, const float* k, const float* v, size_t ld, size_t n, size_t row0) override {
    if (n == 0) return;  // nothing written: no block is reopened
    Layer& l = layers_[size_t(layer)];
    reopen(l, row0);
    put(l, k, v, ld, n, row0);
  }

 private:
  struct Layer {
    std::vector<uint8_t> k, v;        // key blocks [head][block][kbb], values [head][row][vrb]
    std::vector<float> res_k, res_v;  // [32][kv_dim]: rows quantized .. quantized + 31
    size_t quantized = 0;             // rows below this are in k / v (a multiple of 32)
  };

  // Rows [row0, ...) are about to be written: a quantized block holding row0 becomes the residual
  // again (its rows below row0 decoded from their codes); blocks after it are dropped.
  void reopen(Layer& l, size_t row0) {
    if (row0 >= l.quantized) return;
    const size_t b = row0 / kBlock;
    for (size_t g = 0; g < heads_; ++g) {
      kivi_dequantize_key_block(&l.k[(g * blocks_ + b) * kbb_], int(D_), bits_, kBlock,
                                l.res_k.data() + g * D_, kv_dim_);
      for (size_t t = 0; t < kBlock; ++t)
        kivi_dequantize_value(&l.v[(g * cap_ + b * kBlock + t) * vrb_], int(D_), bits_,
                              l.res_v.data() + t * kv_dim_ + g * D_);
    }
    l.quantized = b * kBlock;
  }
  // Writes rows [row0, row0 + n) (row0 >= quantized, at most the residual's end): each into the
  // residual, quantizing the block when its last row arrives.
  void put(Layer& l, const float* k, const float* v, size_t ld, size_t n, size_t row0) {
    if (row0 + n > cap_)
      throw std::logic_error("kivi storage: rows past the capacity (" + std::to_string(cap_) + ")");
    // Rows start inside the residual block; sealing a full block moves `quantized` past it, so j
    // stays below kBlock for every row after the first.
    ACCEL_CHECK(row0 >= l.quantized && row0 - l.quantized < kBlock,
                "kivi storage: rows from %zu, residual block starts at %zu", row0, l.quantized);
    for (size_t t = 0; t < n; ++t) {
      const size_t j = row0 + t - l.quantized;
      std::memcpy(&l.res_k[j * kv_dim_], k + t * ld, kv_dim_ * sizeof(float));
      std::memcpy(&l.res_v[j * kv_dim_], v + t * ld, kv_dim_ * sizeof(float));
      if (j + 1 == kBlock) seal(l);
    }
  }
  void seal(Layer& l) {
    const size_t b = l.quantized / kBlock;
    for (size_t g = 0; g < heads_; ++g) {
      kivi_quantize_key_block(l.res_k.data() + g * D_, kv_dim_, int(D_), bits_,
                              &l.k[(g * blocks_ + b) * kbb_]);
      for (size_t t = 0; t < kBlock; ++t)
        kivi_quantize_value(l.res_v.data() + t * kv_dim_ + g * D_, int(D_), bits_,
                            &l.v[(g * cap_ + l.quantized + t) * vrb_]);
    }
    l.quantized += kBlock;
  }
  // Head-major arrays move when the capacity changes: each head's bytes start at head * stride.
  void relayout(std::vector<uint8_t>& x, size_t old_stride, size_t new_stride) const {
    std::vector<uint8_t> y(heads_ * new_stride);
    const size_t keep = std::min(old_stride, new_stride);
    if (!x.empty())
      for (size_t g = 0; g < heads_; ++g) std::memcpy(&y[g * new_stride], &x[g * old_stride], keep);
    x.swap(y);
  }

  int bits_;
  size_t heads_, D_, kv_dim_, kbb_, vrb_;
  size_t cap_ = 0, blocks_ = 0;
  std::vector<Layer> layers_;
};

}  // namespace

std::unique_ptr<KVStorage> make_kivi_storage(int bits, int n_layer, int n_kv_heads, int head_dim) {
  if (bits != 2 && bits != 4) throw std::invalid_argument("kivi storage: bits must be 2 or 4");
  return std::make_unique<KiviStorage>(bits, n_layer, n_kv_heads, head_dim);
}

size_t kivi_bytes_per_row(int bits, int n_kv_heads, int head_dim) {
  // Keys: a block's bytes over its 32 tokens; values: one record per token.
  return size_t(n_kv_heads) *
         (kivi_key_block_bytes(bits, head_dim) / kBlock + kivi_value_record_bytes(bits, head_dim));
}

}  // namespace accel
