// ModelConfig: an architecture's hyper-parameters as read from GGUF metadata (`{arch}.*` keys).
// Owns the mapping from metadata keys to numbers and their validation; knows nothing of weights
// or tokenizers. Unsupported architectures are refused by name. Sliding-window architectures
// (gemma3, gemma4, gpt-oss) get per-layer attention kinds read as llama.cpp 3f545bec reads them;
// Model::load still refuses them until their forward pass exists. qwen35 (Qwen3.5) gets its
// hybrid layer kinds (Gated DeltaNet or gated attention) the same way, and so does qwen3next
// (Qwen3-Next: qwen35moe's layers with plain NeoX RoPE and interleaved key heads).
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "kernels/elementwise.h"

namespace accel {

class GgufFile;

enum class Arch {
  Llama,
  Qwen2,
  Qwen3,
  Gemma3,
  Gemma4,
  GptOss,
  Qwen35,
  Qwen35Moe,
  NemotronH,
  NemotronHMoe,
  Qwen3Next
};

struct ModelConfig {
  Arch arch = Arch::Llama;
  std::string arch_name;  // general.architecture as written in the file
  int n_vocab = 0;
  int n_ctx = 0;  // {arch}.context_length: the longest context the model supports
  int n_embd = 0;
  int n_layer = 0;
  int n_head = 0;
  int n_head_kv = 0;
  int head_dim = 0;  // {arch}.attention.key_length, else n_embd / n_head
  int n_ff = 0;
  float rms_eps = 1e-5f;
  RopeParams rope;        // layout follows llama.cpp: Adjacent for llama, HalfSplit for qwen2/qwen3
  bool qkv_bias = false;  // qwen2
  bool qk_norm = false;   // qwen3: per-head RMSNorm on Q and K before RoPE
  // Mixture of experts (top-k routed SwiGLU experts); 0 = dense.
  int n_expert = 0;
  int n_expert_used = 0;
  int n_ff_expert = 0;
  // {arch}.attention.scale (llama.cpp's LLM_KV_ATTENTION_SCALE): the factor on q.k before the
  // softmax when the model is trained with one other than 1/sqrt(head_dim) (Gemma's is 1.0).
  // 0 = not set, i.e. 1/sqrt(head_dim); read attention_scale() for the value in effect.
  float attn_scale = 0.f;

  // Per-layer attention kinds (gemma3 / gemma4 / gpt-oss; empty or zero for the others).
  // {arch}.attention.sliding_window: the window of sliding layers in positions (a key is visible
  // iff 0 <= q_pos - kv_pos < n_swa); 0 = every layer attends to the whole context.
  int n_swa = 0;
  // Layer il slides iff swa_layers[il] != 0; empty when n_swa == 0. From
  // {arch}.attention.sliding_window_pattern: a period p (layer il slides iff il % p < p - 1, as
  // llama.cpp's set_swa_pattern) or, for gemma4, one flag per layer.
  std::vector<uint8_t> swa_layers;
  // Sliding layers' own head size, RoPE dimensions and RoPE base ({arch}.attention.key_length_swa,
  // {arch}.rope.dimension_count_swa, {arch}.rope.freq_base_swa); equal to the full layers' unless
  // the file (or the architecture's default: 10000 for gemma3/gemma4) says otherwise.
  int head_dim_swa = 0;
  int n_rot_swa = 0;
  float rope_base_swa = 0.f;
  // {arch}.attention.head_count_kv given per layer (an array); empty when one value serves all.
  std::vector<int> n_head_kv_layer;
  // {arch}.final_logit_softcapping: logits become cap * tanh(logits / cap); 0 = off.
  float final_softcap = 0.f;
  // gpt-oss: one learned sink logit per query head in every layer's softmax (attention.h).
  bool attn_sinks = false;

  // Hybrid layers (qwen35): Gated DeltaNet layers between gated full-attention layers, read as
  // llama.cpp 3f545bec's llama_model_qwen35::load_arch_hparams reads them. Layer il is recurrent
  // iff recurrent_layers[il] != 0 (empty: no recurrent layers), from
  // {arch}.attention.recurrent_layers (one flag per block) or else {arch}.full_attention_interval
  // (default 4: layer il is recurrent iff (il + 1) % interval != 0).
  std::vector<uint8_t> recurrent_layers;
  int ssm_d_conv = 0;   // {arch}.ssm.conv_kernel: the short conv's width
  int ssm_d_inner = 0;  // {arch}.ssm.inner_size: n_v_heads * head_v_dim
  int ssm_d_state = 0;  // {arch}.ssm.state_size: head_k_dim (= head_v_dim for qwen35)
  int ssm_dt_rank = 0;  // {arch}.ssm.time_step_rank: value heads
  int ssm_n_group = 0;  // {arch}.ssm.group_count: key heads (divides the value heads)
  // {arch}.rope.dimension_sections (interleaved M-RoPE's t/h/w/e sections in rotated pairs;
  // empty for qwen3next, whose RoPE is plain NeoX over rope.dimension_count dimensions).
  // Text positions give every section the token's position except the fourth (0); the engine
  // accepts sections under which every rotated pair turns by the token's position.
  std::vector<int> rope_sections;
  // {arch}.nextn_predict_layers: NextN/MTP blocks stored after the main stack (block_count
  // includes them; n_layer does not). They are not loaded or run.
  int n_layer_nextn = 0;
  // qwen35: attn_q emits, per head, the query then a sigmoid gate on the attention output.
  bool attn_output_gate = false;
  // qwen35moe: the shared expert's FFN width ({arch}.expert_shared_feed_forward_length, default
  // feed_forward_length); its output is scaled by sigmoid(x . ffn_gate_inp_shexp) and added to the
  // routed experts'. 0 = no shared expert.
  int n_ff_shexp = 0;
  // nemotron_h (Nemotron-H): every block is one mixer, x += mixer(rmsnorm(x)), of three kinds
  // decided per layer as llama.cpp 3f545bec's llama_model_nemotron_h reads them from the per-layer
  // arrays attention.head_count_kv and feed_forward_length: recurrent (Mamba-2) iff both are 0,
  // attention (no RoPE) iff only feed_forward_length is 0, else an FFN-only block (ffn_layers[il]
  // != 0) whose width is n_ff. n_head_kv is the attention layers' common KV head count.
  std::vector<uint8_t> ffn_layers;
  // nemotron_h_moe: its FFN blocks are mixtures of relu^2 experts (up and down, no gate) routed
  // by sigmoid(router) with a selection-only bias (exp_probs_b), plus a relu^2 shared expert of
  // width n_ff_shexp; {arch}.expert_weights_norm divides the chosen weights by their sum,
  // {arch}.expert_weights_scale (0 = none) multiplies them, and {arch}.moe_latent_size (0 =
  // none) is the width the experts run at between ffn_latent_down and ffn_latent_up.
  bool expert_weights_norm = false;
  float expert_weights_scale = 0.f;
  int moe_latent = 0;

  int q_dim() const { return n_head * head_dim; }
  int kv_dim() const { return n_head_kv * head_dim; }

  // Reads and validates the hyper-parameters; throws GgufError naming the file and key.
  static ModelConfig from_gguf(const GgufFile& f);
};

const char* arch_name(Arch a);

// The attention scale in effect: c.attn_scale when set, else 1/sqrt(head_dim).
float attention_scale(const ModelConfig& c);

// One layer's attention as its kind sets it.
struct LayerAttention {
  bool sliding = false;
  int window = 0;  // AttentionShape::window: n_swa for sliding layers, 0 for full ones
  int n_head_kv = 0;
  int head_dim = 0;
  int n_rot = 0;
  float rope_base = 0.f;
};
LayerAttention layer_attention(const ModelConfig& c, int il);
// The first full-attention layer's (layer 0's when every layer slides): the geometry of the layers
// SpecPrefill scores with and CritiPrefill prunes (gemma4's full layers differ from its sliding
// ones in head size and KV heads).
LayerAttention full_layer_attention(const ModelConfig& c);
// True when any layer slides.
bool has_sliding_layers(const ModelConfig& c);
// Hybrid models: whether layer il is a recurrent (Gated DeltaNet) layer.
bool is_recurrent_layer(const ModelConfig& c, int il);
bool has_recurrent_layers(const ModelConfig& c);
// qwen35, qwen35moe or qwen3next: the hybrid forward pass (Model::forward_hybrid).
bool is_qwen35_arch(Arch a);
// qwen35moe or qwen3next: always MoE, with a sigmoid-gated shared expert.
bool is_qwen35_moe_arch(Arch a);
// nemotron_h or nemotron_h_moe: the Nemotron-H forward pass (Model::forward_nemotron_h).
bool is_nemotron_h_arch(Arch a);
// nemotron_h: whether layer il is an FFN-only block (it holds nothing in the cache).
bool is_ffn_only_layer(const ModelConfig& c, int il);
// Whether layer il attends (keeps K/V in the cache): neither recurrent nor FFN-only.
bool is_attention_layer(const ModelConfig& c, int il);

// A Mamba-2 layer's sizes as nemotron_h derives them from the ssm.* keys (mamba-base.cpp
// build_mamba2_layer): heads = time_step_rank, head_dim = inner_size / heads, groups of B/C =
// group_count; the in-projection emits z | xBC | dt.
struct Mamba2LayerDims {
  int n_heads = 0, head_dim = 0, d_state = 0, n_groups = 0, d_conv = 0;
  size_t d_inner() const { return size_t(n_heads) * size_t(head_dim); }
  size_t conv_channels() const { return d_inner() + 2 * size_t(n_groups) * size_t(d_state); }
  size_t in_proj() const { return d_inner() + conv_channels() + size_t(n_heads); }
};
Mamba2LayerDims mamba2_layer_dims(const ModelConfig& c);

// A Gated DeltaNet layer's sizes as qwen35 derives them from the ssm.* keys.
struct DeltaLayerDims {
  int n_k_heads = 0, n_v_heads = 0, head_k_dim = 0, head_v_dim = 0, d_conv = 0;
  size_t key_dim() const { return size_t(n_k_heads) * size_t(head_k_dim); }
  size_t value_dim() const { return size_t(n_v_heads) * size_t(head_v_dim); }
  size_t conv_channels() const { return 2 * key_dim() + value_dim(); }
};
DeltaLayerDims delta_layer_dims(const ModelConfig& c);

// The hyper-parameters as a JSON object (what the results store records per model, and what the
// analytic cost model reads back): n_vocab, n_ctx, n_embd, n_layer, n_head, n_head_kv, head_dim,
// n_ff, n_expert, n_expert_used, n_ff_expert, and attn_scale only when the file sets it (so the
// object, and the store keys hashed from it, stay the same for files without the key); likewise
// n_swa, swa_layers, head_dim_swa, rope_base_swa, n_head_kv_layer, final_softcap and attn_sinks
// only for sliding-window architectures.
nlohmann::json config_json(const ModelConfig& c);

}  // namespace accel
