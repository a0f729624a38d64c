// KV cache memory arithmetic: how many bytes a cache of each storage type (`kv_dtype`) takes for a
// model's attention layout at a context length, and the longest context a memory budget holds.
// Owns the layout description (layers grouped by KV heads, head dim and sliding window) and the
// sizes' arithmetic; the bytes of one row come from kv_row_bytes (kv_storage.h), so every
// registered type is sized exactly as the engine stores it. Published layouts: published_configs.h.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "models/kv_storage.h"
#include "models/model_config.h"

namespace accel {

// Layers that cache the same row shape. A sliding-window layer keeps at most `window` tokens.
struct KVLayerGroup {
  std::string kind = "full";  // "full" or "sliding" (labels only; window decides)
  int n_layer = 0;
  int n_kv_heads = 0;
  int head_dim = 0;
  int window = 0;  // 0 = every token of the context
};

// What a KV cache is sized from: a model's layers grouped by row shape, plus the figures a reader
// wants beside the sizes.
struct AttentionLayout {
  std::string name;
  std::string source;      // where the numbers come from
  int n_head = 0;          // query heads
  int n_ctx = 0;           // longest context the model supports
  float attn_scale = 0.f;  // the scale in effect (attention_scale() of the config)
  std::vector<KVLayerGroup> groups;

  int n_layer() const;
};

// The layers of c grouped by kind and row shape: one full group for architectures without
// sliding windows; sliding groups (window n_swa) then full ones for gemma3/gemma4/gpt-oss.
AttentionLayout attention_layout(const ModelConfig& c, std::string name, std::string source);

// Bytes one token's K and V take in one layer of group g (kv_row_bytes).
uint64_t kv_group_row_bytes(const KVLayerGroup& g, KVDType t);
// Bytes one token takes in every layer together (while it is inside every window).
uint64_t kv_bytes_per_token(const AttentionLayout& l, KVDType t);
// Bytes of the K/V rows of a cache holding `context` tokens: each group holds min(context, window)
// tokens. Throws std::overflow_error past 2^64 - 1. The engine's cache also keeps one int32
// position per token (not per layer), which this does not count.
uint64_t kv_cache_bytes(const AttentionLayout& l, KVDType t, uint64_t context);
// The longest context whose kv_cache_bytes fits in `budget`; nullopt when every layer is windowed
// and the whole (bounded) cache fits, so any context does.
std::optional<uint64_t> kv_max_context(const AttentionLayout& l, KVDType t, uint64_t budget);

// A memory size as people write it: plain bytes ("4096") or a decimal number with a unit, SI
// (kB/KB, MB, GB, TB: powers of 1000) or binary (KiB, MiB, GiB, TiB: powers of 1024), units
// case-insensitive, an optional space before the unit ("64GiB", "12.5 GB"). Fractions of a byte
// round down. nullopt when malformed, zero, or above 2^63.
std::optional<uint64_t> parse_byte_size(std::string_view s);

}  // namespace accel
