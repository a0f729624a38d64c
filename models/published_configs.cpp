// The published layouts and the name lookup (see published_configs.h).
//
// A C++ table rather than a data file: each entry is a handful of numbers with its source beside
// it, reviewed like code, and every binary (the CLI from any directory, the tests, CI, an installed
// copy) has it with nothing to locate or parse at run time and no way to ship a stale copy.
#include "models/published_configs.h"

#include <cmath>
#include <stdexcept>

#include "models/synthetic.h"

namespace accel {

const std::vector<AttentionLayout>& published_layouts() {
  static const std::vector<AttentionLayout> layouts = {
      {"llama-3.1-70b",
       "meta-llama/Llama-3.1-70B config.json: 80 layers, hidden 8192, 64 query heads, 8 KV heads "
       "(head_dim 128), max_position_embeddings 131072; standard 1/sqrt(head_dim) scale. The "
       "Open-TQ-Metal seed's figures (128K tokens: 40 GB f16, 12.5 GB int4; GiB in fact) come "
       "from this shape.",
       64,
       131072,
       float(1.0 / std::sqrt(128.0)),
       {{"full", 80, 8, 128, 0}},
       {},
       0},
      // Gemma 4 31B interleaves 5 sliding-window layers with 1 global layer, 10 times; the two
      // kinds cache different row shapes. Global layers project V with K's weights
      // (attention_k_eq_v) but K is then normed and rotated and V normed on its own, so the cache
      // holds both, as transformers' cache does; counted as K + V rows here.
      {"gemma-4-31b",
       "google/gemma-4-31B config.json (text_config), as quoted by several independent "
       "implementations; the file itself was not read here: 60 layers, layer_types 5 "
       "sliding_attention : 1 full_attention repeated 10 times, 32 query heads; sliding layers "
       "16 KV heads x head_dim 256, sliding_window 1024; full layers num_global_key_value_heads 4 "
       "x "
       "global_head_dim 512; max_position_embeddings 262144; attention scale 1.0 (QK-norm, no "
       "1/sqrt(d)). Sliding layers are counted as holding exactly 1024 tokens.",
       32,
       262144,
       1.0f,
       {{"sliding", 50, 16, 256, 1024}, {"full", 10, 4, 512, 0}},
       {},
       0},
      // Gemma 3 27B: llama.cpp 3f545bec's gemma3 loader takes a sliding-window period of 6 (layer
      // il slides iff il % 6 < 5), so layers 5, 11, ..., 59 are global: 10 of 62.
      {"gemma-3-27b",
       "google/gemma-3-27b config.json as quoted by independent implementations: 62 layers, "
       "hidden 5376, 32 query heads, 16 KV heads x head_dim 128, sliding_window 1024, "
       "sliding_window_pattern 6 (5 local : 1 global), max_position_embeddings 131072; "
       "query_pre_attn_scalar 168 = hidden / heads, the scale llama.cpp 3f545bec's gemma3 loader "
       "uses for the 27B (1/sqrt(168)). Sliding layers are counted as holding exactly 1024 tokens.",
       32,
       131072,
       float(1.0 / std::sqrt(168.0)),
       {{"sliding", 52, 16, 128, 1024}, {"full", 10, 16, 128, 0}},
       {},
       0},
      // gpt-oss: layer_types alternate sliding_attention / full_attention from layer 0 (llama.cpp's
      // openai-moe loader: period 2, layer il slides iff il is even).
      {"gpt-oss-20b",
       "openai/gpt-oss-20b config.json as quoted by independent implementations: 24 layers, "
       "hidden 2880, 64 query heads, 8 KV heads x head_dim 64, sliding_window 128 on the even "
       "layers, max_position_embeddings 131072 (YaRN factor 32 over 4096); 1/sqrt(64) scale, "
       "attention sinks (one logit per head, no cache rows). Sliding layers hold 128 tokens.",
       64,
       131072,
       0.125f,
       {{"sliding", 12, 8, 64, 128}, {"full", 12, 8, 64, 0}},
       {},
       0},
      {"gpt-oss-120b",
       "openai/gpt-oss-120b config.json as quoted by independent implementations: 36 layers, "
       "hidden 2880, 64 query heads, 8 KV heads x head_dim 64, sliding_window 128 on the even "
       "layers, max_position_embeddings 131072; attention as gpt-oss-20b (128 experts instead "
       "of 32 do not change the cache).",
       64,
       131072,
       0.125f,
       {{"sliding", 18, 8, 64, 128}, {"full", 18, 8, 64, 0}},
       {},
       0},
      // Hybrids: attention layers hold K/V, recurrent layers a fixed f32 state sized as the
      // engine's RecurrentState (conv window of d_conv - 1 rows + scan state), FFN/MoE-only
      // blocks nothing. Gated DeltaNet: conv over 2 x key heads x 128 + value heads x 128
      // channels, a value heads x 128 x 128 state; Mamba-2: conv over heads x 64 + 2 x groups x
      // state channels, a heads x 64 x state state.
      {"qwen3.5-122b-a10b",
       "Qwen/Qwen3.5-122B-A10B model card (hidden layout 12 x (3 Gated DeltaNet, 1 gated "
       "attention), each with MoE): 48 layers, hidden 3072; attention layers every 4th "
       "(full_attention_interval 4): 32 query heads, 2 KV heads x head_dim 256; Gated DeltaNet: "
       "16 key heads, 64 value heads, head dims 128; max_position_embeddings 262144. The conv "
       "kernel (4) is the family's value (Qwen3.5-35B-A3B training scripts, transformers' "
       "default), not read from the 122B's config.json.",
       32,
       262144,
       float(1.0 / std::sqrt(256.0)),
       {{"full", 12, 2, 256, 0}},
       {{"gated_deltanet", 36, 2 * 16 * 128 + 64 * 128, 4, uint64_t(64) * 128 * 128}},
       0},
      {"qwen3.5-2b",
       "Qwen/Qwen3.5-2B model card (the SpecPrefill study's draft): 24 layers, hidden 2048, "
       "attention every 4th layer: 8 query heads, 2 KV heads x head_dim 256; Gated DeltaNet: 16 "
       "key heads, 16 value heads, head dims 128; dense FFN 6144; max_position_embeddings "
       "262144. Conv kernel 4 as for qwen3.5-122b-a10b.",
       8,
       262144,
       float(1.0 / std::sqrt(256.0)),
       {{"full", 6, 2, 256, 0}},
       {{"gated_deltanet", 18, 2 * 16 * 128 + 16 * 128, 4, uint64_t(16) * 128 * 128}},
       0},
      // The study's "Nemotron-H 120B" is NVIDIA Nemotron 3 Super 120B-A12B (model type
      // nemotron_h): 40 Mamba-2, 40 MoE and 8 attention blocks. Its MTP block is not counted.
      {"nemotron-h-120b",
       "NVIDIA Nemotron 3 Super 120B-A12B (model type nemotron_h), Megatron-Bridge "
       "nemotron_h_provider.py Nemotron3SuperProvider (commit 160cccc): 88 blocks, hidden 4096, "
       "pattern of 40 Mamba-2 (M), 40 MoE (E) and 8 attention (*) blocks; attention without "
       "positional encoding, 32 query heads, 2 KV heads x head_dim 128; Mamba-2 128 heads x 64, "
       "state 128, 8 groups; conv kernel 4 (Megatron-Core's default, as secondary readings of "
       "the config.json say); context 262144 (Megatron-Bridge's seq_length; the model card "
       "advertises up to 1M tokens). The MTP block is not counted.",
       32,
       262144,
       float(1.0 / std::sqrt(128.0)),
       {{"full", 8, 2, 128, 0}},
       {{"mamba2", 40, 128 * 64 + 2 * 8 * 128, 4, uint64_t(128) * 64 * 128}},
       40},
      {"nemotron-h-nano-4b",
       "NVIDIA Nemotron-H-4B (Base-8K / Instruct-128K), Megatron-Bridge recipe nemotronh.py "
       "(nemotronh_4b, commit 067f987) and docs/models/nemotron/nemotronh.md: 52 blocks, hidden "
       "3072, pattern M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M- (24 Mamba-2, 24 MLP, 4 "
       "attention); 32 query heads, 8 KV heads x head_dim 128 (kv_channels 128, not 3072 / 32); "
       "Mamba-2 112 heads x 64 (inner 7168), state 128, 8 groups; conv kernel 4 inferred "
       "(Megatron-Core's default); context 131072 (the Instruct-128K model; Base is 8K). Not "
       "NVIDIA-Nemotron-3-Nano-4B, a different model.",
       32,
       131072,
       float(1.0 / std::sqrt(128.0)),
       {{"full", 4, 8, 128, 0}},
       {{"mamba2", 24, 112 * 64 + 2 * 8 * 128, 4, uint64_t(112) * 64 * 128}},
       24},
  };
  return layouts;
}

std::vector<std::string> attention_layout_names() {
  std::vector<std::string> names;
  for (const auto& l : published_layouts()) names.push_back(l.name);
  for (const auto& f : synthetic_families())
    for (const auto& m : f.members) names.push_back(f.name + "/" + m.role);
  return names;
}

AttentionLayout find_attention_layout(const std::string& name) {
  for (const auto& l : published_layouts())
    if (l.name == name) return l;
  const size_t slash = name.find('/');
  if (slash != std::string::npos) {
    const SyntheticFamily& f = find_synthetic_family(name.substr(0, slash));
    const std::string role = name.substr(slash + 1);
    std::string roles;
    for (const auto& m : f.members) {
      if (m.role == role)
        return attention_layout(synthetic_member_config(m), name,
                                "synthetic family '" + f.name + "', member '" + role + "'");
      roles += (roles.empty() ? "" : ", ") + m.role;
    }
    throw std::invalid_argument("family '" + f.name + "' has no member '" + role +
                                "' (members: " + roles + ")");
  }
  std::string known;
  for (const auto& n : attention_layout_names()) known += (known.empty() ? "" : ", ") + n;
  throw std::invalid_argument("unknown configuration '" + name + "' (known: " + known + ")");
}

}  // namespace accel
