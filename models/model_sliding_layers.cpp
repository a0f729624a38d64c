// Model's loaders of the sliding-window architectures' layers: gpt-oss (biases, sinks, the MoE
// FFN unit) and gemma4 (per-kind head sizes, K as V). Tensor names and shapes as llama.cpp
// 3f545bec loads them; the forward pass that runs them is model.cpp's.
#include "models/model.h"

#include <cmath>

#include "models/model_loading.h"

namespace accel {

using namespace model_loading;

// One gpt-oss layer (llama_model_openai_moe::load_arch_tensors): Q/K/V with biases, the output
// projection with its bias, the sinks, post_attention_norm (the FFN's input norm) and the experts
// as MoeFfnOai packs them from the file's 3-D tensors, every bias f32.
void Model::load_gpt_oss_layer(const std::string& p, LayerWeights& L) {
  const GgufFile& f = file_;
  const ModelConfig& c = cfg_;
  const uint64_t E = uint64_t(c.n_embd), Q = uint64_t(c.q_dim()), KV = uint64_t(c.kv_dim());
  const uint64_t F = uint64_t(c.n_ff_expert), NE = uint64_t(c.n_expert);
  L.ffn_norm = load_vector(f, p + "post_attention_norm.weight", E);
  L.wqkv =
      pack_rows(f,
                {&expect(f, p + "attn_q.weight", {E, Q}), &expect(f, p + "attn_k.weight", {E, KV}),
                 &expect(f, p + "attn_v.weight", {E, KV})},
                E);
  for (auto [n, d] : {std::pair{"attn_q.bias", Q}, {"attn_k.bias", KV}, {"attn_v.bias", KV}}) {
    auto b = load_vector(f, p + n, d);
    L.qkv_bias.insert(L.qkv_bias.end(), b.begin(), b.end());
  }
  L.wo = pack_rows(f, {&expect(f, p + "attn_output.weight", {Q, E})}, Q);
  L.wo_bias = load_vector(f, p + "attn_output.bias", E);
  L.sinks = load_vector(f, p + "attn_sinks.weight", uint64_t(c.n_head));
  // Biases must be f32 (MoeOaiSource reads them as floats): every gpt-oss file stores them so.
  auto f32 = [&](const std::string& name, std::vector<uint64_t> dims) {
    const GgufTensorInfo& t = expect(f, name, dims);
    if (t.type != DType::F32)
      throw GgufError("[model] " + f.path() + ": tensor '" + name + "' has type " +
                      std::string(dtype_name(t.type)) + ", expected f32");
    return reinterpret_cast<const float*>(f.tensor_data(t));
  };
  const GgufTensorInfo& router = expect(f, p + "ffn_gate_inp.weight", {E, NE});
  const GgufTensorInfo& gate = expect(f, p + "ffn_gate_exps.weight", {E, F, NE});
  const GgufTensorInfo& up = expect(f, p + "ffn_up_exps.weight", {E, F, NE});
  const GgufTensorInfo& down = expect(f, p + "ffn_down_exps.weight", {F, E, NE});
  if (up.type != gate.type || down.type != gate.type)
    throw GgufError("[model] " + f.path() + ": tensor '" + p +
                    "ffn_{gate,up,down}_exps.weight' have different types (one type expected)");
  MoeOaiSource src;
  src.n_embd = c.n_embd;
  src.n_ff = c.n_ff_expert;
  src.n_expert = c.n_expert;
  src.n_expert_used = c.n_expert_used;
  src.router_type = router.type;
  src.router = f.tensor_data(router);
  src.router_bias = f32(p + "ffn_gate_inp.bias", {NE});
  src.expert_type = gate.type;
  src.gate = f.tensor_data(gate);
  src.up = f.tensor_data(up);
  src.down = f.tensor_data(down);
  src.gate_bias = f32(p + "ffn_gate_exps.bias", {F, NE});
  src.up_bias = f32(p + "ffn_up_exps.bias", {F, NE});
  src.down_bias = f32(p + "ffn_down_exps.bias", {E, NE});
  try {
    L.moe_oai = MoeFfnOai::pack(src);
  } catch (const std::invalid_argument& e) {
    throw GgufError("[model] " + f.path() + ": " + p + "ffn_*: " + e.what());
  }
  for (const GgufTensorInfo* t : {&router, &gate, &up, &down}) f.release_resident_pages(*t);
}

// One gemma4 layer (llama_model_gemma4::load_arch_tensors, dense layers): Q/K/V of the layer
// kind's head size and KV heads; a layer without attn_v (the 31B's full layers) takes V from K's
// projection, so K's rows are packed twice (V's GEMM output is then exactly K's); Q/K norms of the
// head size; Gemma's post-norms; the GELU FFN; layer_output_scale when present.
void Model::load_gemma4_layer(int il, LayerWeights& L) {
  const GgufFile& f = file_;
  const ModelConfig& c = cfg_;
  const std::string p = "blk." + std::to_string(il) + ".";
  const uint64_t E = uint64_t(c.n_embd), Q = L.q_dim, KV = L.kv_dim, F = uint64_t(c.n_ff);
  const GgufTensorInfo& k = expect(f, p + "attn_k.weight", {E, KV});
  const GgufTensorInfo& v =
      f.find_tensor(p + "attn_v.weight") ? expect(f, p + "attn_v.weight", {E, KV}) : k;
  L.wqkv = pack_rows(f, {&expect(f, p + "attn_q.weight", {E, Q}), &k, &v}, E);
  L.v_norm = true;
  L.wo = pack_rows(f, {&expect(f, p + "attn_output.weight", {Q, E})}, Q);
  L.q_norm = load_vector(f, p + "attn_q_norm.weight", uint64_t(L.head_dim));
  L.k_norm = load_vector(f, p + "attn_k_norm.weight", uint64_t(L.head_dim));
  L.post_attn_norm = load_vector(f, p + "post_attention_norm.weight", E);
  L.ffn_norm = load_vector(f, p + "ffn_norm.weight", E);
  L.w_gate_up = pack_rows(
      f, {&expect(f, p + "ffn_gate.weight", {E, F}), &expect(f, p + "ffn_up.weight", {E, F})}, E);
  L.w_down = pack_rows(f, {&expect(f, p + "ffn_down.weight", {F, E})}, F);
  L.post_ffn_norm = load_vector(f, p + "post_ffw_norm.weight", E);
  if (f.find_tensor(p + "layer_output_scale.weight")) {
    L.out_scale = load_vector(f, p + "layer_output_scale.weight", 1)[0];
    if (!std::isfinite(L.out_scale))
      throw GgufError("[model] " + f.path() + ": tensor '" + p +
                      "layer_output_scale.weight' is not finite");
  }
}

}  // namespace accel
