// ModelConfig: an architecture's hyper-parameters as read from GGUF metadata (`{arch}.*` keys).
// Owns the mapping from metadata keys to numbers and their validation; knows nothing of weights
// or tokenizers. Unsupported architectures are refused by name.
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "kernels/elementwise.h"

namespace accel {

class GgufFile;

enum class Arch { Llama, Qwen2, Qwen3 };

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

  int q_dim() const { return n_head * head_dim; }
  int kv_dim() const { return n_head_kv * head_dim; }

  // Reads and validates the hyper-parameters; throws GgufError naming the file and key.
  static ModelConfig from_gguf(const GgufFile& f);
};

const char* arch_name(Arch a);

// The attention scale in effect: c.attn_scale when set, else 1/sqrt(head_dim).
float attention_scale(const ModelConfig& c);

// The hyper-parameters as a JSON object (what the results store records per model, and what the
// analytic cost model reads back): n_vocab, n_ctx, n_embd, n_layer, n_head, n_head_kv, head_dim,
// n_ff, n_expert, n_expert_used, n_ff_expert, and attn_scale only when the file sets it (so the
// object, and the store keys hashed from it, stay the same for files without the key).
nlohmann::json config_json(const ModelConfig& c);

}  // namespace accel
