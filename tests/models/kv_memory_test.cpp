// KV cache memory arithmetic: the seed's Llama-3.1-70B figures to the byte, the per-type row
// formulas over a table of shapes, sliding-window layers, budgets (against a linear scan), the
// published and synthetic configurations, and memory sizes as people write them.
#include <gtest/gtest.h>

#include <cmath>

#include <stdexcept>

#include "models/kv_memory.h"
#include "models/published_configs.h"
#include "models/synthetic.h"

namespace accel {
namespace {

KVDType type(const char* name) {
  const auto t = kv_dtype_from_name(name);
  if (!t) throw std::runtime_error(std::string("kv_dtype ") + name + " is not registered");
  return *t;
}

// Open-TQ-Metal's figures: Llama-3.1-70B (80 layers, 8 KV heads, D = 128) at 128K tokens is "40 GB"
// at fp16 and "12.5 GB" at int4 -- GiB in fact:
//   f16:  80 * 8 * 128 * 2 (K, V) * 2 B * 131072      = 40 * 2^30 B
//   int4: 80 * 8 * 2 * (128/2 + 128/32 * 4) * 131072  = 12.5 * 2^30 B
TEST(KVMemory, Llama31_70BAt128KReproducesTheSeed) {
  const AttentionLayout l = find_attention_layout("llama-3.1-70b");
  EXPECT_EQ(l.n_layer(), 80);
  EXPECT_EQ(l.n_head, 64);
  EXPECT_EQ(l.n_ctx, 131072);
  EXPECT_FLOAT_EQ(l.attn_scale, 0.08838834764f);  // 1/sqrt(128)
  ASSERT_EQ(l.groups.size(), 1u);
  EXPECT_EQ(kv_group_row_bytes(l.groups[0], KVDType::F16), 4096u);
  EXPECT_EQ(kv_bytes_per_token(l, KVDType::F16), 327680u);
  EXPECT_EQ(kv_cache_bytes(l, KVDType::F16, 131072), 42949672960ull);
  EXPECT_EQ(kv_cache_bytes(l, KVDType::F16, 131072), 40ull << 30);
  EXPECT_EQ(kv_group_row_bytes(l.groups[0], type("int4")), 1280u);
  EXPECT_EQ(kv_bytes_per_token(l, type("int4")), 102400u);
  EXPECT_EQ(kv_cache_bytes(l, type("int4"), 131072), 13421772800ull);
  EXPECT_EQ(kv_cache_bytes(l, type("int4"), 131072), (25ull << 30) / 2);
  EXPECT_EQ(kv_cache_bytes(l, KVDType::F32, 131072), 80ull << 30);
  // 64 GiB holds 64 GiB / 327680 B = 209715.2 tokens at f16 and 671088.64 at int4.
  EXPECT_EQ(kv_max_context(l, KVDType::F16, 64ull << 30), 209715u);
  EXPECT_EQ(kv_max_context(l, type("int4"), 64ull << 30), 671088u);
}

// The row formulas of the brief and spec §4.1, per (n_kv_heads, head_dim), including head dims
// that are one group and not a power of two.
TEST(KVMemory, RowBytesFollowEachFormat) {
  struct Shape {
    int heads, dim;
  };
  for (const Shape s : {Shape{1, 32}, Shape{2, 64}, Shape{4, 96}, Shape{8, 128}, Shape{16, 256}}) {
    SCOPED_TRACE("heads " + std::to_string(s.heads) + " dim " + std::to_string(s.dim));
    const KVLayerGroup g{"full", 1, s.heads, s.dim, 0};
    const uint64_t h = uint64_t(s.heads), d = uint64_t(s.dim);
    EXPECT_EQ(kv_group_row_bytes(g, KVDType::F32), 2 * h * d * 4);
    EXPECT_EQ(kv_group_row_bytes(g, KVDType::F16), 2 * h * d * 2);
    // int4: nibbles, plus fp16 scale and zero per group of 32.
    EXPECT_EQ(kv_group_row_bytes(g, type("int4")), 2 * h * (d / 2 + d / 32 * 4));
    // q8_0: bytes, plus one fp16 scale per group of 32.
    EXPECT_EQ(kv_group_row_bytes(g, type("q8_0")), 2 * h * (d + d / 32 * 2));
  }
}

// Sliding-window layers hold min(context, window) tokens; the budget search agrees with a scan.
TEST(KVMemory, SlidingWindowsAndBudgets) {
  AttentionLayout l;
  l.name = "mixed";
  l.groups = {{"sliding", 3, 2, 32, 16}, {"full", 1, 1, 64, 0}};
  const uint64_t sw = 2 * 2 * 32 * 2, full = 2 * 1 * 64 * 2;  // f16 row bytes
  EXPECT_EQ(kv_bytes_per_token(l, KVDType::F16), 3 * sw + full);
  EXPECT_EQ(kv_cache_bytes(l, KVDType::F16, 0), 0u);
  EXPECT_EQ(kv_cache_bytes(l, KVDType::F16, 10), 10 * (3 * sw + full));
  EXPECT_EQ(kv_cache_bytes(l, KVDType::F16, 100), 16 * 3 * sw + 100 * full);
  for (uint64_t budget : {1ull, 255ull, 256ull, 5000ull, 12287ull, 12288ull, 12289ull, 40000ull}) {
    uint64_t want = 0;
    while (kv_cache_bytes(l, KVDType::F16, want + 1) <= budget) ++want;
    EXPECT_EQ(kv_max_context(l, KVDType::F16, budget), want) << "budget " << budget;
  }
  // Only windowed layers: the cache stops growing, so a budget above its ceiling holds any context.
  AttentionLayout w;
  w.groups = {{"sliding", 2, 1, 32, 8}};
  const uint64_t ceiling = kv_cache_bytes(w, KVDType::F32, 8);
  EXPECT_EQ(kv_cache_bytes(w, KVDType::F32, 1000000), ceiling);
  EXPECT_EQ(kv_max_context(w, KVDType::F32, ceiling), std::nullopt);
  EXPECT_EQ(kv_max_context(w, KVDType::F32, ceiling - 1), 7u);
  // Sums past 2^64 - 1 are refused, not wrapped.
  AttentionLayout big;
  big.groups = {{"full", 1024, 1024, 1024, 0}};
  EXPECT_THROW(kv_cache_bytes(big, KVDType::F32, uint64_t(1) << 40), std::overflow_error);
}

// Gemma 4 31B: 50 sliding layers (16 x 256, window 1024) and 10 full layers (4 x 512), scale 1.0.
// At 128K tokens in f16: 50 * 1024 * 16384 + 10 * 131072 * 8192 = 11576279040 B, the figure an
// independent calculator gives for this configuration.
TEST(KVMemory, Gemma4_31BHasTwoRowShapesAndScaleOne) {
  const AttentionLayout l = find_attention_layout("gemma-4-31b");
  EXPECT_EQ(l.n_layer(), 60);
  EXPECT_EQ(l.n_head, 32);
  EXPECT_EQ(l.attn_scale, 1.f);
  ASSERT_EQ(l.groups.size(), 2u);
  EXPECT_EQ(l.groups[0].window, 1024);
  EXPECT_EQ(l.groups[1].window, 0);
  EXPECT_EQ(kv_cache_bytes(l, KVDType::F16, 131072), 11576279040ull);
  EXPECT_EQ(kv_cache_bytes(l, KVDType::F16, 512), 512ull * (50 * 16384 + 10 * 8192));
}

// Gemma 3 27B (52 sliding x 1024 tokens, 10 full; 16 x 128 rows: 8192 B per token per layer in
// f16) and gpt-oss 20B / 120B (half the layers sliding x 128 tokens; 8 x 64 rows: 2048 B), at
// 128K tokens in f16, worked by hand:
//   gemma-3-27b   52 * 1024 * 8192 + 10 * 131072 * 8192 = 436207616 + 10737418240
//   gpt-oss-20b   12 * 128 * 2048 + 12 * 131072 * 2048  = 3145728 + 3221225472
//   gpt-oss-120b  18 * 128 * 2048 + 18 * 131072 * 2048  = 4718592 + 4831838208
TEST(KVMemory, Gemma3AndGptOssSlidingLayersAreBoundedByTheirWindow) {
  EXPECT_EQ(kv_cache_bytes(find_attention_layout("gemma-3-27b"), KVDType::F16, 131072),
            11173625856ull);
  EXPECT_EQ(kv_cache_bytes(find_attention_layout("gpt-oss-20b"), KVDType::F16, 131072),
            3224371200ull);
  EXPECT_EQ(kv_cache_bytes(find_attention_layout("gpt-oss-120b"), KVDType::F16, 131072),
            4836556800ull);
  const AttentionLayout g3 = find_attention_layout("gemma-3-27b");
  EXPECT_EQ(g3.n_layer(), 62);
  EXPECT_FLOAT_EQ(g3.attn_scale, float(1.0 / std::sqrt(168.0)));
  EXPECT_EQ(find_attention_layout("gpt-oss-20b").n_layer(), 24);
  EXPECT_EQ(find_attention_layout("gpt-oss-120b").n_layer(), 36);
}

// A configuration with per-layer kinds (Gemma 4 style: 5 sliding layers of 4 x 32 with window
// 128, then a full one of 2 x 64, twice) is grouped by kind and row shape, sliding first.
TEST(KVMemory, LayoutOfAConfigWithSlidingLayersGroupsByKind) {
  ModelConfig c;
  c.n_layer = 12;
  c.n_head = 8;
  c.n_head_kv = 4;
  c.head_dim = 64;
  c.head_dim_swa = 32;
  c.n_swa = 128;
  for (int il = 0; il < 12; ++il) {
    c.swa_layers.push_back(il % 6 != 5);
    c.n_head_kv_layer.push_back(il % 6 != 5 ? 4 : 2);
  }
  const AttentionLayout l = attention_layout(c, "x", "y");
  ASSERT_EQ(l.groups.size(), 2u);
  EXPECT_EQ(l.groups[0].kind, "sliding");
  EXPECT_EQ(l.groups[0].n_layer, 10);
  EXPECT_EQ(l.groups[0].n_kv_heads, 4);
  EXPECT_EQ(l.groups[0].head_dim, 32);
  EXPECT_EQ(l.groups[0].window, 128);
  EXPECT_EQ(l.groups[1].n_layer, 2);
  EXPECT_EQ(l.groups[1].n_kv_heads, 2);
  EXPECT_EQ(l.groups[1].head_dim, 64);
  EXPECT_EQ(l.groups[1].window, 0);
  // f32 at 4096 tokens: 10 x 128 x (2 x 4 x 32 x 4 B) + 2 x 4096 x (2 x 2 x 64 x 4 B).
  EXPECT_EQ(kv_cache_bytes(l, KVDType::F32, 4096), 10ull * 128 * 1024 + 2ull * 4096 * 1024);
}

TEST(KVMemory, SyntheticMembersAndUnknownNames) {
  const AttentionLayout l = find_attention_layout("small/target");
  const ModelConfig c = synthetic_member_config(find_synthetic_family("small").members.at(0));
  EXPECT_EQ(l.n_layer(), c.n_layer);
  ASSERT_EQ(l.groups.size(), 1u);
  EXPECT_EQ(l.groups[0].n_kv_heads, c.n_head_kv);
  EXPECT_EQ(l.groups[0].head_dim, c.head_dim);
  EXPECT_EQ(l.attn_scale, attention_scale(c));
  EXPECT_EQ(l.n_ctx, c.n_ctx);
  for (const auto& name : attention_layout_names()) EXPECT_NO_THROW(find_attention_layout(name));
  const auto refused = [](const std::string& name, const std::string& needle) {
    try {
      find_attention_layout(name);
      ADD_FAILURE() << name << " accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  refused("llama-3-70b", "llama-3.1-70b");  // the message lists what is known
  refused("small/nope", "draft-xs");
  refused("nope/target", "nope");
}

TEST(KVMemory, ByteSizesAsPeopleWriteThem) {
  struct Case {
    const char* text;
    std::optional<uint64_t> want;
  };
  const Case cases[] = {
      {"4096", 4096},
      {"64GiB", 64ull << 30},
      {"64 GiB", 64ull << 30},
      {"64gib", 64ull << 30},
      {"12.5GB", 12500000000ull},
      {"12.5GiB", (25ull << 30) / 2},
      {"1kB", 1000},
      {"1KiB", 1024},
      {"3MB", 3000000},
      {"2MiB", 2u << 20},
      {"1TB", 1000000000000ull},
      {"1TiB", 1ull << 40},
      {"100B", 100},
      {"1.5B", 1},  // fractions of a byte round down
      {"0.001KB", 1},
      {".5KiB", 512},
      {"8EiB", std::nullopt},  // unknown unit
      {"", std::nullopt},
      {"GiB", std::nullopt},
      {"0", std::nullopt},
      {"0GiB", std::nullopt},
      {"0.1B", std::nullopt},  // rounds to zero
      {"-1GiB", std::nullopt},
      {"1e9", std::nullopt},
      {"1.2.3GB", std::nullopt},
      {"12 ", std::nullopt},
      {"12  GB", std::nullopt},
      {"9223372036854775808", uint64_t(1) << 63},
      {"9223372036854775809", std::nullopt},
      {"9999999TiB", std::nullopt},
      {"123456789012345678901", std::nullopt},  // more digits than are kept
  };
  for (const Case& c : cases) EXPECT_EQ(parse_byte_size(c.text), c.want) << "'" << c.text << "'";
}

// Hybrid members: the attention layers in one group, the recurrent layers' state worked by hand,
// FFN-only blocks counted as layers that cache nothing, and budgets net of the fixed state.
TEST(KVMemory, HybridMembersCountAttentionRowsAndFixedState) {
  // tiny-qwen35/target: layers 1 and 3 attend (2 KV heads x 32); layers 0 and 2 are Gated
  // DeltaNet with 2 key heads and 4 value heads of 32, conv 4: a window of 3 rows of
  // 2 * 2 * 32 + 4 * 32 = 256 channels and a 4 x 32 x 32 state, (768 + 4096) floats each.
  const AttentionLayout q = find_attention_layout("tiny-qwen35/target");
  ASSERT_EQ(q.groups.size(), 1u);
  EXPECT_EQ(q.groups[0].n_layer, 2);
  EXPECT_EQ(q.groups[0].n_kv_heads, 2);
  EXPECT_EQ(q.groups[0].head_dim, 32);
  ASSERT_EQ(q.recurrent.size(), 1u);
  EXPECT_EQ(q.recurrent[0].kind, "gated_deltanet");
  EXPECT_EQ(q.recurrent[0].n_layer, 2);
  EXPECT_EQ(q.recurrent[0].state_bytes(), (768u + 4096u) * 4u);
  EXPECT_EQ(recurrent_state_bytes(q), 2u * (768u + 4096u) * 4u);
  EXPECT_EQ(q.n_layer(), 4);
  EXPECT_EQ(kv_bytes_per_token(q, KVDType::F32), 2u * 2u * 2u * 32u * 4u);
  EXPECT_EQ(kv_cache_bytes(q, KVDType::F32, 1000), 1000u * 1024u + 38912u);
  // The budget pays for the state first: what is left holds floor(rest / 1024) tokens.
  EXPECT_EQ(kv_max_context(q, KVDType::F32, 38912u + 1024u * 7u + 1023u), 7u);
  EXPECT_EQ(kv_max_context(q, KVDType::F32, 38911u), 0u);

  // tiny-nemotron-h/target (M-M*-M*-): 3 Mamba-2 blocks (8 heads of 32, 2 groups, state 16,
  // conv 4: 3 rows of 256 + 2 * 2 * 16 = 320 channels and an 8 x 32 x 16 state), 2 attention
  // blocks, 3 FFN-only blocks.
  const AttentionLayout n = find_attention_layout("tiny-nemotron-h/target");
  ASSERT_EQ(n.recurrent.size(), 1u);
  EXPECT_EQ(n.recurrent[0].kind, "mamba2");
  EXPECT_EQ(n.recurrent[0].n_layer, 3);
  EXPECT_EQ(n.recurrent[0].state_bytes(), (3u * 320u + 8u * 32u * 16u) * 4u);
  ASSERT_EQ(n.groups.size(), 1u);
  EXPECT_EQ(n.groups[0].n_layer, 2);
  EXPECT_EQ(n.n_stateless, 3);
  EXPECT_EQ(n.n_layer(), 8);
}

// The four hybrids, worked by hand from the figures their sources give (the source strings
// in published_configs.cpp): f16 K/V of the attention layers per token, and the recurrent state.
TEST(KVMemory, PublishedHybridsCountAttentionRowsAndState) {
  struct Case {
    const char* name;
    int layers, attention, recurrent, stateless;
    uint64_t f16_per_token, state;
  };
  const Case cases[] = {
      // 12 x K,V x 2 heads x 256 x 2 bytes; 36 x (3 x (2 x 16 x 128 + 64 x 128) + 64 x 128 x 128)
      // floats x 4 bytes
      {"qwen3.5-122b-a10b", 48, 12, 36, 0, 12u * 2 * 2 * 256 * 2,
       36ull * (3 * 12288 + 1048576) * 4},
      {"qwen3.5-2b", 24, 6, 18, 0, 6u * 2 * 2 * 256 * 2, 18ull * (3 * 6144 + 262144) * 4},
      // 8 x K,V x 2 heads x 128 x 2 bytes; 40 x (3 x (128 x 64 + 2 x 8 x 128) + 128 x 64 x 128)
      {"nemotron-h-120b", 88, 8, 40, 40, 8u * 2 * 2 * 128 * 2, 40ull * (3 * 10240 + 1048576) * 4},
      {"nemotron-h-nano-4b", 52, 4, 24, 24, 4u * 2 * 8 * 128 * 2,
       24ull * (3 * (7168 + 2048) + 917504) * 4},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const AttentionLayout l = find_attention_layout(c.name);
    EXPECT_EQ(l.n_layer(), c.layers);
    ASSERT_EQ(l.groups.size(), 1u);
    EXPECT_EQ(l.groups[0].n_layer, c.attention);
    ASSERT_EQ(l.recurrent.size(), 1u);
    EXPECT_EQ(l.recurrent[0].n_layer, c.recurrent);
    EXPECT_EQ(l.n_stateless, c.stateless);
    EXPECT_EQ(kv_bytes_per_token(l, KVDType::F16), c.f16_per_token);
    EXPECT_EQ(recurrent_state_bytes(l), c.state);
    EXPECT_EQ(kv_cache_bytes(l, KVDType::F16, 131072), 131072 * c.f16_per_token + c.state);
  }
  // Qwen3.5-122B at its 262144 tokens in f16: 6.44 GB of K/V beside 0.156 GB of state.
  EXPECT_EQ(kv_cache_bytes(find_attention_layout("qwen3.5-122b-a10b"), KVDType::F16, 262144),
            6598754304u);
}

}  // namespace
}  // namespace accel
