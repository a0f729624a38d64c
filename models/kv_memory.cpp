// KV cache sizes and budgets (see kv_memory.h). Sums run in 128 bits and are checked before they
// narrow to 64.
#include "models/kv_memory.h"

#include <algorithm>
#include <cctype>
#include <stdexcept>

#include "kernels/gated_delta_rule.h"
#include "kernels/ssm_scan.h"

namespace accel {

namespace {

using u128 = unsigned __int128;

uint64_t narrow(u128 v, const char* what) {
  if (v > u128(UINT64_MAX))
    throw std::overflow_error(std::string(what) + " exceeds 2^64 - 1 bytes");
  return uint64_t(v);
}

u128 state_bytes_wide(const AttentionLayout& l) {
  u128 sum = 0;
  for (const auto& g : l.recurrent) sum += u128(g.n_layer) * g.state_bytes();
  return sum;
}

u128 cache_bytes_wide(const AttentionLayout& l, KVDType t, uint64_t context) {
  u128 sum = state_bytes_wide(l);
  for (const auto& g : l.groups) {
    const uint64_t held = g.window > 0 ? std::min<uint64_t>(context, uint64_t(g.window)) : context;
    sum += u128(g.n_layer) * kv_group_row_bytes(g, t) * held;
  }
  return sum;
}

}  // namespace

uint64_t RecurrentLayerGroup::state_bytes() const {
  const u128 floats = u128(d_conv > 0 ? d_conv - 1 : 0) * u128(conv_channels) + scan_elements;
  return narrow(floats * sizeof(float), "recurrent state");
}

int AttentionLayout::n_layer() const {
  int n = n_stateless;
  for (const auto& g : groups) n += g.n_layer;
  for (const auto& g : recurrent) n += g.n_layer;
  return n;
}

uint64_t recurrent_state_bytes(const AttentionLayout& l) {
  return narrow(state_bytes_wide(l), "recurrent state");
}

namespace {

// A hybrid's recurrent layers as one group, sized as the model's cache allocates them
// (Model::make_hybrid_cache, make_nemotron_h_cache).
RecurrentLayerGroup recurrent_group(const ModelConfig& c, int n_layer) {
  RecurrentLayerGroup g;
  g.n_layer = n_layer;
  if (is_nemotron_h_arch(c.arch)) {
    const Mamba2LayerDims d = mamba2_layer_dims(c);
    g.kind = "mamba2";
    g.conv_channels = int(d.conv_channels());
    g.d_conv = d.d_conv;
    g.scan_elements = ssm_state_elements({d.n_heads, d.head_dim, d.d_state, d.n_groups});
  } else {
    const DeltaLayerDims d = delta_layer_dims(c);
    g.kind = "gated_deltanet";
    g.conv_channels = int(d.conv_channels());
    g.d_conv = d.d_conv;
    g.scan_elements = gated_delta_state_elements(
        {d.n_k_heads, d.n_v_heads, d.head_k_dim, d.head_v_dim, DeltaHeadMap::Tiled});
  }
  return g;
}

}  // namespace

AttentionLayout attention_layout(const ModelConfig& c, std::string name, std::string source) {
  AttentionLayout l;
  l.name = std::move(name);
  l.source = std::move(source);
  l.n_head = c.n_head;
  l.n_ctx = c.n_ctx;
  l.attn_scale = attention_scale(c);
  if (has_recurrent_layers(c)) {
    // Hybrids: full attention layers in one linear store (as KVCache's hybrid constructor keeps
    // them), recurrent layers with their state, FFN-only blocks with nothing.
    int n_recurrent = 0;
    for (int il = 0; il < c.n_layer; ++il) {
      if (is_recurrent_layer(c, il)) {
        ++n_recurrent;
      } else if (is_ffn_only_layer(c, il)) {
        ++l.n_stateless;
      } else {
        const LayerAttention a = layer_attention(c, il);
        if (l.groups.empty()) l.groups.push_back({"full", 0, a.n_head_kv, a.head_dim, 0});
        ++l.groups.front().n_layer;
      }
    }
    l.recurrent = {recurrent_group(c, n_recurrent)};
    return l;
  }
  if (c.n_swa == 0 && c.n_head_kv_layer.empty()) {
    l.groups = {{"full", c.n_layer, c.n_head_kv, c.head_dim, 0}};
    return l;
  }
  // Layers of several kinds: one group per (kind, row shape), sliding groups first, in order of
  // first appearance.
  for (int kind = 1; kind >= 0; --kind)
    for (int il = 0; il < c.n_layer; ++il) {
      const LayerAttention a = layer_attention(c, il);
      if (int(a.sliding) != kind) continue;
      auto g = std::find_if(l.groups.begin(), l.groups.end(), [&](const KVLayerGroup& x) {
        return x.window == a.window && x.n_kv_heads == a.n_head_kv && x.head_dim == a.head_dim;
      });
      if (g == l.groups.end())
        l.groups.push_back({a.sliding ? "sliding" : "full", 1, a.n_head_kv, a.head_dim, a.window});
      else
        ++g->n_layer;
    }
  return l;
}

uint64_t kv_group_row_bytes(const KVLayerGroup& g, KVDType t) {
  return kv_row_bytes(t, g.n_kv_heads, g.head_dim);
}

uint64_t kv_bytes_per_token(const AttentionLayout& l, KVDType t) {
  u128 sum = 0;
  for (const auto& g : l.groups) sum += u128(g.n_layer) * kv_group_row_bytes(g, t);
  return narrow(sum, "bytes per token");
}

uint64_t kv_cache_bytes(const AttentionLayout& l, KVDType t, uint64_t context) {
  return narrow(cache_bytes_wide(l, t, context), "cache size");
}

std::optional<uint64_t> kv_max_context(const AttentionLayout& l, KVDType t, uint64_t budget) {
  // Full-attention layers grow without bound: bytes(n) >= n * full_per_token bounds the search.
  u128 full_per_token = 0;
  uint64_t max_window = 0;
  for (const auto& g : l.groups) {
    if (g.window == 0)
      full_per_token += u128(g.n_layer) * kv_group_row_bytes(g, t);
    else
      max_window = std::max(max_window, uint64_t(g.window));
  }
  if (state_bytes_wide(l) > budget) return 0;
  uint64_t hi;  // bytes(hi) may exceed the budget; bytes(lo) never does
  if (full_per_token == 0) {
    if (cache_bytes_wide(l, t, max_window) <= budget) return std::nullopt;
    hi = max_window;
  } else {
    hi = uint64_t(u128(budget) / full_per_token);
  }
  uint64_t lo = 0;
  while (lo < hi) {  // largest n in [lo, hi] with bytes(n) <= budget (bytes is nondecreasing)
    const uint64_t mid = lo + (hi - lo + 1) / 2;
    if (cache_bytes_wide(l, t, mid) <= budget)
      lo = mid;
    else
      hi = mid - 1;
  }
  return lo;
}

std::optional<uint64_t> parse_byte_size(std::string_view s) {
  size_t i = 0;
  u128 mantissa = 0, divisor = 1;
  int digits = 0;
  bool seen_point = false;
  for (; i < s.size(); ++i) {
    const char ch = s[i];
    if (ch == '.' && !seen_point) {
      seen_point = true;
      continue;
    }
    if (!std::isdigit(static_cast<unsigned char>(ch))) break;
    if (++digits > 20) return std::nullopt;  // keeps mantissa * unit inside 128 bits
    mantissa = mantissa * 10 + u128(ch - '0');
    if (seen_point) divisor *= 10;
  }
  if (digits == 0) return std::nullopt;
  if (i < s.size() && s[i] == ' ' && ++i == s.size()) return std::nullopt;  // "12 " has no unit
  std::string unit;
  for (; i < s.size(); ++i) unit += char(std::tolower(static_cast<unsigned char>(s[i])));
  static const std::vector<std::pair<std::string, uint64_t>> units = {
      {"", 1},
      {"b", 1},
      {"kb", 1000ull},
      {"mb", 1000ull * 1000},
      {"gb", 1000ull * 1000 * 1000},
      {"tb", 1000ull * 1000 * 1000 * 1000},
      {"kib", 1ull << 10},
      {"mib", 1ull << 20},
      {"gib", 1ull << 30},
      {"tib", 1ull << 40},
  };
  for (const auto& [name, factor] : units) {
    if (unit != name) continue;
    const u128 bytes = mantissa * factor / divisor;
    if (bytes == 0 || bytes > (u128(1) << 63)) return std::nullopt;
    return uint64_t(bytes);
  }
  return std::nullopt;
}

}  // namespace accel
