// KV storage types (`kv_dtype`): how a KVCache keeps its K/V rows and which kernel attends over
// them. Owns the per-type row layout and byte accounting; positions and entry bookkeeping belong to
// KVCache. A new type is an enum value, a subclass, one row in kv_storage.cpp's registry table,
// and its kernel in kernels/.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/attention.h"

namespace accel {

// int4 / q8_0 place quantization as the Open-TQ-Metal seed does (a multi-token batch attends in
// full precision, a decode step through the quantized cache); the -uniform variants attend
// through the quantized cache for every batch (batch-invariant). See kv_storage.cpp. kivi4 /
// kivi2 are KIVI's per-channel keys and per-token values with a full-precision residual
// (kv_storage_kivi.h). int4-pv8 stores what int4 stores and places it alike, but its decode step
// computes P.V on 8-bit probabilities (kernels/attention_quant.h, QuantPV::Int8): an approximation
// with its own error bound, so it is a type of its own and never the default.
enum class KVDType { F32, F16, Int4, Int4Uniform, Q8_0, Q8_0Uniform, Kivi4, Kivi2, Int4Pv8 };

std::string kv_dtype_name(KVDType t);                              // "f32", "f16", "int4", ...
std::optional<KVDType> kv_dtype_from_name(std::string_view name);  // nullopt when unknown
std::vector<std::string> kv_dtype_names();                         // every type, in enum order
// True when a token's results do not depend on how tokens are batched (prefill chunking, verify
// vs decode): f32, f16 and the -uniform quantized types; false for int4 / q8_0.
bool kv_dtype_batch_invariant(KVDType t);

// One batch of n new tokens for one layer: their queries and their K/V rows (f32, post-RoPE).
struct AttendBatch {
  const float* q;  // [n][n_heads * head_dim], row stride ldq
  size_t ldq;
  const int32_t* q_pos;  // [n]
  const float* k_new;    // [n][kv_dim], row stride ld_new
  const float* v_new;
  size_t ld_new;
  size_t n;
  float* out;  // [n][n_heads * head_dim], row stride ldo
  size_t ldo;
  // Entries to attend over, [0, n_kv); 0 means [0, row0 + n) (a linear cache). A ring (a
  // sliding-window layer, kv_cache.h) attends over every slot: stale and empty ones are masked
  // by their positions.
  size_t n_kv = 0;
};

class KVStorage {
 public:
  virtual ~KVStorage() = default;
  virtual KVDType dtype() const = 0;
  // Exact bytes one entry's K and V take in one layer, scales included.
  virtual size_t row_bytes() const = 0;
  // Capacity in entries; existing rows below the new capacity are kept.
  virtual void resize(size_t capacity) = 0;
  virtual void release() = 0;
  // Stores the batch's rows at entries [row0, row0 + b.n) of `layer` and writes the batch's
  // attention over entries [0, row0 + b.n), or [0, b.n_kv) when set (kv_pos covers them all). Where
  // the batch is quantized relative to its own attention is the type's policy; f32/f16 attend over
  // the stored rows.
  virtual void attend(int layer, const AttentionShape& shape, const AttendBatch& b, size_t row0,
                      const int32_t* kv_pos) = 0;
  // Stores n rows (f32, post-RoPE keys) at entries [row0, row0 + n) of `layer` as attend() would,
  // without attending: for caches built outside the forward pass (KV Prediction). k, v: [n][kv_dim]
  // with row stride ld.
  virtual void store(int layer, const float* k, const float* v, size_t ld, size_t n,
                     size_t row0) = 0;
  // f32 keys [capacity][kv_dim] of a layer, or null when the type stores something else.
  virtual const float* f32_keys(int /*layer*/) const { return nullptr; }
};

// Storage for n_layer layers of n_kv_heads heads of head_dim elements per token. Throws
// std::invalid_argument naming the type when the shape does not suit it (quantized types need
// head_dim to be a multiple of their group size).
std::unique_ptr<KVStorage> make_kv_storage(KVDType t, int n_layer, int n_kv_heads, int head_dim);

// Exact bytes one token's K and V take in one layer for this type and attention shape (scales and
// zero points included; the cache's per-entry position is not). Same as make_kv_storage(...)
// ->row_bytes(), without allocating.
size_t kv_row_bytes(KVDType t, int n_kv_heads, int head_dim);

}  // namespace accel
