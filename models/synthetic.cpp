// Synthetic family table and the seeded weight generator (see synthetic.h).
// Every tensor gets its own random stream derived from (seed, member, tensor name, block index),
// so the bytes do not depend on thread count or on the order tensors are generated in.
#include "models/synthetic.h"

#include <cmath>
#include <filesystem>
#include <stdexcept>

#include "kernels/quant.h"
#include "kernels/threading.h"
#include "models/gguf.h"
#include "models/tokenizer.h"
#include "models/tokenizer_metadata.h"

namespace accel {

namespace {

// A nemotron_h member (SyntheticMemberSpec's block_pattern): attention with head size
// n_embd / n_head, relu^2 FFN blocks of width n_ff, Mamba-2 blocks of d_inner = heads x head size,
// conv width 4.
SyntheticMemberSpec nemotron_h_member(std::string role, int n_embd, int n_head, int n_head_kv,
                                      int n_ff, int n_ctx, std::string pattern, int d_inner,
                                      int heads, int d_state, int groups, bool biases) {
  SyntheticMemberSpec m;
  m.role = std::move(role);
  m.arch = Arch::NemotronH;
  m.n_layer = int(pattern.size());
  m.n_embd = n_embd;
  m.n_head = n_head;
  m.n_head_kv = n_head_kv;
  m.n_ff = n_ff;
  m.n_ctx = n_ctx;
  m.block_pattern = std::move(pattern);
  m.ssm_d_inner = d_inner;
  m.ssm_dt_rank = heads;
  m.ssm_d_state = d_state;
  m.ssm_n_group = groups;
  m.ssm_d_conv = 4;
  m.biases = biases;
  return m;
}

// A gemma4 (31B-style dense) member: sliding layers of head size n_embd / n_head with n_head_kv KV
// heads and `window`-token windows on all but every `period`-th layer, full layers of head size
// head_dim_full with n_head_kv_full KV heads used as K and V; RoPE base 1e6 on the full layers,
// final soft-cap 30.
SyntheticMemberSpec gemma4_member(std::string role, int n_layer, int n_embd, int n_head,
                                  int n_head_kv, int n_ff, int n_ctx, int window, int period,
                                  int head_dim_full, int n_head_kv_full) {
  SyntheticMemberSpec m;
  m.role = std::move(role);
  m.arch = Arch::Gemma4;
  m.n_layer = n_layer;
  m.n_embd = n_embd;
  m.n_head = n_head;
  m.n_head_kv = n_head_kv;
  m.n_ff = n_ff;
  m.n_ctx = n_ctx;
  m.rope_base = 1e6f;
  m.n_swa = window;
  m.swa_period = period;
  m.head_dim_full = head_dim_full;
  m.n_head_kv_full = n_head_kv_full;
  m.final_softcap = 30.f;
  return m;
}

// The same block layout as a nemotron_h_moe member: FFN blocks ('-') become MoE blocks ('E') of
// n_expert experts of width n_ff (top k), a shared expert of width n_ff_shexp, and a latent width.
SyntheticMemberSpec nemotron_h_moe_member(SyntheticMemberSpec m, int n_expert, int k,
                                          int n_ff_shexp, int latent) {
  m.arch = Arch::NemotronHMoe;
  for (char& ch : m.block_pattern)
    if (ch == '-') ch = 'E';
  m.n_expert = n_expert;
  m.n_expert_used = k;
  m.n_ff_shexp = n_ff_shexp;
  m.moe_latent = latent;
  return m;
}

constexpr float kNemotronMoeScale = 2.5f;

}  // namespace

const std::vector<SyntheticFamily>& synthetic_families() {
  // tiny-qwen35's dense draft, shared by the tiny qwen35 / qwen35moe / qwen3next families: one
  // Gated DeltaNet layer (1 key head over 2 value heads of 16) and one gated attention layer.
  static const SyntheticMemberSpec tiny_qwen35_draft{
      "draft", Arch::Qwen35, 2, 64, 2, 1,  160, 4096, 0, 0,
      1e7f,    std::nullopt, 0, 0,  2, 16, 1,   2,    4};
  static const std::vector<SyntheticFamily> families = {
      {"tiny",
       "for tests: a 1K-token prompt prefills in well under a second",
       {{"target", Arch::Llama, 4, 128, 4, 2, 352, 4096},
        {"draft", Arch::Llama, 2, 64, 2, 1, 160, 4096}}},
      // The small drafts span the ratio thesis: analytic FLOP ratio r to the target at 8K tokens
      // is about 0.016 (draft-xs), 0.075 (draft) and 0.19 (draft-l).
      {"small",
       "for benchmarks: a ~76M-parameter target (12 x 768, 12 heads, 4 KV heads, FFN 2048, 32K "
       "context), a 4 x 256 draft, and drafts draft-xs (2 x 128) and draft-l (4 x 512) for the "
       "cost model",
       {{"target", Arch::Llama, 12, 768, 12, 4, 2048, 32768},
        {"draft", Arch::Llama, 4, 256, 4, 2, 704, 32768},
        {"draft-xs", Arch::Llama, 2, 128, 2, 1, 352, 32768},
        {"draft-l", Arch::Llama, 4, 512, 8, 2, 1408, 32768}}},
      // Same attention and active FFN width as the small target (top-2 of 8 experts of FFN 1024),
      // so its active parameters match small's while its total is ~3x: the "MoE sweet spot".
      {"small-moe",
       "for benchmarks: a mixture-of-experts target (12 x 768, 8 experts of FFN 1024, top-2; "
       "~245M total, ~76M active parameters) with the small family's 4 x 256 dense draft",
       {{"target", Arch::Llama, 12, 768, 12, 4, 1024, 32768, 8, 2},
        {"draft", Arch::Llama, 4, 256, 4, 2, 704, 32768}}},
      // Larger than the last-level cache of the machines this runs on (the VMs report up to
      // 480 MiB) in every weight type, so decode streams its weights from memory.
      {"medium",
       "for bandwidth benchmarks: a TinyLlama-1.1B-shaped target (22 x 2048, 32 heads, 4 KV "
       "heads, FFN 5632, ~0.97B parameters with the byte-level vocabulary; ~0.6 GB in q4_k_m)",
       {{"target", Arch::Llama, 22, 2048, 32, 4, 5632, 4096}}},
      {"tiny-qwen2",
       "tiny qwen2-architecture pair (Q/K/V biases, NeoX RoPE), for engine tests",
       {{"target", Arch::Qwen2, 3, 128, 4, 2, 352, 4096},
        {"draft", Arch::Qwen2, 2, 64, 2, 1, 160, 4096}}},
      {"tiny-qwen3",
       "tiny qwen3-architecture pair (per-head Q/K RMSNorm, NeoX RoPE), for engine tests",
       {{"target", Arch::Qwen3, 3, 128, 4, 2, 352, 4096},
        {"draft", Arch::Qwen3, 2, 64, 2, 1, 160, 4096}}},
      // Gemma's attention scale 1.0 instead of 1/sqrt(head_dim): scores ~5.7x larger at head_dim
      // 32, the setting in which the int4 KV seed found quantization error amplified 25-100x.
      {"tiny-scale1",
       "tiny llama target with attention scale 1.0 (the Gemma setting), for KV quantization error",
       {{"target", Arch::Llama, 4, 128, 4, 2, 352, 4096, 0, 0, 10000.f, 1.0f}}},
      {"tiny-moe",
       "tiny mixture-of-experts target (8 experts, top-2) with a dense draft, for engine tests",
       {{"target", Arch::Llama, 2, 128, 4, 2, 128, 4096, 8, 2},
        {"draft", Arch::Llama, 2, 64, 2, 1, 160, 4096}}},
      // Gemma 3's layer (Q/K norms, post-attention and post-FFN norms, GELU FFN, scaled and tied
      // embeddings) with a 32-token window, so sliding layers matter within a 1K-token prompt; the
      // full layers' RoPE base is Gemma 3's 1e6, the sliding ones keep 10000.
      {"tiny-gemma3",
       "tiny gemma3 pair (sliding window 32: target layers 0, 1, 3 slide, draft layer 0), for "
       "engine tests and the llama.cpp logit comparison",
       {{"target", Arch::Gemma3, 4, 128, 4, 2, 352, 4096, 0, 0, 1e6f, std::nullopt, 32, 3},
        {"draft", Arch::Gemma3, 2, 64, 2, 1, 160, 4096, 0, 0, 1e6f, std::nullopt, 32, 2}}},
      // GPT-OSS's layer (Q/K/V/O biases, attention sinks, alternating 32-token sliding and full
      // layers, YaRN RoPE x4 over a 1024-token original context, MXFP4 experts with biases,
      // router bias, clamped SwiGLU) as llama.cpp's openai-moe loads it.
      {"tiny-gpt-oss",
       "tiny gpt-oss pair (sinks, sliding window 32 on even layers, YaRN, 4 MXFP4 experts top-2), "
       "for engine tests and the llama.cpp logit comparison",
       {{"target", Arch::GptOss, 4, 128, 4, 2, 128, 4096, 4, 2, 150000.f, std::nullopt, 32, 2},
        {"draft", Arch::GptOss, 2, 64, 2, 1, 64, 4096, 4, 2, 150000.f, std::nullopt, 32, 2}}},
      // Benchmark sizes of the two sliding-window architectures: the small target's attention
      // (12 x 768, 12 heads, 4 KV heads) with 128-token windows, so at 4K-32K tokens most layers'
      // caches and attention are bounded by the window. gpt-oss: 8 MXFP4 experts of FFN 1024,
      // top-2 (small-moe's active width); gemma3: small's FFN 2048, 5 of every 6 layers sliding.
      // Gemma 4 31B's dense layer: per-layer sliding flags (5 of every 6 here 2 of every 3),
      // sliding layers with head size 32 and 2 KV heads at RoPE base 10000, full layers with head
      // size 64, one KV head shared as K and V, RoPE base 1e6 with frequency factors (rope_freqs),
      // V RMS-normed without a weight, attention scale 1, a per-layer output scale and soft-capped
      // logits.
      {"tiny-gemma4",
       "tiny gemma4 pair (31B-style dense: window 32 on 2 of every 3 layers, head sizes 32 / 64, "
       "RoPE bases 1e4 / 1e6, K = V on full layers, soft-cap 30), for engine tests and the "
       "llama.cpp logit comparison",
       {gemma4_member("target", 6, 128, 4, 2, 352, 4096, 32, 3, 64, 1),
        gemma4_member("draft", 3, 64, 2, 1, 160, 4096, 32, 3, 64, 1)}},
      {"small-gpt-oss",
       "for benchmarks: a gpt-oss target (12 x 768, 12 heads, 4 KV heads, 8 MXFP4 experts of FFN "
       "1024 top-2, sinks, 128-token window on even layers, 32K context) with a 4 x 256 draft",
       {{"target", Arch::GptOss, 12, 768, 12, 4, 1024, 32768, 8, 2, 150000.f, std::nullopt, 128, 2},
        {"draft", Arch::GptOss, 4, 256, 4, 2, 512, 32768, 4, 2, 150000.f, std::nullopt, 128, 2}}},
      {"small-gemma3",
       "for benchmarks: a gemma3 target (12 x 768, 12 heads, 4 KV heads, FFN 2048, 128-token "
       "window on 5 of every 6 layers, 32K context) with a 4 x 256 draft",
       {{"target", Arch::Gemma3, 12, 768, 12, 4, 2048, 32768, 0, 0, 1e6f, std::nullopt, 128, 6},
        {"draft", Arch::Gemma3, 4, 256, 4, 2, 704, 32768, 0, 0, 1e6f, std::nullopt, 128, 2}}},
      // Gemma 4 31B's proportions at the small width: 5 of every 6 layers slide (head size 64,
      // 6 KV heads: half the query heads, as the 31B's 16 of 32), the others are full with head
      // size 128 and 2 KV heads used as K and V (the 31B: 4 x 512); 128-token windows, small's
      // FFN 2048 (as small-gemma3), soft-cap 30.
      {"small-gemma4",
       "for benchmarks: a gemma4 target (12 x 768, 12 heads; 10 sliding layers of head size 64 "
       "with 6 KV heads and a 128-token window, 2 full layers of head size 128 with 2 KV heads as "
       "K and V; FFN 2048, 32K context, soft-cap 30) with a 4 x 256 draft",
       {gemma4_member("target", 12, 768, 12, 6, 2048, 32768, 128, 6, 128, 2),
        gemma4_member("draft", 4, 256, 4, 2, 704, 32768, 128, 2, 64, 1)}},
      // Qwen3.5's hybrid layer as llama.cpp's qwen35 loads it: Gated DeltaNet layers (4-wide conv,
      // key heads tiled over twice as many value heads) and every second layer gated attention
      // (Q/K norms, sigmoid output gate, NeoX RoPE over half of each head as M-RoPE sections
      // [s, s, s', 0], base 1e7).
      {"tiny-qwen35",
       "tiny qwen35 hybrid pair (Gated DeltaNet layers 0, 2 and gated attention layers 1, 3; "
       "draft: one of each), for engine tests and the llama.cpp logit comparison",
       {{"target", Arch::Qwen35, 4, 128, 4, 2, 352, 4096, 0, 0, 1e7f, std::nullopt, 0, 0, 2, 32, 2,
         4, 4},
        tiny_qwen35_draft}},
      // Qwen3.5-MoE's FFN on tiny-qwen35's layers: 8 routed experts of width 128 (top-2,
      // softmax, renormalised) plus a sigmoid-gated shared expert of width 128; tiny-qwen35's
      // dense draft.
      {"tiny-qwen35-moe",
       "tiny qwen35moe hybrid target (tiny-qwen35's layers, 8 experts top-2 and a gated shared "
       "expert) with tiny-qwen35's dense draft, for engine tests and the llama.cpp comparison",
       {{"target", Arch::Qwen35Moe, 4, 128, 4, 2, 128, 4096, 8, 2, 1e7f, std::nullopt, 0, 0, 2, 32,
         2, 4, 4},
        tiny_qwen35_draft}},
      // Qwen3-Next as llama.cpp's qwen3next loads it: tiny-qwen35-moe's layers with plain NeoX
      // RoPE (no M-RoPE sections), each of the 2 key heads repeated over 2 consecutive value heads
      // (interleaved, where qwen35 tiles), and beta/alpha from one ssm_ba tensor laid out per
      // key-head group; tiny-qwen35's dense draft.
      {"tiny-qwen3next",
       "tiny qwen3next hybrid target (tiny-qwen35-moe's layers with interleaved key heads, one "
       "ssm_ba projection and NeoX RoPE) with tiny-qwen35's dense draft, for engine tests and the "
       "llama.cpp comparison",
       {{"target", Arch::Qwen3Next, 4, 128, 4, 2, 128, 4096, 8, 2, 1e7f, std::nullopt, 0, 0, 2, 32,
         2, 4, 4},
        tiny_qwen35_draft}},
      // The small target's width (768, 12 heads of 64, 4 KV heads) in Qwen3.5-122B-A10B's
      // proportions: every fourth layer gated attention (3 of 12), Gated DeltaNet with 4 key heads
      // tiled over 16 value heads of 128 (value width 2048 = 2.67 x 768, the 122B's 8192 / 3072),
      // and 16 routed experts of width 256 (a third of the width, as the 122B's 1024 / 3072),
      // top-4, plus a gated shared expert of the same width. Draft: a dense qwen35 of width 256.
      {"small-qwen35-moe",
       "for benchmarks: a qwen35moe target (12 layers of width 768: 9 Gated DeltaNet with 16 value "
       "heads of 128, 3 gated attention with 12 heads and 4 KV heads, 16 experts of 256 top-4 and "
       "a shared expert; 32K context) with a 4 x 256 dense qwen35 draft",
       {{"target", Arch::Qwen35Moe, 12, 768, 12, 4, 256, 32768, 16, 4, 1e7f, std::nullopt, 0, 0, 4,
         128, 4, 16, 4},
        {"draft", Arch::Qwen35, 4, 256, 4, 2, 704, 32768, 0, 0, 1e7f, std::nullopt, 0, 0, 4, 64, 2,
         4, 4}}},
      // Nemotron-H's blocks as llama.cpp's nemotron_h loads them: Mamba-2 (in-projection z | xBC |
      // dt, conv with bias, 8 heads of 32 sharing B/C in 2 groups, state 16, D skip, grouped
      // norm), attention without RoPE, relu^2 FFN blocks. The draft adds the optional attention
      // and FFN biases, so both forms are checked against llama.cpp.
      {"tiny-nemotron-h",
       "tiny nemotron_h hybrid pair (blocks M-M*-M*-: Mamba-2, FFN, attention without RoPE; "
       "draft M*-), for engine tests and the llama.cpp logit comparison",
       {nemotron_h_member("target", 128, 4, 2, 352, 4096, "M-M*-M*-", 256, 8, 16, 2, false),
        nemotron_h_member("draft", 64, 2, 1, 160, 4096, "M*-", 128, 4, 16, 1, true)}},
      // The small target's width (768, 12 heads of 64, 4 KV heads, FFN 2048) in Nemotron-H's
      // proportions: 24 blocks, 11 Mamba-2, 2 attention, 11 FFN (the 8B has 4 attention of 52);
      // Mamba-2 as the 8B's per head: head size 64, state 128, here 24 heads in 4 groups
      // (d_inner 1536 = 2 x 768), so a recurrent layer's state is 768 KiB.
      {"small-nemotron-h",
       "for benchmarks: a nemotron_h target (24 blocks of width 768: 11 Mamba-2 with 24 heads of "
       "64 and state 128, 2 attention with 12 heads and 4 KV heads, 11 relu^2 FFN of 2048; 32K "
       "context) with a 256-wide draft (M-M*-)",
       {nemotron_h_member("target", 768, 12, 4, 2048, 32768, "M-M-M-M*-M-M-M-M-M*-M-M-", 1536, 24,
                          128, 4, false),
        nemotron_h_member("draft", 256, 4, 2, 704, 32768, "M-M*-", 512, 8, 64, 2, false)}},
      // Nemotron-H-MoE's FFN on tiny-nemotron-h's blocks: 8 relu^2 experts of width 64 (up and
      // down, no gate) routed top-2 by sigmoid with a selection bias, weights normalised and
      // scaled by 2.5, a shared expert of width 128, and a latent width of 64 between
      // ffn_latent_down and ffn_latent_up; tiny-nemotron-h's dense draft.
      {"tiny-nemotron-h-moe",
       "tiny nemotron_h_moe hybrid target (tiny-nemotron-h's blocks with 8 experts top-2, a "
       "shared expert and a latent width of 64) with tiny-nemotron-h's dense draft, for engine "
       "tests and the llama.cpp comparison",
       {nemotron_h_moe_member(
            nemotron_h_member("target", 128, 4, 2, 64, 4096, "M-M*-M*-", 256, 8, 16, 2, false), 8,
            2, 128, 64),
        nemotron_h_member("draft", 64, 2, 1, 160, 4096, "M*-", 128, 4, 16, 1, true)}},
      // small-nemotron-h's blocks with its FFN blocks as Nemotron 3 Super-style latent MoE blocks:
      // 32 relu^2 experts of width 256 over a latent width of 192 (a quarter of the model width,
      // as the Super's 1024 of 4096), top-4, a shared expert of 512; small-nemotron-h's draft.
      {"small-nemotron-h-moe",
       "for benchmarks: a nemotron_h_moe target (small-nemotron-h's 24 blocks of width 768 with "
       "its 11 FFN blocks as MoE: 32 experts of 256 on a 192-wide latent, top-4, a shared expert "
       "of 512) with small-nemotron-h's dense draft",
       {nemotron_h_moe_member(
            nemotron_h_member("target", 768, 12, 4, 256, 32768, "M-M-M-M*-M-M-M-M-M*-M-M-", 1536,
                              24, 128, 4, false),
            32, 4, 512, 192),
        nemotron_h_member("draft", 256, 4, 2, 704, 32768, "M-M*-", 512, 8, 64, 2, false)}},
  };
  return families;
}

const SyntheticFamily& find_synthetic_family(const std::string& name) {
  std::string known;
  for (const auto& f : synthetic_families()) {
    if (f.name == name) return f;
    known += (known.empty() ? "" : ", ") + f.name;
  }
  throw std::invalid_argument("unknown model family '" + name + "' (known: " + known + ")");
}

namespace {
// qwen35's partial rotary factor (0.25 in Qwen3.5; half here so the tiny heads rotate 16 of 32)
// and M-RoPE sections covering the rotated pairs as the converter's default [11, 11, 10, 0] does.
int qwen35_n_rot(int head_dim) {
  return head_dim / 2;
}
std::vector<int> qwen35_sections(int n_rot) {
  const int pairs = n_rot / 2, s0 = (pairs + 2) / 3, s1 = (pairs + 1) / 3;
  return {s0, s1, pairs - s0 - s1, 0};
}

// tiny-gpt-oss's YaRN (gpt-oss-20b's is x32 over 4096 positions).
constexpr float kGptOssYarnFactor = 4.f;
constexpr int kGptOssYarnOrigCtx = 1024;
}  // namespace

ModelConfig synthetic_member_config(const SyntheticMemberSpec& m) {
  // Mirrors set_synthetic_metadata below; tests check both against ModelConfig::from_gguf.
  ModelConfig c;
  c.arch = m.arch;
  c.arch_name = arch_name(m.arch);
  c.n_vocab = int(byte_level_tokenizer_spec().tokens.size());
  c.n_ctx = m.n_ctx;
  c.n_embd = m.n_embd;
  c.n_layer = m.n_layer;
  c.n_head = m.n_head;
  c.n_head_kv = m.n_head_kv;
  c.head_dim = m.n_embd / m.n_head;
  c.n_ff = m.n_ff;
  c.rms_eps = 1e-5f;
  c.rope.head_dim = c.head_dim;
  c.rope.n_rot = c.head_dim;
  c.rope.freq_base = m.rope_base;
  c.rope.freq_scale = 1.f;
  c.rope.layout = m.arch == Arch::Llama ? RopeLayout::Adjacent : RopeLayout::HalfSplit;
  c.qkv_bias = m.arch == Arch::Qwen2;
  c.qk_norm = m.arch == Arch::Qwen3;
  c.n_expert = m.n_expert;
  c.n_expert_used = m.n_expert > 0 ? m.n_expert_used : 0;
  c.n_ff_expert = m.n_expert > 0 ? m.n_ff : 0;
  c.attn_scale = m.attn_scale.value_or(0.f);
  if (m.arch == Arch::GptOss) {
    c.qkv_bias = true;
    c.attn_sinks = true;
    c.head_dim_swa = c.head_dim;
    c.n_rot_swa = c.head_dim;
    c.n_swa = m.n_swa;
    c.swa_layers.assign(size_t(m.n_layer), 0);
    for (int il = 0; il < m.n_layer; ++il)
      c.swa_layers[size_t(il)] = il % m.swa_period < m.swa_period - 1;
    c.rope_base_swa = m.rope_base;
    c.rope.freq_scale = 1.f / kGptOssYarnFactor;
    c.rope.ext_factor = 1.f;
    c.rope.beta_fast = 32.f;
    c.rope.beta_slow = 1.f;
    c.rope.n_ctx_orig = kGptOssYarnOrigCtx;
  }
  if (m.arch == Arch::Gemma4) {
    c.qk_norm = true;
    c.attn_scale = 1.f;
    c.head_dim_swa = c.head_dim;
    c.n_rot_swa = c.head_dim;
    c.head_dim = m.head_dim_full;
    c.rope.head_dim = c.head_dim;
    c.rope.n_rot = c.head_dim;
    c.n_swa = m.n_swa;
    c.swa_layers.assign(size_t(m.n_layer), 0);
    for (int il = 0; il < m.n_layer; ++il) {
      c.swa_layers[size_t(il)] = il % m.swa_period < m.swa_period - 1;
      c.n_head_kv_layer.push_back(c.swa_layers[size_t(il)] ? m.n_head_kv : m.n_head_kv_full);
    }
    c.n_head_kv = c.n_head_kv_layer[0];
    c.rope_base_swa = 10000.f;
    c.final_softcap = m.final_softcap;
  }
  if (is_qwen35_arch(m.arch)) {
    c.qk_norm = true;
    c.attn_output_gate = true;
    c.rope.n_rot = qwen35_n_rot(c.head_dim);
    if (m.arch != Arch::Qwen3Next) c.rope_sections = qwen35_sections(c.rope.n_rot);
    c.recurrent_layers.assign(size_t(m.n_layer), 0);
    for (int il = 0; il < m.n_layer; ++il)
      c.recurrent_layers[size_t(il)] = (il + 1) % m.full_attn_interval != 0;
    c.ssm_d_conv = m.ssm_d_conv;
    c.ssm_d_state = m.ssm_d_state;
    c.ssm_n_group = m.ssm_n_group;
    c.ssm_dt_rank = m.ssm_dt_rank;
    c.ssm_d_inner = m.ssm_dt_rank * m.ssm_d_state;
    if (is_qwen35_moe_arch(m.arch)) c.n_ff_shexp = m.n_ff;
  }
  if (is_nemotron_h_arch(m.arch)) {
    c.recurrent_layers.assign(size_t(m.n_layer), 0);
    c.ffn_layers.assign(size_t(m.n_layer), 0);
    for (int il = 0; il < m.n_layer; ++il) {
      const char k = m.block_pattern[size_t(il)];
      c.recurrent_layers[size_t(il)] = k == 'M';
      c.ffn_layers[size_t(il)] = k == '-' || k == 'E';
    }
    if (m.arch == Arch::NemotronHMoe) {
      c.n_ff_shexp = m.n_ff_shexp;
      c.moe_latent = m.moe_latent;
      c.expert_weights_norm = true;
      c.expert_weights_scale = kNemotronMoeScale;
    }
    c.ssm_d_conv = m.ssm_d_conv;
    c.ssm_d_inner = m.ssm_d_inner;
    c.ssm_d_state = m.ssm_d_state;
    c.ssm_n_group = m.ssm_n_group;
    c.ssm_dt_rank = m.ssm_dt_rank;
  }
  if (m.arch == Arch::Gemma3) {
    c.qk_norm = true;
    c.attn_scale = float(1.0 / std::sqrt(double(c.head_dim)));  // llama.cpp's, below 62 layers
    c.head_dim_swa = c.head_dim;
    c.n_rot_swa = c.head_dim;
    if (m.n_swa > 0) {
      c.n_swa = m.n_swa;
      c.swa_layers.assign(size_t(m.n_layer), 0);
      for (int il = 0; il < m.n_layer; ++il)
        c.swa_layers[size_t(il)] = il % m.swa_period < m.swa_period - 1;
      c.rope_base_swa = 10000.f;
    }
  }
  return c;
}

namespace {

uint64_t splitmix64(uint64_t& s) {
  uint64_t z = (s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

uint64_t fnv1a(const std::string& s) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ull;
  return h;
}

// n values from N(0, std^2) (Box-Muller on a splitmix64 stream), in blocks of 4096 values with
// independent streams so the blocks can be generated in parallel.
std::vector<float> normal_tensor(uint64_t seed, const std::string& key, size_t n, double stddev) {
  std::vector<float> v(n);
  const uint64_t base = seed ^ fnv1a(key);
  const size_t block = 4096, n_blocks = (n + block - 1) / block;
  parallel_for(n_blocks, [&](size_t b, int) {
    uint64_t s = base + b * 0x632be59bd9b4e019ull;
    const size_t end = std::min(n, (b + 1) * block);
    for (size_t i = b * block; i < end; i += 2) {
      // 53-bit uniforms in (0, 1].
      const double u1 = (double(splitmix64(s) >> 11) + 1.0) * 0x1.0p-53;
      const double u2 = double(splitmix64(s) >> 11) * 0x1.0p-53;
      const double r = std::sqrt(-2.0 * std::log(u1)) * stddev;
      v[i] = float(r * std::cos(2 * M_PI * u2));
      if (i + 1 < end) v[i + 1] = float(r * std::sin(2 * M_PI * u2));
    }
  });
  return v;
}

}  // namespace

DType matrix_dtype(DType dtype, uint64_t row_length) {
  return row_length % dtype_block_elems(dtype) == 0 ? dtype : DType::Q8_0;
}

DType WeightScheme::for_matrix(const std::string& name) const {
  const bool hi = name == "output.weight" || name.find(".attn_v.") != std::string::npos ||
                  name.find(".ffn_down") != std::string::npos;
  return hi && high ? *high : base;
}

uint32_t WeightScheme::llama_file_type() const {
  if (high && base == DType::Q4_K) return 15;  // LLAMA_FTYPE_MOSTLY_Q4_K_M
  if (high && base == DType::Q5_K) return 17;  // LLAMA_FTYPE_MOSTLY_Q5_K_M
  return accel::llama_file_type(base);
}

std::optional<WeightScheme> weight_scheme_from_name(const std::string& name) {
  if (name == "q4_k_m") return WeightScheme(DType::Q4_K, DType::Q6_K);
  if (name == "q5_k_m") return WeightScheme(DType::Q5_K, DType::Q6_K);
  // Built in place: returning a WeightScheme copy with `high` unset made GCC 12 warn that the
  // copy reads the empty optional's payload.
  if (const std::optional<DType> t = dtype_from_name(name))
    return std::optional<WeightScheme>(std::in_place, *t);
  return std::nullopt;
}

namespace {

class TensorSink {
 public:
  TensorSink(GgufWriter& w, const std::string& member, uint64_t seed, const WeightScheme& scheme)
      : w_(w), member_(member), seed_(seed), scheme_(scheme) {}

  // A matrix of ggml dims [cols, rows] (or [cols, rows, n] for stacked experts) in the member's
  // weight type.
  // `fixed`: this type whatever the scheme (gpt-oss's MXFP4 experts).
  void matrix(const std::string& name, std::vector<uint64_t> dims, double stddev,
              std::optional<DType> fixed = std::nullopt) {
    size_t n = 1;
    for (auto d : dims) n *= d;
    const std::vector<float> v = normal_tensor(seed_, member_ + "/" + name, n, stddev);
    const DType t = fixed ? *fixed : matrix_dtype(scheme_.for_matrix(name), dims[0]);
    std::vector<uint8_t> bytes(dtype_row_bytes(t, n));
    quantize_row(t, v.data(), bytes.data(), n);
    w_.add_tensor(name, std::move(dims), t, bytes.data(), bytes.size());
  }
  // An f32 tensor of n values (1-D unless dims are given): value + N(0, stddev^2).
  void vector(const std::string& name, size_t n, double value_or_nan, double stddev = 0,
              std::vector<uint64_t> dims = {}) {
    std::vector<float> v = stddev > 0 ? normal_tensor(seed_, member_ + "/" + name, n, stddev)
                                      : std::vector<float>(n, float(value_or_nan));
    for (float& x : v) x += stddev > 0 ? float(value_or_nan) : 0.f;
    w_.add_tensor(name, dims.empty() ? std::vector<uint64_t>{n} : std::move(dims), DType::F32,
                  v.data(), n * 4);
  }

 private:
  GgufWriter& w_;
  std::string member_;
  uint64_t seed_;
  WeightScheme scheme_;
};

// One gpt-oss layer's tensors (llama_model_openai_moe::load_arch_tensors): the experts in MXFP4
// whatever the member's weight type, as gpt-oss files ship them; biases f32; sinks ~ N(0, 1).
void write_gpt_oss_layer(TensorSink& t, const SyntheticMemberSpec& m, const std::string& p,
                         double s, double s_res) {
  const uint64_t E = uint64_t(m.n_embd), F = uint64_t(m.n_ff), NE = uint64_t(m.n_expert);
  const uint64_t hd = E / uint64_t(m.n_head), Q = hd * uint64_t(m.n_head),
                 KV = hd * uint64_t(m.n_head_kv);
  t.vector(p + "attn_norm.weight", E, 1.0);
  t.matrix(p + "attn_q.weight", {E, Q}, s);
  t.matrix(p + "attn_k.weight", {E, KV}, s);
  t.matrix(p + "attn_v.weight", {E, KV}, s);
  t.vector(p + "attn_q.bias", Q, 0, s);
  t.vector(p + "attn_k.bias", KV, 0, s);
  t.vector(p + "attn_v.bias", KV, 0, s);
  t.matrix(p + "attn_output.weight", {Q, E}, s_res);
  t.vector(p + "attn_output.bias", E, 0, s);
  t.vector(p + "attn_sinks.weight", size_t(m.n_head), 0, 1.0);
  t.vector(p + "post_attention_norm.weight", E, 1.0);
  t.matrix(p + "ffn_gate_inp.weight", {E, NE}, s);
  t.vector(p + "ffn_gate_inp.bias", NE, 0, s);
  // Expert weights with a larger spread than 0.02 so MXFP4's shared power-of-two scales keep
  // several significant codes per block.
  t.matrix(p + "ffn_gate_exps.weight", {E, F, NE}, 0.1, DType::MXFP4);
  t.matrix(p + "ffn_up_exps.weight", {E, F, NE}, 0.1, DType::MXFP4);
  t.matrix(p + "ffn_down_exps.weight", {F, E, NE}, 0.1, DType::MXFP4);
  t.vector(p + "ffn_gate_exps.bias", F * NE, 0, s, {F, NE});
  t.vector(p + "ffn_up_exps.bias", F * NE, 0, s, {F, NE});
  t.vector(p + "ffn_down_exps.bias", E * NE, 0, s, {E, NE});
}

// A norm weight of 1 + N(0, 0.1^2).
void gemma_norm(TensorSink& t, const std::string& name, uint64_t n) {
  t.vector(name, size_t(n), 1.0, 0.1);
}

// gemma4's keys as llama_model_gemma4::load_arch_hparams reads them: per-layer sliding flags and
// KV head counts (int32 arrays), both head sizes and RoPE widths, the sliding layers' RoPE base,
// the soft-cap and a zero per-layer embedding width (required by llama.cpp; 0 for the 31B).
void set_gemma4_metadata(GgufWriter& w, const SyntheticMemberSpec& m, const std::string& a,
                         uint64_t hd_swa) {
  std::vector<int32_t> flags, hkv;
  for (int il = 0; il < m.n_layer; ++il) {
    const bool sliding = il % m.swa_period < m.swa_period - 1;
    flags.push_back(sliding ? 1 : 0);
    hkv.push_back(sliding ? m.n_head_kv : m.n_head_kv_full);
  }
  w.set(a + ".attention.sliding_window", GgufValue::of_u32(uint32_t(m.n_swa)));
  w.set(a + ".attention.sliding_window_pattern", GgufValue::of_i32_array(flags));
  w.set(a + ".attention.head_count_kv", GgufValue::of_i32_array(hkv));
  w.set(a + ".attention.key_length", GgufValue::of_u32(uint32_t(m.head_dim_full)));
  w.set(a + ".attention.value_length", GgufValue::of_u32(uint32_t(m.head_dim_full)));
  w.set(a + ".attention.key_length_swa", GgufValue::of_u32(uint32_t(hd_swa)));
  w.set(a + ".attention.value_length_swa", GgufValue::of_u32(uint32_t(hd_swa)));
  w.set(a + ".rope.dimension_count", GgufValue::of_u32(uint32_t(m.head_dim_full)));
  w.set(a + ".rope.dimension_count_swa", GgufValue::of_u32(uint32_t(hd_swa)));
  w.set(a + ".rope.freq_base_swa", GgufValue::of_f32(10000.f));
  w.set(a + ".final_logit_softcapping", GgufValue::of_f32(m.final_softcap));
  w.set(a + ".embedding_length_per_layer_input", GgufValue::of_u32(0));
}

// One gemma4 layer (llama_model_gemma4::load_arch_tensors, dense): full layers have their own
// head size and KV heads and no attn_v; every layer has Q/K norms of its head size, Gemma's
// post-norms and a layer_output_scale near 1.
void write_gemma4_layer(TensorSink& t, const SyntheticMemberSpec& m, int il, double s,
                        double s_res) {
  const std::string p = "blk." + std::to_string(il) + ".";
  const bool sliding = il % m.swa_period < m.swa_period - 1;
  const uint64_t E = uint64_t(m.n_embd), F = uint64_t(m.n_ff);
  const uint64_t hd = sliding ? E / uint64_t(m.n_head) : uint64_t(m.head_dim_full);
  const uint64_t Q = hd * uint64_t(m.n_head),
                 KV = hd * uint64_t(sliding ? m.n_head_kv : m.n_head_kv_full);
  t.vector(p + "attn_norm.weight", E, 1.0);
  t.matrix(p + "attn_q.weight", {E, Q}, s);
  t.matrix(p + "attn_k.weight", {E, KV}, s);
  if (sliding) t.matrix(p + "attn_v.weight", {E, KV}, s);
  // Gemma 4 drops the 1/sqrt(head_dim) score scale (attention scale 1.0): a trained model's Q/K
  // norm weights carry it. Weights near head_dim^(-1/4) each give scores of the usual spread
  // instead of one sqrt(head_dim) times wider (near one-hot softmaxes).
  const double qk = std::pow(double(hd), -0.25);
  t.vector(p + "attn_q_norm.weight", hd, qk, 0.1 * qk);
  t.vector(p + "attn_k_norm.weight", hd, qk, 0.1 * qk);
  t.matrix(p + "attn_output.weight", {Q, E}, s_res);
  gemma_norm(t, p + "post_attention_norm.weight", E);
  t.vector(p + "ffn_norm.weight", E, 1.0);
  t.matrix(p + "ffn_gate.weight", {E, F}, s);
  t.matrix(p + "ffn_up.weight", {E, F}, s);
  t.matrix(p + "ffn_down.weight", {F, E}, s_res);
  gemma_norm(t, p + "post_ffw_norm.weight", E);
  t.vector(p + "layer_output_scale.weight", 1, 0.8, 0.1);
}

// One qwen35 layer (llama_model_qwen35::load_arch_tensors): a gated attention layer (attn_q twice
// q_dim wide: per head the query then the gate) or a Gated DeltaNet layer (attn_qkv, attn_gate,
// ssm_beta and ssm_alpha, or qwen3next's ssm_ba, the f32 conv, dt bias, A = -exp(A_log) < 0, the
// shared head norm, ssm_out), then post_attention_norm and the dense FFN. dt bias near -3 and A
// near -1 decay the state by ~5% per token, so it remembers tens of tokens as trained models' slow
// heads do.
void write_qwen35_layer(TensorSink& t, const SyntheticMemberSpec& m, int il, const std::string& p,
                        double s, double s_res) {
  const uint64_t E = uint64_t(m.n_embd), F = uint64_t(m.n_ff);
  const uint64_t hd = E / uint64_t(m.n_head), Q = hd * uint64_t(m.n_head),
                 KV = hd * uint64_t(m.n_head_kv);
  t.vector(p + "attn_norm.weight", E, 1.0);
  if ((il + 1) % m.full_attn_interval == 0) {
    t.matrix(p + "attn_q.weight", {E, 2 * Q}, s);
    t.matrix(p + "attn_k.weight", {E, KV}, s);
    t.matrix(p + "attn_v.weight", {E, KV}, s);
    gemma_norm(t, p + "attn_q_norm.weight", hd);
    gemma_norm(t, p + "attn_k_norm.weight", hd);
    t.matrix(p + "attn_output.weight", {Q, E}, s_res);
  } else {
    const uint64_t dk = uint64_t(m.ssm_d_state), H = uint64_t(m.ssm_dt_rank);
    const uint64_t V = H * dk, conv = 2 * dk * uint64_t(m.ssm_n_group) + V;
    t.matrix(p + "attn_qkv.weight", {E, conv}, s);
    t.matrix(p + "attn_gate.weight", {E, V}, s);
    if (m.arch == Arch::Qwen3Next) {  // per key-head group: its value heads' beta, then alpha
      t.matrix(p + "ssm_ba.weight", {E, 2 * H}, s);
    } else {
      t.matrix(p + "ssm_beta.weight", {E, H}, s);
      t.matrix(p + "ssm_alpha.weight", {E, H}, s);
    }
    t.vector(p + "ssm_conv1d.weight", conv * uint64_t(m.ssm_d_conv), 0, 0.3,
             {uint64_t(m.ssm_d_conv), conv});
    t.vector(p + "ssm_dt.bias", H, -3.0, 0.5);
    t.vector(p + "ssm_a", H, -1.0, 0.2);
    gemma_norm(t, p + "ssm_norm.weight", dk);
    t.matrix(p + "ssm_out.weight", {V, E}, s_res);
  }
  gemma_norm(t, p + "post_attention_norm.weight", E);
  if (m.n_expert > 0) {  // qwen35moe, qwen3next: routed experts and the gated shared expert
    const uint64_t NE = uint64_t(m.n_expert);
    t.matrix(p + "ffn_gate_inp.weight", {E, NE}, s);
    t.matrix(p + "ffn_gate_exps.weight", {E, F, NE}, s);
    t.matrix(p + "ffn_up_exps.weight", {E, F, NE}, s);
    t.matrix(p + "ffn_down_exps.weight", {F, E, NE}, s_res);
    t.vector(p + "ffn_gate_inp_shexp.weight", E, 0, 0.1);
    t.matrix(p + "ffn_gate_shexp.weight", {E, F}, s);
    t.matrix(p + "ffn_up_shexp.weight", {E, F}, s);
    t.matrix(p + "ffn_down_shexp.weight", {F, E}, s_res);
    return;
  }
  t.matrix(p + "ffn_gate.weight", {E, F}, s);
  t.matrix(p + "ffn_up.weight", {E, F}, s);
  t.matrix(p + "ffn_down.weight", {F, E}, s_res);
}

// nemotron_h's keys as the converter writes them (conversion/nemotron.py, granite.py): per-layer
// head_count_kv (KV heads on '*' blocks, else 0) and feed_forward_length (the width on '-'
// blocks, else 0), key/value lengths, the ssm.* sizes, and the layer-norm epsilon llama.cpp
// requires beside the RMS one.
void set_nemotron_h_metadata(GgufWriter& w, const SyntheticMemberSpec& m, const std::string& a,
                             uint64_t hd) {
  std::vector<int32_t> hkv, ff;
  for (char k : m.block_pattern) {
    hkv.push_back(k == '*' ? m.n_head_kv : 0);
    ff.push_back(k == '-' || k == 'E' ? m.n_ff : 0);
  }
  if (m.arch == Arch::NemotronHMoe) {  // the expert count, use count and width are written above
    w.set(a + ".expert_shared_feed_forward_length", GgufValue::of_u32(uint32_t(m.n_ff_shexp)));
    w.set(a + ".expert_shared_count", GgufValue::of_u32(1));
    w.set(a + ".expert_weights_norm", GgufValue::of_bool(true));
    w.set(a + ".expert_weights_scale", GgufValue::of_f32(kNemotronMoeScale));
    if (m.moe_latent > 0) w.set(a + ".moe_latent_size", GgufValue::of_u32(uint32_t(m.moe_latent)));
  }
  w.set(a + ".attention.head_count_kv", GgufValue::of_i32_array(hkv));
  w.set(a + ".feed_forward_length", GgufValue::of_i32_array(ff));
  w.set(a + ".attention.key_length", GgufValue::of_u32(uint32_t(hd)));
  w.set(a + ".attention.value_length", GgufValue::of_u32(uint32_t(hd)));
  w.set(a + ".attention.layer_norm_epsilon", GgufValue::of_f32(1e-5f));
  w.set(a + ".ssm.conv_kernel", GgufValue::of_u32(uint32_t(m.ssm_d_conv)));
  w.set(a + ".ssm.inner_size", GgufValue::of_u32(uint32_t(m.ssm_d_inner)));
  w.set(a + ".ssm.state_size", GgufValue::of_u32(uint32_t(m.ssm_d_state)));
  w.set(a + ".ssm.group_count", GgufValue::of_u32(uint32_t(m.ssm_n_group)));
  w.set(a + ".ssm.time_step_rank", GgufValue::of_u32(uint32_t(m.ssm_dt_rank)));
}

// One nemotron_h block (llama_model_nemotron_h::load_arch_tensors) by its pattern character:
// Mamba-2 (ssm_in, the f32 conv and its bias, dt bias near -3 and A = -exp(A_log) near -1, so
// the state decays ~5% per token, D near 1, the grouped norm's weights {d_inner / groups,
// groups}, ssm_out), attention (Q, K, V, output) or an FFN (up, down); with `biases`, the
// optional attention and FFN biases. Every block's norm is random near 1 so a misplaced norm
// changes the logits.
void write_nemotron_h_layer(TensorSink& t, const SyntheticMemberSpec& m, int il, double s,
                            double s_res) {
  const std::string p = "blk." + std::to_string(il) + ".";
  const uint64_t E = uint64_t(m.n_embd), F = uint64_t(m.n_ff);
  const uint64_t hd = E / uint64_t(m.n_head), Q = hd * uint64_t(m.n_head),
                 KV = hd * uint64_t(m.n_head_kv);
  gemma_norm(t, p + "attn_norm.weight", E);
  const char kind = m.block_pattern[size_t(il)];
  if (kind == 'M') {
    const uint64_t Di = uint64_t(m.ssm_d_inner), H = uint64_t(m.ssm_dt_rank),
                   G = uint64_t(m.ssm_n_group);
    const uint64_t conv = Di + 2 * G * uint64_t(m.ssm_d_state);
    t.matrix(p + "ssm_in.weight", {E, Di + conv + H}, s);
    t.vector(p + "ssm_conv1d.weight", conv * uint64_t(m.ssm_d_conv), 0, 0.3,
             {uint64_t(m.ssm_d_conv), conv});
    t.vector(p + "ssm_conv1d.bias", conv, 0, 0.1);
    t.vector(p + "ssm_dt.bias", H, -3.0, 0.5);
    t.vector(p + "ssm_a", H, -1.0, 0.2, {1, H});
    t.vector(p + "ssm_d", H, 1.0, 0.1, {1, H});
    t.vector(p + "ssm_norm.weight", Di, 1.0, 0.1, {Di / G, G});
    t.matrix(p + "ssm_out.weight", {Di, E}, s_res);
  } else if (kind == '*') {
    t.matrix(p + "attn_q.weight", {E, Q}, s);
    t.matrix(p + "attn_k.weight", {E, KV}, s);
    t.matrix(p + "attn_v.weight", {E, KV}, s);
    t.matrix(p + "attn_output.weight", {Q, E}, s_res);
    if (m.biases) {
      t.vector(p + "attn_q.bias", Q, 0, s);
      t.vector(p + "attn_k.bias", KV, 0, s);
      t.vector(p + "attn_v.bias", KV, 0, s);
      t.vector(p + "attn_output.bias", E, 0, s);
    }
  } else if (kind == 'E') {  // nemotron_h_moe: router, selection bias, latent, experts, shared
    const uint64_t NE = uint64_t(m.n_expert), S = uint64_t(m.n_ff_shexp);
    const uint64_t Le = m.moe_latent > 0 ? uint64_t(m.moe_latent) : E;
    t.matrix(p + "ffn_gate_inp.weight", {E, NE}, s);
    t.vector(p + "exp_probs_b.bias", NE, 0, 0.01);
    if (m.moe_latent > 0) {
      t.matrix(p + "ffn_latent_down.weight", {E, Le}, s);
      t.matrix(p + "ffn_latent_up.weight", {Le, E}, s);
    }
    t.matrix(p + "ffn_up_exps.weight", {Le, F, NE}, s);
    t.matrix(p + "ffn_down_exps.weight", {F, Le, NE}, s_res);
    t.matrix(p + "ffn_up_shexp.weight", {E, S}, s);
    t.matrix(p + "ffn_down_shexp.weight", {S, E}, s_res);
  } else {
    t.matrix(p + "ffn_up.weight", {E, F}, s);
    t.matrix(p + "ffn_down.weight", {F, E}, s_res);
    if (m.biases) {
      t.vector(p + "ffn_up.bias", F, 0, s);
      t.vector(p + "ffn_down.bias", E, 0, s);
    }
  }
}

}  // namespace

void set_synthetic_metadata(GgufWriter& w, const SyntheticMemberSpec& m, const std::string& family,
                            uint64_t seed, DType dtype, const TokenizerSpec* vocab) {
  const TokenizerSpec tok = vocab ? *vocab : byte_level_tokenizer_spec();
  const uint64_t V = tok.tokens.size(), E = uint64_t(m.n_embd), F = uint64_t(m.n_ff);
  const uint64_t hd = E / uint64_t(m.n_head);
  const std::string a = arch_name(m.arch);
  w.set("general.architecture", GgufValue::of_string(a));
  w.set("general.name", GgufValue::of_string("accelbench-" + family + "-" + m.role));
  w.set("general.file_type", GgufValue::of_u32(llama_file_type(dtype)));
  w.set("accelbench.family", GgufValue::of_string(family));
  w.set("accelbench.role", GgufValue::of_string(m.role));
  w.set("accelbench.seed", GgufValue::of_u64(seed));
  w.set(a + ".vocab_size", GgufValue::of_u32(uint32_t(V)));
  w.set(a + ".context_length", GgufValue::of_u32(uint32_t(m.n_ctx)));
  w.set(a + ".embedding_length", GgufValue::of_u32(uint32_t(E)));
  w.set(a + ".block_count", GgufValue::of_u32(uint32_t(m.n_layer)));
  w.set(a + ".feed_forward_length", GgufValue::of_u32(uint32_t(F)));
  w.set(a + ".attention.head_count", GgufValue::of_u32(uint32_t(m.n_head)));
  w.set(a + ".attention.head_count_kv", GgufValue::of_u32(uint32_t(m.n_head_kv)));
  w.set(a + ".attention.layer_norm_rms_epsilon", GgufValue::of_f32(1e-5f));
  w.set(a + ".rope.freq_base", GgufValue::of_f32(m.rope_base));
  w.set(a + ".rope.dimension_count",
        GgufValue::of_u32(uint32_t(is_qwen35_arch(m.arch) ? qwen35_n_rot(int(hd)) : hd)));
  if (is_qwen35_arch(m.arch)) {
    const std::vector<int> sec = qwen35_sections(qwen35_n_rot(int(hd)));
    if (m.arch != Arch::Qwen3Next)  // qwen3next's RoPE is plain NeoX: no sections key
      w.set(a + ".rope.dimension_sections",
            GgufValue::of_i32_array({sec[0], sec[1], sec[2], sec[3]}));
    w.set(a + ".full_attention_interval", GgufValue::of_u32(uint32_t(m.full_attn_interval)));
    w.set(a + ".ssm.conv_kernel", GgufValue::of_u32(uint32_t(m.ssm_d_conv)));
    w.set(a + ".ssm.state_size", GgufValue::of_u32(uint32_t(m.ssm_d_state)));
    w.set(a + ".ssm.group_count", GgufValue::of_u32(uint32_t(m.ssm_n_group)));
    w.set(a + ".ssm.time_step_rank", GgufValue::of_u32(uint32_t(m.ssm_dt_rank)));
    w.set(a + ".ssm.inner_size", GgufValue::of_u32(uint32_t(m.ssm_dt_rank * m.ssm_d_state)));
    if (is_qwen35_moe_arch(m.arch))
      w.set(a + ".expert_shared_feed_forward_length", GgufValue::of_u32(uint32_t(F)));
  }
  if (m.arch == Arch::Gemma4) set_gemma4_metadata(w, m, a, hd);
  if (is_nemotron_h_arch(m.arch)) set_nemotron_h_metadata(w, m, a, hd);
  if (m.attn_scale) w.set(a + ".attention.scale", GgufValue::of_f32(*m.attn_scale));
  if (m.arch == Arch::GptOss) {
    w.set(a + ".rope.scaling.type", GgufValue::of_string("yarn"));
    w.set(a + ".rope.scaling.factor", GgufValue::of_f32(kGptOssYarnFactor));
    w.set(a + ".rope.scaling.original_context_length",
          GgufValue::of_u32(uint32_t(kGptOssYarnOrigCtx)));
  }
  if (m.n_swa > 0 && m.arch != Arch::Gemma4) {
    w.set(a + ".attention.sliding_window", GgufValue::of_u32(uint32_t(m.n_swa)));
    w.set(a + ".attention.sliding_window_pattern", GgufValue::of_u32(uint32_t(m.swa_period)));
  }
  if (m.n_expert > 0) {
    w.set(a + ".expert_count", GgufValue::of_u32(uint32_t(m.n_expert)));
    w.set(a + ".expert_used_count", GgufValue::of_u32(uint32_t(m.n_expert_used)));
    w.set(a + ".expert_feed_forward_length", GgufValue::of_u32(uint32_t(F)));
  }
  write_tokenizer_metadata(w, tok);
}

void write_synthetic_model(const SyntheticMemberSpec& m, const std::string& family, uint64_t seed,
                           const WeightScheme& scheme, const std::string& path,
                           const TokenizerSpec* vocab) {
  const uint64_t V = vocab ? vocab->tokens.size() : byte_level_tokenizer_spec().tokens.size(),
                 E = uint64_t(m.n_embd), F = uint64_t(m.n_ff);
  const uint64_t hd = E / uint64_t(m.n_head), Q = hd * uint64_t(m.n_head),
                 KV = hd * uint64_t(m.n_head_kv);
  GgufWriter w;
  set_synthetic_metadata(w, m, family, seed, scheme.base, vocab);
  w.set("general.file_type", GgufValue::of_u32(scheme.llama_file_type()));  // replaces in place

  // GPT-2-style initialisation: std 0.02, residual output projections scaled by 1/sqrt(2 L).
  const double s = 0.02, s_res = 0.02 / std::sqrt(2.0 * m.n_layer);
  TensorSink t(w, m.role, seed, scheme);
  t.matrix("token_embd.weight", {E, V}, s);
  if (m.arch == Arch::Gemma4)  // full layers' RoPE frequency divisors, one per rotated pair
    t.vector("rope_freqs.weight", size_t(m.head_dim_full / 2), 2.0, 0.5);
  for (int l = 0; l < m.n_layer; ++l) {
    const std::string p = "blk." + std::to_string(l) + ".";
    if (m.arch == Arch::Gemma4) {
      write_gemma4_layer(t, m, l, s, s_res);
      continue;
    }
    if (m.arch == Arch::GptOss) {
      write_gpt_oss_layer(t, m, p, s, s_res);
      continue;
    }
    if (is_qwen35_arch(m.arch)) {
      write_qwen35_layer(t, m, l, p, s, s_res);
      continue;
    }
    if (is_nemotron_h_arch(m.arch)) {
      write_nemotron_h_layer(t, m, l, s, s_res);
      continue;
    }
    t.vector(p + "attn_norm.weight", E, 1.0);
    t.matrix(p + "attn_q.weight", {E, Q}, s);
    t.matrix(p + "attn_k.weight", {E, KV}, s);
    t.matrix(p + "attn_v.weight", {E, KV}, s);
    if (m.arch == Arch::Qwen2) {
      t.vector(p + "attn_q.bias", Q, 0, s);
      t.vector(p + "attn_k.bias", KV, 0, s);
      t.vector(p + "attn_v.bias", KV, 0, s);
    }
    if (m.arch == Arch::Qwen3 || m.arch == Arch::Gemma3) {
      t.vector(p + "attn_q_norm.weight", hd, 1.0);
      t.vector(p + "attn_k_norm.weight", hd, 1.0);
    }
    t.matrix(p + "attn_output.weight", {Q, E}, s_res);
    // Gemma's norms on the sublayer outputs, near 1 like a trained model's (the GGUF converter
    // stores Gemma's 1 + w); random so a misplaced norm changes the logits.
    if (m.arch == Arch::Gemma3) gemma_norm(t, p + "post_attention_norm.weight", E);
    t.vector(p + "ffn_norm.weight", E, 1.0);
    if (m.n_expert == 0) {
      t.matrix(p + "ffn_gate.weight", {E, F}, s);
      t.matrix(p + "ffn_up.weight", {E, F}, s);
      t.matrix(p + "ffn_down.weight", {F, E}, s_res);
    } else {
      const uint64_t NE = uint64_t(m.n_expert);
      t.matrix(p + "ffn_gate_inp.weight", {E, NE}, s);
      t.matrix(p + "ffn_gate_exps.weight", {E, F, NE}, s);
      t.matrix(p + "ffn_up_exps.weight", {E, F, NE}, s);
      t.matrix(p + "ffn_down_exps.weight", {F, E, NE}, s_res);
    }
    if (m.arch == Arch::Gemma3) gemma_norm(t, p + "post_ffw_norm.weight", E);
  }
  t.vector("output_norm.weight", E, 1.0);
  // Gemma ties the output projection to the token embeddings (no output.weight).
  if (m.arch != Arch::Gemma3 && m.arch != Arch::Gemma4) t.matrix("output.weight", {E, V}, s);
  w.write(path);
}

std::vector<std::string> make_synthetic_family(const std::string& family,
                                               const std::string& out_dir, uint64_t seed,
                                               const WeightScheme& scheme,
                                               const TokenizerSpec* vocab) {
  const SyntheticFamily& f = find_synthetic_family(family);
  std::filesystem::create_directories(out_dir);
  std::vector<std::string> paths;
  for (const auto& m : f.members) {
    const std::string path = (std::filesystem::path(out_dir) / (m.role + ".gguf")).string();
    write_synthetic_model(m, f.name, seed, scheme, path, vocab);
    paths.push_back(path);
  }
  return paths;
}

}  // namespace accel
