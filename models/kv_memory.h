// KV cache memory arithmetic: how many bytes a cache of each storage type (`kv_dtype`) takes for a
// model's layout at a context length, and the longest context a memory budget holds. Owns the
// layout description (attention layers grouped by KV heads, head dim and sliding window; a
// hybrid's recurrent layers with their fixed state) and the sizes' arithmetic; the bytes of one row
// come from kv_row_bytes (kv_storage.h), so every registered type is sized exactly as the engine
// stores it. Published layouts: published_configs.h.
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

// Recurrent layers of one kind (a hybrid's Gated DeltaNet or Mamba-2 layers): each holds a fixed
// f32 state, the conv window of d_conv - 1 rows plus the scan state, whatever the context length
// and the attention layers' storage type (RecurrentState's layout).
struct RecurrentLayerGroup {
  std::string kind;  // "gated_deltanet" or "mamba2"
  int n_layer = 0;
  int conv_channels = 0, d_conv = 0;
  uint64_t scan_elements = 0;

  uint64_t state_bytes() const;  // one layer's window + scan state
};

// What a model's cache is sized from: the attention layers grouped by row shape, the recurrent
// layers grouped by kind, and the figures a reader wants beside the sizes.
struct AttentionLayout {
  std::string name;
  std::string source;      // where the numbers come from
  int n_head = 0;          // query heads
  int n_ctx = 0;           // longest context the model supports
  float attn_scale = 0.f;  // the scale in effect (attention_scale() of the config)
  std::vector<KVLayerGroup> groups;
  std::vector<RecurrentLayerGroup> recurrent;  // empty for attention-only models
  int n_stateless = 0;  // layers that cache nothing (Nemotron-H's FFN-only blocks)

  int n_layer() const;  // every layer: attention, recurrent and stateless
};

// The layers of c grouped by kind and row shape: one full group for architectures without
// sliding windows; sliding groups (window n_swa) then full ones for gemma3/gemma4/gpt-oss; for
// hybrids (qwen35, nemotron_h), the attention layers' group plus one recurrent group.
AttentionLayout attention_layout(const ModelConfig& c, std::string name, std::string source);

// The recurrent layers' states together: fixed bytes, counted once whatever the context. A
// speculative step's checkpoint (PLD's verify) holds one more copy, which this does not count.
uint64_t recurrent_state_bytes(const AttentionLayout& l);

// Bytes one token's K and V take in one layer of group g (kv_row_bytes).
uint64_t kv_group_row_bytes(const KVLayerGroup& g, KVDType t);
// Bytes one token takes in every layer together (while it is inside every window).
uint64_t kv_bytes_per_token(const AttentionLayout& l, KVDType t);
// Bytes of a cache holding `context` tokens: the K/V rows (each group holds min(context, window)
// tokens) plus recurrent_state_bytes. Throws std::overflow_error past 2^64 - 1. The engine's cache
// also keeps one int32 position per token (not per layer), which this does not count.
uint64_t kv_cache_bytes(const AttentionLayout& l, KVDType t, uint64_t context);
// The longest context whose kv_cache_bytes fits in `budget` (0 when not even the recurrent state
// fits); nullopt when no layer grows without bound and the whole cache fits, so any context does.
std::optional<uint64_t> kv_max_context(const AttentionLayout& l, KVDType t, uint64_t budget);

// A memory size as people write it: plain bytes ("4096") or a decimal number with a unit, SI
// (kB/KB, MB, GB, TB: powers of 1000) or binary (KiB, MiB, GiB, TiB: powers of 1024), units
// case-insensitive, an optional space before the unit ("64GiB", "12.5 GB"). Fractions of a byte
// round down. nullopt when malformed, zero, or above 2^63.
std::optional<uint64_t> parse_byte_size(std::string_view s);

}  // namespace accel
