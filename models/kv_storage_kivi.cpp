// KIVI-style storage (kv_storage_kivi.h). Per layer: the quantized key blocks and value records
// of sealed 32-row blocks (head-major, as QuantStorage lays them out), and the f32 residual: the
// rows of the block being filled. A store that lands in another block (the cache was trimmed: a
// rejected draft, a rolled-back verify; or a ring's next lap) reopens that block: its rows below
// the store come back from their codes, so they stay as lossy as they were.
#include "models/kv_storage_kivi.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/attention_kivi.h"
#include "kernels/check.h"
#include "kernels/kv_quant_kivi.h"
#include "kernels/stream_memory.h"

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
      relayout(l.v, blocks_ * kBlock * vrb_, blocks * kBlock * vrb_);
      if (l.res_block * kBlock + l.res_rows > capacity) {  // rows past the capacity are dropped
        l.res_block = std::min(l.res_block, capacity / kBlock);
        l.res_rows = 0;
      }
    }
    cap_ = capacity;
    blocks_ = blocks;
  }
  void release() override {
    release_prefill_scratch();
    for (Layer& l : layers_) {
      StreamVector<uint8_t>().swap(l.k);
      StreamVector<uint8_t>().swap(l.v);
      l.res_block = l.res_rows = 0;
    }
    cap_ = blocks_ = 0;
  }
  void attend(int layer, const AttentionShape& s, const AttendBatch& b, size_t row0,
              const int32_t* kv_pos) override {
    // A ring attends over all its slots; its pieces never wrap (kv_cache.cpp's ring_batch).
    const bool ring = b.n_kv != 0;
    ACCEL_CHECK(!ring || (b.n_kv == cap_ && row0 + b.n <= cap_ && cap_ % kBlock == 0),
                "kivi ring: rows %zu + %zu of %zu slots (capacity %zu)", row0, b.n, b.n_kv, cap_);
    Layer& l = layers_[size_t(layer)];
    reopen(l, row0);
    KiviKV kv{bits_, l.k.data(), l.v.data(), blocks_ * kbb_, blocks_ * kBlock * vrb_, 0, 0, 0, {}};
    kv.rows[0] = {l.res_k.data(), l.res_v.data(), kv_dim_, l.res_rows};
    kv.rows[1] = {b.k_new, b.v_new, b.ld_new, b.n};
    const int32_t* pos = kv_pos;
    if (ring) {
      pos = ring_view(l, row0 + b.n, kv_pos, kv);
    } else {
      kv.n_quant = l.res_block * kBlock;
    }
    const size_t n_kv = kv.n_quant + l.res_rows + b.n;
    if (b.n <= kFusedMaxRows && s.softcap == 0.f) {
      release_prefill_scratch();
      attention_kivi(s, b.q, b.ldq, b.q_pos, b.n, kv, pos, n_kv, b.out, b.ldo);
    } else {
      // A prefill-sized batch: dequantizing once is amortized over its rows, and the f32 kernel's
      // row-lane layout is faster than per-row tiles. The scratch is kept for the prefill's next
      // chunk (with a fresh one per call, zeroing it and faulting its pages in were a fifth of an
      // 8K prefill's profile) and released by the first decode-sized batch: decode holds none.
      attention_kivi_dequantized(s, b.q, b.ldq, b.q_pos, b.n, kv, pos, n_kv, b.out, b.ldo,
                                 prefill_k_, prefill_v_);
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
    StreamVector<uint8_t> k, v;       // key blocks [head][block][kbb], values [head][row][vrb]
    std::vector<float> res_k, res_v;  // [32][kv_dim]: the residual block's rows
    // The block being filled and its rows so far. A linear cache's rows below it are sealed; a
    // ring's sealed blocks are all the others (kv_cache.h: a slot read as empty is masked).
    size_t res_block = 0, res_rows = 0;
  };

  // Rows [row0, ...) are about to be written. Within the residual block that drops its rows from
  // row0 on; in another block (a trim reached back into a sealed block, or a new block begins),
  // that block becomes the residual, its rows below row0 decoded from their codes. A new block
  // decodes none, so the two cases are one: no lap or entry count is needed, only the slot.
  void reopen(Layer& l, size_t row0) {
    const size_t b = row0 / kBlock, j = row0 % kBlock;
    // Rows are written in order: a write past the residual's end would leave unwritten rows.
    ACCEL_CHECK(b != l.res_block || j <= l.res_rows,
                "kivi storage: rows from %zu, the residual ends at %zu", row0,
                l.res_block * kBlock + l.res_rows);
    if (b == l.res_block) {
      l.res_rows = j;
      return;
    }
    for (size_t g = 0; g < heads_ && j > 0; ++g) {
      kivi_dequantize_key_block(&l.k[(g * blocks_ + b) * kbb_], int(D_), bits_, j,
                                l.res_k.data() + g * D_, kv_dim_);
      for (size_t t = 0; t < j; ++t)
        kivi_dequantize_value(&l.v[(g * blocks_ * kBlock + b * kBlock + t) * vrb_], int(D_), bits_,
                              l.res_v.data() + t * kv_dim_ + g * D_);
    }
    l.res_block = b;
    l.res_rows = j;
  }
  // Writes rows [row0, row0 + n) (row0 is the residual's end after reopen): each into the
  // residual, sealing the block when its last row arrives; the next block then starts empty.
  void put(Layer& l, const float* k, const float* v, size_t ld, size_t n, size_t row0) {
    if (row0 + n > cap_)
      throw std::logic_error("kivi storage: rows past the capacity (" + std::to_string(cap_) + ")");
    ACCEL_CHECK(row0 == l.res_block * kBlock + l.res_rows,
                "kivi storage: rows from %zu, the residual ends at %zu", row0,
                l.res_block * kBlock + l.res_rows);
    for (size_t t = 0; t < n; ++t) {
      const size_t j = l.res_rows++;
      std::memcpy(&l.res_k[j * kv_dim_], k + t * ld, kv_dim_ * sizeof(float));
      std::memcpy(&l.res_v[j * kv_dim_], v + t * ld, kv_dim_ * sizeof(float));
      if (j + 1 == kBlock) seal(l);
    }
  }
  void seal(Layer& l) {
    const size_t b = l.res_block;
    for (size_t g = 0; g < heads_; ++g) {
      kivi_quantize_key_block(l.res_k.data() + g * D_, kv_dim_, int(D_), bits_,
                              &l.k[(g * blocks_ + b) * kbb_]);
      for (size_t t = 0; t < kBlock; ++t)
        kivi_quantize_value(l.res_v.data() + t * kv_dim_ + g * D_, int(D_), bits_,
                            &l.v[(g * blocks_ * kBlock + b * kBlock + t) * vrb_]);
    }
    ++l.res_block;
    l.res_rows = 0;
  }
  // A ring's view for a batch ending at slot `end`: the sealed blocks outside [residual block,
  // end), from the one after `end`'s block round to the one before the residual (oldest entries
  // first), then the residual and the batch. Slots between `end` and its block's end are in
  // neither: they hold entries a lap older, which KVCache keeps out of every window (its ring
  // reserves a block of slack for KIVI). Returns the view's positions.
  const int32_t* ring_view(const Layer& l, size_t end, const int32_t* kv_pos, KiviKV& kv) {
    const size_t first = (end + kBlock - 1) / kBlock % blocks_;
    const size_t sealed = (l.res_block + blocks_ - first) % blocks_;
    kv.first_block = first;
    kv.ring_blocks = blocks_;
    kv.n_quant = sealed * kBlock;
    view_pos_.resize(kv.n_quant + (end - l.res_block * kBlock));
    for (size_t i = 0; i < sealed; ++i)
      std::copy_n(kv_pos + (first + i) % blocks_ * kBlock, kBlock, &view_pos_[i * kBlock]);
    std::copy(kv_pos + l.res_block * kBlock, kv_pos + end, view_pos_.begin() + kv.n_quant);
    return view_pos_.data();
  }
  // Head-major arrays move when the capacity changes: each head's bytes start at head * stride.
  void relayout(StreamVector<uint8_t>& x, size_t old_stride, size_t new_stride) const {
    StreamVector<uint8_t> y(heads_ * new_stride);
    const size_t keep = std::min(old_stride, new_stride);
    if (!x.empty())
      for (size_t g = 0; g < heads_; ++g) std::memcpy(&y[g * new_stride], &x[g * old_stride], keep);
    x.swap(y);
  }

  void release_prefill_scratch() {
    if (prefill_k_.empty()) return;
    std::vector<float>().swap(prefill_k_);
    std::vector<float>().swap(prefill_v_);
  }

  int bits_;
  size_t heads_, D_, kv_dim_, kbb_, vrb_;
  size_t cap_ = 0, blocks_ = 0;
  std::vector<Layer> layers_;
  std::vector<int32_t> view_pos_;  // a ring's view positions (scratch)
  // The dequantized rows of the last prefill-sized batch (attention_kivi_dequantized's scratch).
  std::vector<float> prefill_k_, prefill_v_;
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
