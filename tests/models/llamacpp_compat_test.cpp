// Every GGUF this project writes (synthetic families in every dtype, llama2.c imports) carries what
// llama.cpp's loader requires for our architectures, with the types it insists on, and exactly the
// tensors it creates. The rules are transcribed from llama.cpp (commit 3f545bec):
// src/llama-vocab.cpp (tokenizer keys), src/llama-model.cpp load_hparams,
// src/models/{llama,qwen2,qwen3}.cpp, and include/llama.h `enum llama_ftype`. The checker is shown
// to fail on files that break each rule.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "models/gguf.h"
#include "models/llama2c_import.h"
#include "models/model.h"
#include "models/synthetic.h"
#include "models/tokenizer.h"
#include "tests/support/test_support.h"

namespace accel {
namespace {

const std::vector<DType> kAllDtypes = {DType::F32,  DType::F16,  DType::BF16, DType::Q8_0,
                                       DType::Q4_0, DType::Q4_K, DType::Q5_K, DType::Q6_K};

// include/llama.h: LLAMA_FTYPE_ALL_F32 = 0, MOSTLY_F16 = 1, MOSTLY_Q4_0 = 2, MOSTLY_Q8_0 = 7,
// MOSTLY_Q4_K_S = 14, MOSTLY_Q5_K_S = 16, MOSTLY_Q6_K = 18, MOSTLY_BF16 = 32. Written out here,
// independently of models/, so a wrong mapping fails.
const std::map<DType, uint32_t>& ftype_table() {
  static const std::map<DType, uint32_t> table = {
      {DType::F32, 0},   {DType::F16, 1},   {DType::Q4_0, 2},  {DType::Q8_0, 7},
      {DType::Q4_K, 14}, {DType::Q5_K, 16}, {DType::Q6_K, 18}, {DType::BF16, 32}};
  return table;
}
uint32_t llamacpp_ftype(DType t) {
  return ftype_table().at(t);
}

// Pre-tokenizers llama.cpp accepts that our engine also implements. A gpt2 vocabulary without one
// loads with "GENERATION QUALITY WILL BE DEGRADED", so it counts as missing.
const std::set<std::string> kKnownPre = {"gpt-2", "llama-bpe", "qwen2", "qwen35"};

// Collects every broken rule, so one failure lists all of them.
class Problems {
 public:
  void add(const std::string& p) { list_.push_back(p); }
  ::testing::AssertionResult result() const {
    if (list_.empty()) return ::testing::AssertionSuccess();
    std::ostringstream os;
    for (const auto& p : list_) os << "\n  " << p;
    return ::testing::AssertionFailure() << list_.size() << " problem(s):" << os.str();
  }

 private:
  std::vector<std::string> list_;
};

// The key's value when it exists with `type` (and, for arrays, element type `elem`); notes a
// problem when it is missing and `required`, or has another type (llama.cpp's GGUFMeta throws "key
// ... has wrong type" even for optional keys).
const GgufValue* typed(const GgufFile& f, Problems& p, const std::string& key, GgufType type,
                       bool required, GgufType elem = GgufType::UINT32) {
  const GgufValue* v = f.find(key);
  if (!v) {
    if (required) p.add(key + ": missing");
    return nullptr;
  }
  if (v->type != type || (type == GgufType::ARRAY && v->elem != elem)) {
    p.add(key + ": type " + gguf_type_name(v->type) +
          (v->type == GgufType::ARRAY ? std::string(" of ") + gguf_type_name(v->elem) : "") +
          ", llama.cpp wants " + gguf_type_name(type) +
          (type == GgufType::ARRAY ? std::string(" of ") + gguf_type_name(elem) : ""));
    return nullptr;
  }
  return v;
}

void check_tokenizer(const GgufFile& f, Problems& p) {
  const GgufValue* model = typed(f, p, "tokenizer.ggml.model", GgufType::STRING, true);
  const GgufValue* tokens =
      typed(f, p, "tokenizer.ggml.tokens", GgufType::ARRAY, true, GgufType::STRING);
  const size_t n = tokens ? tokens->array_size() : 0;
  if (model && model->s != "gpt2" && model->s != "llama")
    p.add("tokenizer.ggml.model: '" + model->s + "' is not a model our writers should produce");
  if (model && model->s == "gpt2") {
    // "cannot find tokenizer merges in model file" otherwise, even for a byte-level vocabulary.
    typed(f, p, "tokenizer.ggml.merges", GgufType::ARRAY, true, GgufType::STRING);
    const GgufValue* pre = typed(f, p, "tokenizer.ggml.pre", GgufType::STRING, true);
    if (pre && !kKnownPre.count(pre->s))
      p.add("tokenizer.ggml.pre: '" + pre->s + "' is not a pre-tokenizer llama.cpp knows");
  }
  if (const GgufValue* s = f.find("tokenizer.ggml.scores")) {
    if (s->type != GgufType::ARRAY || (s->elem != GgufType::FLOAT32 && s->elem != GgufType::INT32))
      p.add("tokenizer.ggml.scores: not an array of float32 or int32");
    else if (s->array_size() < n)
      p.add("tokenizer.ggml.scores: fewer entries than tokens");
  }
  if (const GgufValue* t =
          typed(f, p, "tokenizer.ggml.token_type", GgufType::ARRAY, false, GgufType::INT32))
    if (t->array_size() < n) p.add("tokenizer.ggml.token_type: fewer entries than tokens");
  for (const char* id : {"bos", "eos", "unknown", "padding"}) {
    const std::string key = std::string("tokenizer.ggml.") + id + "_token_id";
    if (const GgufValue* v = typed(f, p, key, GgufType::UINT32, false))
      if (v->u >= n) p.add(key + ": " + std::to_string(v->u) + " is not a token id");
  }
  for (const char* flag : {"add_bos_token", "add_eos_token", "add_space_prefix"})
    typed(f, p, std::string("tokenizer.ggml.") + flag, GgufType::BOOL, false);
}

// Hyperparameters: returns {E, H, H_kv, F, L, n_expert} as read, 0 where unreadable.
struct Hparams {
  uint64_t n_embd = 0, n_head = 0, n_head_kv = 0, n_ff = 0, n_layer = 0, n_expert = 0;
  // gemma4: each layer's head size and KV heads (its kind's), and the full layers' head size.
  std::vector<uint64_t> hd_layer, hkv_layer;
  uint64_t hd_full = 0;
  // qwen35 / qwen35moe: the Gated DeltaNet sizes, the full-attention interval and FFN widths.
  uint64_t d_conv = 0, d_inner = 0, d_state = 0, dt_rank = 0, n_group = 0, interval = 4;
  uint64_t n_ff_exp = 0, n_ff_shexp = 0;
  // nemotron_h: each layer's FFN width (0 for Mamba-2 and attention blocks); hkv_layer above
  // holds its KV heads; the head size (key_length, else n_embd / n_head).
  std::vector<uint64_t> ff_layer;
  uint64_t head_dim = 0, moe_latent = 0;
};

// An array of one value per layer (get_key_or_arr), or a problem naming the key.
std::vector<uint64_t> layer_values(const GgufFile& f, Problems& p, const std::string& key,
                                   uint64_t n_layer) {
  const GgufValue* v = f.find(key);
  if (!v || v->type != GgufType::ARRAY || v->array_size() != n_layer) {
    p.add(key + ": an array of one value per layer expected");
    return std::vector<uint64_t>(n_layer, 0);
  }
  std::vector<uint64_t> out(v->arr_u.begin(), v->arr_u.end());
  for (int64_t x : v->arr_i) out.push_back(uint64_t(x));
  return out;
}

// qwen35, qwen35moe and qwen3next (llama_model_qwen3next: qwen35moe's hparams without M-RoPE).
bool qwen35_family(const std::string& a) {
  return a == "qwen35" || a == "qwen35moe" || a == "qwen3next";
}

// gemma4 (llama_model_gemma4::load_arch_hparams): per-layer sliding flags and KV head counts as
// int32/bool/uint32 arrays of n_layer (get_key_or_arr), both head sizes (the sliding ones
// required, with equal value lengths), the window, the per-layer embedding width (required; the
// dense model's 0) and optional sliding RoPE base / soft-cap.
void check_gemma4(const GgufFile& f, Problems& p, const std::string& a, Hparams& h) {
  auto u32 = [&](const std::string& key, bool required) -> uint64_t {
    const GgufValue* v = typed(f, p, a + "." + key, GgufType::UINT32, required);
    return v ? v->u : 0;
  };
  auto layer_array = [&](const std::string& key) {
    return layer_values(f, p, a + "." + key, h.n_layer);
  };
  u32("attention.sliding_window", true);
  if (u32("embedding_length_per_layer_input", true) != 0)
    p.add(a + ".embedding_length_per_layer_input: per-layer embeddings are not in our files");
  const uint64_t hd_swa = u32("attention.key_length_swa", true);
  if (u32("attention.value_length_swa", true) != hd_swa)
    p.add(a + ".attention.value_length_swa differs from key_length_swa");
  h.hd_full =
      f.has(a + ".attention.key_length") ? u32("attention.key_length", false) : h.n_embd / h.n_head;
  if (f.has(a + ".attention.value_length") && u32("attention.value_length", false) != h.hd_full)
    p.add(a + ".attention.value_length differs from key_length");
  const std::vector<uint64_t> swa = layer_array("attention.sliding_window_pattern");
  h.hkv_layer = layer_array("attention.head_count_kv");
  for (uint64_t l = 0; l < h.n_layer; ++l) {
    h.hd_layer.push_back(swa[l] ? hd_swa : h.hd_full);
    if (h.hkv_layer[l] == 0 || h.n_head % h.hkv_layer[l])
      p.add(a + ".attention.head_count_kv: a layer's value does not divide head_count");
  }
  typed(f, p, a + ".rope.freq_base_swa", GgufType::FLOAT32, false);
  typed(f, p, a + ".final_logit_softcapping", GgufType::FLOAT32, false);
}

// nemotron_h (llama_model_nemotron_h::load_arch_hparams): the ssm.* sizes and the layer-norm
// epsilon are required; head_count_kv and feed_forward_length are per-layer arrays whose zeros
// mark the block kinds (recurrent iff both are 0, attention iff only feed_forward_length is).
void check_nemotron_h(const GgufFile& f, Problems& p, const std::string& a, Hparams& h) {
  auto u32 = [&](const std::string& key, bool required) -> uint64_t {
    const GgufValue* v = typed(f, p, a + "." + key, GgufType::UINT32, required);
    return v ? v->u : 0;
  };
  h.n_head = u32("attention.head_count", true);
  typed(f, p, a + ".attention.layer_norm_rms_epsilon", GgufType::FLOAT32, true);
  typed(f, p, a + ".attention.layer_norm_epsilon", GgufType::FLOAT32, true);
  h.d_conv = u32("ssm.conv_kernel", true);
  h.d_inner = u32("ssm.inner_size", true);
  h.d_state = u32("ssm.state_size", true);
  h.dt_rank = u32("ssm.time_step_rank", true);
  h.n_group = u32("ssm.group_count", true);
  if (h.n_head == 0 || h.dt_rank == 0 || h.n_group == 0 || h.d_inner % h.dt_rank ||
      h.d_inner % h.n_group)
    p.add(a + ": head_count, time_step_rank or group_count is 0 or does not divide");
  h.head_dim = f.has(a + ".attention.key_length") ? u32("attention.key_length", false)
               : h.n_head                         ? h.n_embd / h.n_head
                                                  : 0;
  h.hkv_layer = layer_values(f, p, a + ".attention.head_count_kv", h.n_layer);
  h.ff_layer = layer_values(f, p, a + ".feed_forward_length", h.n_layer);
  if (a == "nemotron_h") {
    if (f.has(a + ".expert_count")) p.add(a + ".expert_count: experts are nemotron_h_moe's");
    return;
  }
  // nemotron_h_moe: the expert count and use count; the widths, norm flag, scale and latent
  // width optional (the expert width defaulting to feed_forward_length / expert_used_count).
  h.n_expert = u32("expert_count", true);
  const uint64_t used = u32("expert_used_count", true);
  if (h.n_expert == 0 || used == 0 || used > h.n_expert)
    p.add(a + ".expert_used_count must be in [1, expert_count]");
  uint64_t ff = 0;
  for (uint64_t w : h.ff_layer) ff = std::max(ff, w);
  h.n_ff_exp = f.has(a + ".expert_feed_forward_length") ? u32("expert_feed_forward_length", false)
                                                        : (used ? ff / used : 0);
  h.n_ff_shexp = u32("expert_shared_feed_forward_length", false);
  u32("expert_shared_count", false);
  typed(f, p, a + ".expert_weights_norm", GgufType::BOOL, false);
  typed(f, p, a + ".expert_weights_scale", GgufType::FLOAT32, false);
  h.moe_latent = u32("moe_latent_size", false);
}

Hparams check_hparams(const GgufFile& f, Problems& p, const std::string& a) {
  Hparams h;
  const auto u32 = [&](const std::string& key, bool required) -> uint64_t {
    const GgufValue* v = typed(f, p, a + "." + key, GgufType::UINT32, required);
    return v ? v->u : 0;
  };
  u32("context_length", true);
  h.n_embd = u32("embedding_length", true);
  h.n_layer = u32("block_count", true);
  if (a == "nemotron_h" || a == "nemotron_h_moe") {
    check_nemotron_h(f, p, a, h);
    return h;
  }
  // Optional to llama.cpp's parser, but without them it builds a model with no heads or FFN.
  h.n_ff = u32("feed_forward_length", true);
  h.n_head = u32("attention.head_count", true);
  h.n_head_kv = a == "gemma4" || !f.has(a + ".attention.head_count_kv")
                    ? h.n_head
                    : u32("attention.head_count_kv", false);
  typed(f, p, a + ".attention.layer_norm_rms_epsilon", GgufType::FLOAT32, true);
  typed(f, p, a + ".rope.freq_base", GgufType::FLOAT32, false);
  u32("vocab_size", false);
  if (h.n_head == 0 || h.n_embd % h.n_head != 0) {
    p.add(a + ".attention.head_count does not divide embedding_length");
    return h;
  }
  // llama: "invalid n_rot"; qwen2/qwen3: GGML_ASSERT(n_embd_head == n_rot) in the graph.
  const uint64_t rot =
      f.has(a + ".rope.dimension_count") ? u32("rope.dimension_count", false) : h.n_embd / h.n_head;
  if (a == "gemma4") {  // its own head sizes; rope.dimension_count is the full layers'
    check_gemma4(f, p, a, h);
    return h;
  }
  // qwen35 rotates part of each head (its rope.dimension_count), in M-RoPE sections.
  if (rot != h.n_embd / h.n_head && !qwen35_family(a))
    p.add(a + ".rope.dimension_count is not the head size");
  h.n_expert = u32("expert_count", false);
  const uint64_t used = u32("expert_used_count", false);
  if (h.n_expert > 0 && (used == 0 || used > h.n_expert))
    p.add(a + ".expert_used_count must be in [1, expert_count]");
  if (h.n_expert == 0 && used > 0) p.add(a + ".expert_used_count without expert_count");
  // gemma3 (llama_model_gemma3::load_arch_hparams): an optional u32 window and period (read with
  // get_key_or_arr), an optional f32 sliding-layer RoPE base and final soft-cap.
  if (a == "gemma3") {
    u32("attention.sliding_window", false);
    u32("attention.sliding_window_pattern", false);
    typed(f, p, a + ".rope.freq_base_swa", GgufType::FLOAT32, false);
    typed(f, p, a + ".final_logit_softcapping", GgufType::FLOAT32, false);
  }
  // qwen35 / qwen35moe (llama_model_qwen35{,moe}::load_arch_hparams): the ssm.* sizes and the
  // M-RoPE sections are required, the interval (default 4) and expert widths optional.
  if (qwen35_family(a)) {
    h.d_conv = u32("ssm.conv_kernel", true);
    h.d_inner = u32("ssm.inner_size", true);
    h.d_state = u32("ssm.state_size", true);
    h.dt_rank = u32("ssm.time_step_rank", true);
    h.n_group = u32("ssm.group_count", true);
    if (f.has(a + ".full_attention_interval")) h.interval = u32("full_attention_interval", false);
    if (a != "qwen3next")  // qwen3next's RoPE is plain NeoX: it never reads the sections
      typed(f, p, a + ".rope.dimension_sections", GgufType::ARRAY, true, GgufType::INT32);
    if (a == "qwen35moe" || a == "qwen3next") {
      if (h.n_expert == 0) p.add(a + ".expert_count: " + a + " layers are mixtures of experts");
      h.n_ff_exp = f.has(a + ".expert_feed_forward_length")
                       ? u32("expert_feed_forward_length", false)
                       : (used ? h.n_ff / used : 0);
      h.n_ff_shexp = f.has(a + ".expert_shared_feed_forward_length")
                         ? u32("expert_shared_feed_forward_length", false)
                         : h.n_ff;
    }
  }
  // qwen2/qwen3 MoE are other llama.cpp architectures (qwen2moe, qwen3moe), with other tensors.
  if (h.n_expert > 0 && a != "llama" && a != "gpt-oss" && a != "qwen35moe" && a != "qwen3next")
    p.add(a + ": experts are only read for llama, gpt-oss, qwen35moe and qwen3next");
  // gpt-oss (llama_model_openai_moe::load_arch_hparams): the expert width and the window are
  // required, the period and sliding-layer RoPE base optional; the layers are all MoE.
  if (a == "gpt-oss") {
    u32("expert_feed_forward_length", true);
    u32("attention.sliding_window", true);
    u32("attention.sliding_window_pattern", false);
    typed(f, p, a + ".rope.freq_base_swa", GgufType::FLOAT32, false);
    if (h.n_expert == 0) p.add(a + ".expert_count: gpt-oss layers are mixtures of experts");
  }
  return h;
}

// One qwen35 / qwen35moe layer as llama_model_qwen35{,moe}::load_arch_tensors creates it: a Gated
// DeltaNet layer when (l + 1) % interval != 0 (attn_qkv and attn_gate are optional to it), else
// gated attention with attn_q twice the query width; then a dense or MoE + shared-expert FFN.
void qwen35_layer_tensors(const std::string& a, const Hparams& h, uint64_t l, const std::string& b,
                          std::map<std::string, std::vector<uint64_t>>& required,
                          std::map<std::string, std::vector<uint64_t>>& optional) {
  const uint64_t E = h.n_embd, hd = h.n_embd / h.n_head, Q = hd * h.n_head, KV = hd * h.n_head_kv;
  required[b + "attn_norm.weight"] = {E};
  required[b + "post_attention_norm.weight"] = {E};
  if (h.interval != 0 && (l + 1) % h.interval != 0) {
    const uint64_t V = h.d_state * h.dt_rank, conv = 2 * h.d_state * h.n_group + V;
    optional[b + "attn_qkv.weight"] = {E, conv};
    optional[b + "attn_gate.weight"] = {E, V};
    required[b + "ssm_conv1d.weight"] = {h.d_conv, conv};
    required[b + "ssm_dt.bias"] = {h.dt_rank};
    required[b + "ssm_a"] = {h.dt_rank};
    if (a == "qwen3next") {  // one ssm_ba; the legacy ssm_in is optional beside attn_qkv
      optional[b + "ssm_in.weight"] = {E, conv + V};
      required[b + "ssm_ba.weight"] = {E, 2 * h.dt_rank};
    } else {
      required[b + "ssm_beta.weight"] = {E, h.dt_rank};
      required[b + "ssm_alpha.weight"] = {E, h.dt_rank};
    }
    required[b + "ssm_norm.weight"] = {h.d_state};
    required[b + "ssm_out.weight"] = {V, E};
  } else {
    required[b + "attn_q.weight"] = {E, 2 * Q};
    required[b + "attn_k.weight"] = {E, KV};
    required[b + "attn_v.weight"] = {E, KV};
    required[b + "attn_output.weight"] = {Q, E};
    required[b + "attn_q_norm.weight"] = {hd};
    required[b + "attn_k_norm.weight"] = {hd};
  }
  if (h.n_expert == 0) {
    required[b + "ffn_gate.weight"] = {E, h.n_ff};
    required[b + "ffn_down.weight"] = {h.n_ff, E};
    required[b + "ffn_up.weight"] = {E, h.n_ff};
    return;
  }
  const uint64_t F = h.n_ff_exp, S = h.n_ff_shexp, NE = h.n_expert;
  required[b + "ffn_gate_inp.weight"] = {E, NE};
  optional[b + "ffn_gate_exps.weight"] = {E, F, NE};
  optional[b + "ffn_up_exps.weight"] = {E, F, NE};
  required[b + "ffn_down_exps.weight"] = {F, E, NE};
  required[b + "ffn_gate_inp_shexp.weight"] = {E};
  required[b + "ffn_gate_shexp.weight"] = {E, S};
  required[b + "ffn_up_shexp.weight"] = {E, S};
  required[b + "ffn_down_shexp.weight"] = {S, E};
}

// One nemotron_h block as llama_model_nemotron_h::load_arch_tensors creates it by kind: Mamba-2
// (ssm_in, the conv with an optional bias, dt bias, A and D as {1, heads}, the grouped norm
// {d_inner / groups, groups}, ssm_out), attention (Q, K, V, output, each bias optional) or an
// FFN block (up, down, biases optional).
void nemotron_h_layer_tensors(const Hparams& h, uint64_t l, const std::string& b,
                              std::map<std::string, std::vector<uint64_t>>& required,
                              std::map<std::string, std::vector<uint64_t>>& optional) {
  const uint64_t E = h.n_embd, hkv = h.hkv_layer.at(l), F = h.ff_layer.at(l);
  required[b + "attn_norm.weight"] = {E};
  if (hkv == 0 && F == 0) {
    const uint64_t Di = h.d_inner, G = h.n_group, H = h.dt_rank, conv = Di + 2 * G * h.d_state;
    required[b + "ssm_in.weight"] = {E, Di + conv + H};
    required[b + "ssm_conv1d.weight"] = {h.d_conv, conv};
    optional[b + "ssm_conv1d.bias"] = {conv};
    required[b + "ssm_dt.bias"] = {H};
    required[b + "ssm_a"] = {1, H};
    required[b + "ssm_d"] = {1, H};
    required[b + "ssm_norm.weight"] = {Di / G, G};
    required[b + "ssm_out.weight"] = {Di, E};
  } else if (F == 0) {
    const uint64_t Q = h.head_dim * h.n_head, KV = h.head_dim * hkv;
    required[b + "attn_q.weight"] = {E, Q};
    required[b + "attn_k.weight"] = {E, KV};
    required[b + "attn_v.weight"] = {E, KV};
    required[b + "attn_output.weight"] = {Q, E};
    optional[b + "attn_q.bias"] = {Q};
    optional[b + "attn_k.bias"] = {KV};
    optional[b + "attn_v.bias"] = {KV};
    optional[b + "attn_output.bias"] = {E};
  } else if (h.n_expert > 0) {  // nemotron_h_moe
    const uint64_t NE = h.n_expert, Fe = h.n_ff_exp, S = h.n_ff_shexp;
    const uint64_t Le = h.moe_latent ? h.moe_latent : E;
    required[b + "ffn_gate_inp.weight"] = {E, NE};
    required[b + "exp_probs_b.bias"] = {NE};
    optional[b + "ffn_latent_down.weight"] = {E, Le};
    optional[b + "ffn_latent_up.weight"] = {Le, E};
    required[b + "ffn_down_exps.weight"] = {Fe, Le, NE};
    required[b + "ffn_up_exps.weight"] = {Le, Fe, NE};
    required[b + "ffn_down_shexp.weight"] = {S, E};
    required[b + "ffn_up_shexp.weight"] = {E, S};
  } else {
    required[b + "ffn_up.weight"] = {E, F};
    required[b + "ffn_down.weight"] = {F, E};
    optional[b + "ffn_up.bias"] = {F};
    optional[b + "ffn_down.bias"] = {E};
  }
}

// The tensors llama.cpp's loader creates for this file, name -> dims (ggml order); optional ones
// (loaded when present) map to `optional`.
void expected_tensors(const std::string& a, const Hparams& h, uint64_t n_vocab,
                      std::map<std::string, std::vector<uint64_t>>& required,
                      std::map<std::string, std::vector<uint64_t>>& optional) {
  const uint64_t E = h.n_embd, hd = h.n_head ? h.n_embd / h.n_head : 0, Q = hd * h.n_head,
                 KV = hd * h.n_head_kv, F = h.n_ff, NE = h.n_expert;
  required["token_embd.weight"] = {E, n_vocab};
  required["output_norm.weight"] = {E};
  optional["output.weight"] = {E, n_vocab};
  if (a == "gpt-oss") required["output.weight"] = {E, n_vocab};
  if (a == "gemma4") required["rope_freqs.weight"] = {h.hd_full / 2};
  for (uint64_t l = 0; l < h.n_layer; ++l) {
    const std::string b = "blk." + std::to_string(l) + ".";
    if (a == "gemma4") {  // llama_model_gemma4::load_arch_tensors, dense layers
      const uint64_t d = h.hd_layer.at(l), q = d * h.n_head, kv = d * h.hkv_layer.at(l);
      for (auto& [n, dims] :
           std::map<std::string, std::vector<uint64_t>>{{"attn_norm.weight", {E}},
                                                        {"attn_q.weight", {E, q}},
                                                        {"attn_k.weight", {E, kv}},
                                                        {"attn_output.weight", {q, E}},
                                                        {"attn_q_norm.weight", {d}},
                                                        {"attn_k_norm.weight", {d}},
                                                        {"post_attention_norm.weight", {E}},
                                                        {"ffn_norm.weight", {E}},
                                                        {"ffn_gate.weight", {E, F}},
                                                        {"ffn_up.weight", {E, F}},
                                                        {"ffn_down.weight", {F, E}},
                                                        {"post_ffw_norm.weight", {E}}})
        required[b + n] = dims;
      optional[b + "attn_v.weight"] = {E, kv};
      optional[b + "layer_output_scale.weight"] = {1};
      continue;
    }
    if (qwen35_family(a)) {
      qwen35_layer_tensors(a, h, l, b, required, optional);
      continue;
    }
    if (a == "nemotron_h" || a == "nemotron_h_moe") {
      nemotron_h_layer_tensors(h, l, b, required, optional);
      continue;
    }
    if (a == "gpt-oss") {  // llama_model_openai_moe::load_arch_tensors
      for (auto& [n, d] :
           std::map<std::string, std::vector<uint64_t>>{{"attn_norm.weight", {E}},
                                                        {"post_attention_norm.weight", {E}},
                                                        {"attn_q.weight", {E, Q}},
                                                        {"attn_k.weight", {E, KV}},
                                                        {"attn_v.weight", {E, KV}},
                                                        {"attn_output.weight", {Q, E}},
                                                        {"attn_output.bias", {E}},
                                                        {"attn_sinks.weight", {h.n_head}},
                                                        {"ffn_gate_inp.weight", {E, NE}},
                                                        {"ffn_gate_inp.bias", {NE}},
                                                        {"ffn_gate_exps.weight", {E, F, NE}},
                                                        {"ffn_up_exps.weight", {E, F, NE}},
                                                        {"ffn_down_exps.weight", {F, E, NE}},
                                                        {"ffn_gate_exps.bias", {F, NE}},
                                                        {"ffn_up_exps.bias", {F, NE}},
                                                        {"ffn_down_exps.bias", {E, NE}}})
        required[b + n] = d;
      optional[b + "attn_q.bias"] = {Q};
      optional[b + "attn_k.bias"] = {KV};
      optional[b + "attn_v.bias"] = {KV};
      continue;
    }
    required[b + "attn_norm.weight"] = {E};
    required[b + "attn_q.weight"] = {E, Q};
    required[b + "attn_k.weight"] = {E, KV};
    required[b + "attn_v.weight"] = {E, KV};
    optional[b + "attn_q.bias"] = {Q};
    optional[b + "attn_k.bias"] = {KV};
    optional[b + "attn_v.bias"] = {KV};
    required[b + "attn_output.weight"] = {Q, E};
    required[b + "ffn_norm.weight"] = {E};
    if (a == "qwen3" || a == "gemma3") {
      required[b + "attn_q_norm.weight"] = {hd};
      required[b + "attn_k_norm.weight"] = {hd};
    }
    if (a == "gemma3") {  // Gemma's norms on the attention and FFN outputs
      required[b + "post_attention_norm.weight"] = {E};
      required[b + "post_ffw_norm.weight"] = {E};
    }
    if (NE == 0) {
      required[b + "ffn_gate.weight"] = {E, F};
      required[b + "ffn_down.weight"] = {F, E};
      required[b + "ffn_up.weight"] = {E, F};
    } else {
      required[b + "ffn_gate_inp.weight"] = {E, NE};
      optional[b + "ffn_gate_exps.weight"] = {E, F, NE};
      required[b + "ffn_down_exps.weight"] = {F, E, NE};
      required[b + "ffn_up_exps.weight"] = {E, F, NE};
    }
  }
}

// llama.cpp also refuses a file with tensors it did not create ("wrong number of tensors").
void check_tensors(const GgufFile& f, Problems& p, const std::string& a, const Hparams& h) {
  const GgufValue* tokens = f.find("tokenizer.ggml.tokens");
  std::map<std::string, std::vector<uint64_t>> required, optional;
  expected_tensors(a, h, tokens ? tokens->array_size() : 0, required, optional);
  std::set<std::string> seen;
  for (const auto& t : f.tensors()) {
    seen.insert(t.name);
    auto it = required.find(t.name);
    if (it == required.end()) it = optional.find(t.name);
    if (it == optional.end()) {
      p.add("tensor " + t.name + ": llama.cpp does not load it");
      continue;
    }
    if (t.dims != it->second) p.add("tensor " + t.name + ": dims differ from llama.cpp's");
  }
  for (const auto& [name, dims] : required)
    if (!seen.count(name)) p.add("tensor " + name + ": missing");
}

// Every matrix in one type, and general.file_type naming it in llama.cpp's numbering. In a k-quant
// file, matrices whose rows are not whole 256-element super-blocks are q8_0 instead (llama.cpp's
// quantizer falls back the same way; the file type still names the k-quant).
void check_file_type(const GgufFile& f, Problems& p) {
  std::set<DType> matrix_types, kquant_fallbacks;
  // gpt-oss files keep their experts in MXFP4 whatever the file type names (as OpenAI ships them
  // and llama.cpp's converter writes them).
  const bool gpt_oss = f.get_string_opt("general.architecture").value_or("") == "gpt-oss";
  for (const auto& t : f.tensors())
    if (gpt_oss && t.type == DType::MXFP4 && t.name.find("_exps.weight") != std::string::npos)
      continue;
    // The short conv kernels stay f32 (llama.cpp's quantizer leaves ssm_conv1d alone), and so do
    // nemotron_h's 2-D ssm_a, ssm_d (no "weight" suffix) and grouped ssm_norm ("_norm.weight").
    else if (t.dims.size() >= 2 && t.name.find("_exps.bias") == std::string::npos &&
             t.name.find("ssm_conv1d") == std::string::npos &&
             t.name.find("_norm.weight") == std::string::npos &&
             t.name.rfind("weight") == t.name.size() - 6)
      (t.type == DType::Q8_0 && t.dims[0] % 256 ? kquant_fallbacks : matrix_types).insert(t.type);
  const GgufValue* named = f.find("general.file_type");
  bool kquant_file = false;
  for (const auto& [dt, ft] : ftype_table())
    if (named && named->u == ft && dtype_block_elems(dt) == 256) {
      kquant_file = true;
      if (!kquant_fallbacks.empty()) matrix_types.insert(dt);  // all may have fallen back
    }
  if (!kquant_file) matrix_types.insert(kquant_fallbacks.begin(), kquant_fallbacks.end());
  if (matrix_types.size() != 1) {
    p.add("matrices are not all of one type");
    return;
  }
  const GgufValue* ft = typed(f, p, "general.file_type", GgufType::UINT32, true);
  const DType t = *matrix_types.begin();
  if (ft && ft->u != llamacpp_ftype(t))
    p.add("general.file_type = " + std::to_string(ft->u) + " but llama.cpp numbers " +
          std::string(dtype_name(t)) + " files " + std::to_string(llamacpp_ftype(t)));
}

// Metadata rules only: what a file without tensors can be checked for.
::testing::AssertionResult llamacpp_metadata_ok(const GgufFile& f, Hparams* out = nullptr) {
  Problems p;
  const GgufValue* arch = typed(f, p, "general.architecture", GgufType::STRING, true);
  typed(f, p, "general.alignment", GgufType::UINT32, false);
  typed(f, p, "general.file_type", GgufType::UINT32, false);
  check_tokenizer(f, p);
  if (arch && arch->s != "llama" && arch->s != "qwen2" && arch->s != "qwen3" &&
      arch->s != "gemma3" && arch->s != "gemma4" && arch->s != "gpt-oss" &&
      !qwen35_family(arch->s) && arch->s != "nemotron_h" && arch->s != "nemotron_h_moe")
    p.add("general.architecture: '" + arch->s + "' is not one of ours");
  else if (arch && out)
    *out = check_hparams(f, p, arch->s);
  else if (arch)
    check_hparams(f, p, arch->s);
  return p.result();
}

::testing::AssertionResult llamacpp_loadable(const GgufFile& f) {
  Hparams h;
  const auto meta = llamacpp_metadata_ok(f, &h);
  if (!meta) return meta;
  Problems p;
  check_tensors(f, p, f.get_string("general.architecture"), h);
  check_file_type(f, p);
  return p.result();
}

std::string label(const std::string& family, const std::string& role, DType t) {
  return family + "/" + role + " " + std::string(dtype_name(t));
}

TEST(LlamaCppCompat, LlamaFileTypeUsesLlamaCppNumberingForEveryDtype) {
  for (DType t : kAllDtypes) EXPECT_EQ(llama_file_type(t), llamacpp_ftype(t)) << dtype_name(t);
}

// Metadata only (no weights), so the 245M-parameter small-moe target costs nothing to check.
TEST(LlamaCppCompat, EverySyntheticFamilyMemberAndDtypeHasTheMetadataLlamaCppRequires) {
  test::TempDir dir;
  for (const auto& fam : synthetic_families())
    for (const auto& m : fam.members)
      for (DType t : kAllDtypes) {
        GgufWriter w;
        set_synthetic_metadata(w, m, fam.name, 0, t);
        const std::string path = dir.file("meta.gguf");
        w.write(path);
        const GgufFile f = GgufFile::open(path);
        EXPECT_TRUE(llamacpp_metadata_ok(f)) << label(fam.name, m.role, t);
        EXPECT_EQ(f.get_uint("general.file_type"), llamacpp_ftype(t)) << label(fam.name, m.role, t);
      }
}

// Whole files of every tiny family (llama, qwen2, qwen3, MoE, gemma3, gemma4, gpt-oss, qwen35,
// qwen35moe, nemotron_h, nemotron_h_moe, qwen3next) in every dtype; the
// larger families differ from these only in their sizes, which the metadata test above covers.
TEST(LlamaCppCompat, TinyFamilyFilesInEveryDtypeHaveExactlyTheTensorsLlamaCppLoads) {
  test::TempDir dir;
  for (const char* family : {"tiny", "tiny-qwen2", "tiny-qwen3", "tiny-moe", "tiny-gemma3",
                             "tiny-gemma4", "tiny-gpt-oss", "tiny-qwen35", "tiny-qwen35-moe",
                             "tiny-nemotron-h", "tiny-nemotron-h-moe", "tiny-qwen3next"})
    for (DType t : kAllDtypes) {
      const std::string out =
          (dir.path() / (std::string(family) + "-" + std::string(dtype_name(t)))).string();
      for (const std::string& path : make_synthetic_family(family, out, 0, t))
        EXPECT_TRUE(llamacpp_loadable(GgufFile::open(path))) << path;
    }
}

// `models make --vocab`: tiny-qwen35's draft written with the Qwen3.5 vocabulary (llama.cpp's
// vocab-only file, pre-tokenizer qwen35) holds that vocabulary's tokenizer, one embedding and
// output row per token, the tensors llama.cpp loads, a tokenizer (read back from the file) that
// encodes as the vocabulary's does, and a model that runs. (By hand, 2026-11-28: the f32 target and
// draft made this way agree with libllama 3f545bec to 5.6e-7 and 4.5e-7 over 1,500 tokens + 8
// greedy steps.)
TEST(LlamaCppCompat, FamilyWrittenWithTheQwen35VocabularyKeepsItAndLoads) {
  const auto vocab_path = test::shared_data("llama.cpp-vocab/ggml-vocab-qwen35.gguf");
  if (!vocab_path)
    GTEST_SKIP() << test::missing_shared_data("llama.cpp-vocab/ggml-vocab-qwen35.gguf");
  const TokenizerSpec vocab = TokenizerSpec::from_gguf(GgufFile::open(vocab_path->string()));
  test::TempDir dir;
  const std::string path = dir.file("draft.gguf");
  write_synthetic_model(find_synthetic_family("tiny-qwen35").members.at(1), "tiny-qwen35", 2,
                        DType::Q8_0, path, &vocab);
  const GgufFile f = GgufFile::open(path);
  EXPECT_TRUE(llamacpp_loadable(f));
  const TokenizerSpec got = TokenizerSpec::from_gguf(f);
  EXPECT_EQ(got.tokens, vocab.tokens);
  EXPECT_EQ(got.merges, vocab.merges);
  EXPECT_EQ(got.pre, "qwen35");
  EXPECT_EQ(got.eos, vocab.eos);
  const auto m = Model::load(path);
  EXPECT_EQ(size_t(m->config().n_vocab), vocab.tokens.size());
  const std::string text = "Hello \u0e17\u0e35\u0e48\u0e19\u0e35\u0e48, 42!";
  const std::vector<int32_t> ids = Tokenizer::create(got)->encode(text, false, false);
  EXPECT_EQ(ids, Tokenizer::create(vocab)->encode(text, false, false));
  std::vector<int32_t> pos(ids.size());
  for (size_t i = 0; i < pos.size(); ++i) pos[i] = int32_t(i);
  KVCache cache = m->make_cache();
  const int32_t last = int32_t(ids.size()) - 1;
  const std::vector<float> logits = m->forward(ids, pos, cache, {&last, 1});
  ASSERT_EQ(logits.size(), vocab.tokens.size());
  for (float v : logits) ASSERT_TRUE(std::isfinite(v));
}

// llama.cpp's own converter writes no general.file_type for this model (it guesses ALL_F32 from
// the tensors); ours says 0, which llamacpp_loadable checks against the f32 matrices.
TEST(LlamaCppCompat, ImportedStories260KHasWhatLlamaCppRequires) {
  const auto bin = test::shared_data("stories260K/stories260K.bin");
  const auto tok = test::shared_data("stories260K/tok512.bin");
  if (!bin || !tok)
    GTEST_SKIP() << test::missing_shared_data("stories260K/{stories260K.bin,tok512.bin}");
  test::TempDir dir;
  import_llama2c(bin->string(), tok->string(), dir.file("stories.gguf"));
  EXPECT_TRUE(llamacpp_loadable(GgufFile::open(dir.file("stories.gguf"))));
}

// The trained `capable` family ships as files (models/capable/, written by the training tool's own
// GGUF writer, models/training/gguf_export.py): every one of them must load in llama.cpp too.
TEST(LlamaCppCompat, ShippedCapableFamilyFilesHaveExactlyTheTensorsLlamaCppLoads) {
  const std::filesystem::path dir =
      std::filesystem::path(__FILE__).parent_path().parent_path().parent_path() / "models" /
      "capable";
  std::vector<std::string> files;
  if (std::filesystem::is_directory(dir))
    for (const auto& e : std::filesystem::directory_iterator(dir))
      if (e.path().extension() == ".gguf") files.push_back(e.path().string());
  if (files.empty()) GTEST_SKIP() << "no GGUF files in " << dir;
  for (const std::string& path : files) {
    const GgufFile f = GgufFile::open(path);
    EXPECT_TRUE(llamacpp_metadata_ok(f)) << path;
    EXPECT_TRUE(llamacpp_loadable(f)) << path;
  }
}

// --- The checker itself fails on files that break the rules it states. ---

// A copy of the tiny target in dtype `t`, with `edit` applied to its key/values before writing.
template <class Edit>
GgufFile tiny_target_variant(const test::TempDir& dir, DType t, Edit edit) {
  const SyntheticMemberSpec& m = find_synthetic_family("tiny").members.at(0);
  write_synthetic_model(m, "tiny", 0, t, dir.file("original.gguf"));
  const GgufFile good = GgufFile::open(dir.file("original.gguf"));
  std::vector<std::pair<std::string, GgufValue>> kv = good.metadata();
  edit(kv);
  GgufWriter w;
  for (auto& [k, v] : kv) w.set(k, v);
  for (const auto& ti : good.tensors())
    w.add_tensor(ti.name, ti.dims, ti.type, good.tensor_data(ti), ti.n_bytes);
  w.write(dir.file("variant.gguf"));
  return GgufFile::open(dir.file("variant.gguf"));
}

void drop(std::vector<std::pair<std::string, GgufValue>>& kv, const std::string& key) {
  std::erase_if(kv, [&](const auto& e) { return e.first == key; });
}
void replace(std::vector<std::pair<std::string, GgufValue>>& kv, const std::string& key,
             GgufValue v) {
  for (auto& e : kv)
    if (e.first == key) e.second = v;
}

TEST(LlamaCppCompatChecker, UnchangedCopyPasses) {
  test::TempDir dir;
  EXPECT_TRUE(llamacpp_loadable(tiny_target_variant(dir, DType::Q8_0, [](auto&) {})));
}

TEST(LlamaCppCompatChecker, RejectsAByteLevelVocabularyWithoutMerges) {
  test::TempDir dir;
  const auto r = llamacpp_loadable(
      tiny_target_variant(dir, DType::F32, [](auto& kv) { drop(kv, "tokenizer.ggml.merges"); }));
  EXPECT_FALSE(r);
  EXPECT_NE(std::string(r.message()).find("tokenizer.ggml.merges: missing"), std::string::npos)
      << r.message();
}

TEST(LlamaCppCompatChecker, RejectsAGgmlTypeIdAsFileType) {
  test::TempDir dir;
  // The old mislabel: q8_0's ggml tensor type (8) instead of LLAMA_FTYPE_MOSTLY_Q8_0 (7).
  const auto r = llamacpp_loadable(tiny_target_variant(
      dir, DType::Q8_0, [](auto& kv) { replace(kv, "general.file_type", GgufValue::of_u32(8)); }));
  EXPECT_FALSE(r);
  EXPECT_NE(std::string(r.message()).find("general.file_type = 8"), std::string::npos)
      << r.message();
}

TEST(LlamaCppCompatChecker, RejectsAWronglyTypedKeyAndAnUnknownPreTokenizer) {
  test::TempDir dir;
  const auto r = llamacpp_loadable(tiny_target_variant(dir, DType::F32, [](auto& kv) {
    replace(kv, "llama.block_count", GgufValue::of_u64(4));
    replace(kv, "tokenizer.ggml.pre", GgufValue::of_string("no-such-pre"));
  }));
  EXPECT_FALSE(r);
  const std::string msg = r.message();
  EXPECT_NE(msg.find("llama.block_count: type uint64"), std::string::npos) << msg;
  EXPECT_NE(msg.find("'no-such-pre'"), std::string::npos) << msg;
}

TEST(LlamaCppCompatChecker, RejectsATensorLlamaCppWouldNotLoad) {
  test::TempDir dir;
  // A tensor name no llama.cpp loader creates: llama.cpp counts tensors and refuses the extra.
  const GgufFile good = tiny_target_variant(dir, DType::F32, [](auto&) {});
  GgufWriter w;
  for (const auto& [k, v] : good.metadata()) w.set(k, v);
  for (const auto& ti : good.tensors())
    w.add_tensor(ti.name, ti.dims, ti.type, good.tensor_data(ti), ti.n_bytes);
  const std::vector<float> extra(8, 0.f);
  w.add_tensor("blk.0.attn_extra.weight", {8}, DType::F32, extra.data(), extra.size() * 4);
  w.write(dir.file("extra.gguf"));
  const auto r = llamacpp_loadable(GgufFile::open(dir.file("extra.gguf")));
  EXPECT_FALSE(r);
  EXPECT_NE(std::string(r.message()).find("blk.0.attn_extra.weight"), std::string::npos)
      << r.message();
}

}  // namespace
}  // namespace accel
