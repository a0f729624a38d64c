// Model's qwen35 (Qwen3.5) members: loading its gated-attention and Gated DeltaNet layers, the
// hybrid cache, and the hybrid forward pass (llama.cpp 3f545bec src/models/qwen35.cpp), which
// qwen35moe and qwen3next (src/models/qwen3next.cpp) share. Shares the loader helpers of
// model_loading.h; the other architectures' forward pass is in model.cpp.
#include "models/model.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>

#include "kernels/attention.h"
#include "kernels/causal_conv1d.h"
#include "kernels/elementwise.h"
#include "kernels/gated_delta_rule.h"
#include "kernels/gated_norm.h"
#include "kernels/quant.h"
#include "kernels/threading.h"
#include "models/forward_scratch.h"
#include "models/model_loading.h"
#include "models/qwen3next_layout.h"
#include "models/rope_ggml.h"

namespace accel {

using namespace model_loading;

// ---- qwen35: gated attention and Gated DeltaNet layers (llama.cpp 3f545bec src/models/qwen35.cpp)

namespace {

// Which key head a value head reads: qwen35 tiles the key heads over the value heads, qwen3next
// repeats each key head over r = n_v / n_k consecutive value heads (its "repeat interleave").
DeltaHeadMap delta_head_map(const ModelConfig& c) {
  return c.arch == Arch::Qwen3Next ? DeltaHeadMap::Interleaved : DeltaHeadMap::Tiled;
}

// The Gated DeltaNet in-projection's rows in the engine's order [qkv | z | beta | alpha], as views
// of the file's tensors. qwen35(moe): attn_qkv, attn_gate, ssm_beta, ssm_alpha. qwen3next: attn_qkv
// and attn_gate, or the legacy ssm_in re-laid from its per-key-head groups (refused when the file
// has both forms or neither), then ssm_ba's per-group beta and alpha rows in value-head order.
std::vector<GgufTensorInfo> delta_in_rows(const GgufFile& f, const ModelConfig& c,
                                          const std::string& p) {
  const DeltaLayerDims d = delta_layer_dims(c);
  const uint64_t E = uint64_t(c.n_embd), conv = d.conv_channels(), V = d.value_dim(),
                 H = uint64_t(d.n_v_heads);
  std::vector<GgufTensorInfo> rows;
  const bool legacy = f.find_tensor(p + "ssm_in.weight") != nullptr;
  const bool split = f.find_tensor(p + "attn_qkv.weight") || f.find_tensor(p + "attn_gate.weight");
  if (c.arch == Arch::Qwen3Next && legacy == split)
    throw GgufError("[model] " + f.path() + ": tensor '" + p + "ssm_in.weight': " +
                    (legacy ? "present together with '" + p +
                                  "attn_qkv.weight' / 'attn_gate.weight' (one in-projection form)"
                            : "missing, and so is '" + p + "attn_qkv.weight'"));
  if (c.arch == Arch::Qwen3Next && legacy) {
    rows = row_views(expect(f, p + "ssm_in.weight", {E, conv + V}), qwen3next_qkvz_rows(d));
  } else {
    rows.push_back(expect(f, p + "attn_qkv.weight", {E, conv}));
    rows.push_back(expect(f, p + "attn_gate.weight", {E, V}));
  }
  if (c.arch == Arch::Qwen3Next) {
    for (const GgufTensorInfo& v :
         row_views(expect(f, p + "ssm_ba.weight", {E, 2 * H}), qwen3next_ba_rows(d)))
      rows.push_back(v);
  } else {
    rows.push_back(expect(f, p + "ssm_beta.weight", {E, H}));
    rows.push_back(expect(f, p + "ssm_alpha.weight", {E, H}));
  }
  return rows;
}

}  // namespace

// One qwen35 layer. The layer-kind markers (attention.recurrent_layers or full_attention_interval)
// must agree with the tensors the file has: a layer marked recurrent carries ssm_* tensors and no
// attn_q, an attention layer the reverse; a disagreement is refused naming the key.
void Model::load_qwen35_layer(int il, const std::string& p, LayerWeights& L) {
  const GgufFile& f = file_;
  const ModelConfig& c = cfg_;
  const uint64_t E = uint64_t(c.n_embd), Q = uint64_t(c.q_dim()), KV = uint64_t(c.kv_dim());
  const bool rec = is_recurrent_layer(c, il);
  const bool has_q = f.find_tensor(p + "attn_q.weight") != nullptr;
  const bool has_ssm = f.find_tensor(p + "ssm_a") != nullptr;
  if (rec == has_q || rec != has_ssm) {
    const std::string rl = c.arch_name + ".attention.recurrent_layers";
    const std::string key = f.has(rl) ? rl : c.arch_name + ".full_attention_interval";
    throw GgufError("[model] " + f.path() + ": " + key + ": marks layer " + std::to_string(il) +
                    (rec ? " recurrent" : " full-attention") + " but the file has " +
                    (has_q ? "'" + p + "attn_q.weight'" : "no '" + p + "attn_q.weight'") +
                    (has_ssm ? " and '" + p + "ssm_a'" : " and no '" + p + "ssm_a'"));
  }
  L.ffn_norm = load_vector(f, p + "post_attention_norm.weight", E);
  if (!rec) {
    L.wqkv = pack_rows(
        f,
        {&expect(f, p + "attn_q.weight", {E, 2 * Q}), &expect(f, p + "attn_k.weight", {E, KV}),
         &expect(f, p + "attn_v.weight", {E, KV})},
        E);
    L.wo = pack_rows(f, {&expect(f, p + "attn_output.weight", {Q, E})}, Q);
    L.q_norm = load_vector(f, p + "attn_q_norm.weight", uint64_t(c.head_dim));
    L.k_norm = load_vector(f, p + "attn_k_norm.weight", uint64_t(c.head_dim));
  } else {
    const DeltaLayerDims d = delta_layer_dims(c);
    const uint64_t conv = d.conv_channels(), V = d.value_dim(), H = uint64_t(d.n_v_heads);
    const std::vector<GgufTensorInfo> in_rows = delta_in_rows(f, c, p);
    std::vector<const GgufTensorInfo*> parts;
    for (const GgufTensorInfo& r : in_rows) parts.push_back(&r);
    L.w_delta_in = pack_rows(f, parts, E);
    const GgufTensorInfo& cw = expect(f, p + "ssm_conv1d.weight", {uint64_t(d.d_conv), conv});
    if (dtype_block_elems(cw.type) != 1)
      throw GgufError("[model] " + f.path() + ": tensor '" + p + "ssm_conv1d.weight' has type " +
                      std::string(dtype_name(cw.type)) + ", expected f32, f16 or bf16");
    L.ssm_conv1d.resize(conv * uint64_t(d.d_conv));
    dequantize_row(cw.type, f.tensor_data(cw), L.ssm_conv1d.data(), L.ssm_conv1d.size());
    L.ssm_dt_bias = load_vector(f, p + "ssm_dt.bias", H);
    L.ssm_a = load_vector(f, p + "ssm_a", H);
    L.ssm_norm = load_vector(f, p + "ssm_norm.weight", uint64_t(d.head_v_dim));
    L.ssm_out = pack_rows(f, {&expect(f, p + "ssm_out.weight", {V, E})}, V);
  }
  if (c.n_expert > 0) {
    // qwen35moe and qwen3next: routed experts, and the shared expert in w_gate_up / w_down (free in
    // MoE layers) with its gate row.
    load_routed_experts(f, p, c, L);
    const uint64_t S = uint64_t(c.n_ff_shexp);
    L.w_gate_up = pack_rows(f,
                            {&expect(f, p + "ffn_gate_shexp.weight", {E, S}),
                             &expect(f, p + "ffn_up_shexp.weight", {E, S})},
                            E);
    L.w_down = pack_rows(f, {&expect(f, p + "ffn_down_shexp.weight", {S, E})}, S);
    GgufTensorInfo gate_row = expect(f, p + "ffn_gate_inp_shexp.weight", {E});
    gate_row.dims = {E, 1};
    L.w_shexp_gate = pack_rows(f, {&gate_row}, E);
    return;
  }
  const uint64_t F = uint64_t(c.n_ff);
  L.w_gate_up = pack_rows(
      f, {&expect(f, p + "ffn_gate.weight", {E, F}), &expect(f, p + "ffn_up.weight", {E, F})}, E);
  L.w_down = pack_rows(f, {&expect(f, p + "ffn_down.weight", {F, E})}, F);
}

KVCache Model::make_hybrid_cache(KVDType kv_dtype) const {
  const DeltaLayerDims d = delta_layer_dims(cfg_);
  const GatedDeltaShape shape{d.n_k_heads, d.n_v_heads, d.head_k_dim, d.head_v_dim,
                              delta_head_map(cfg_)};
  RecurrentLayers r;
  r.layers = cfg_.recurrent_layers;
  r.state.conv_channels = int(d.conv_channels());
  r.state.d_conv = d.d_conv;
  r.state.scan_elements = gated_delta_state_elements(shape);
  r.input_width = d.conv_channels() + d.value_dim() + 2 * size_t(d.n_v_heads);
  const size_t V = d.value_dim();
  r.replay = [this, V](int il, RecurrentState& s, const float* in, size_t n) {
    std::vector<float> o(n * V);  // the layer output is not needed: only the state
    advance_delta(il, s, in, n, o.data());
  };
  return KVCache(std::move(r), cfg_.n_head_kv, cfg_.head_dim, kv_dtype);
}

// Advances a Gated DeltaNet layer's state over n tokens of logged inputs ([n][qkv | z | beta |
// alpha]) and writes the recurrence's output o [n][value_dim]: the causal conv over qkv with SiLU,
// the per-head L2 norm of q and k (eps = the RMS norm's, as qwen35.cpp), the gates, and the
// delta rule with the architecture's key-head map (delta_head_map). The state's token count is the
// caller's to advance.
void Model::advance_delta(int il, RecurrentState& state, const float* in, size_t n,
                          float* o) const {
  const LayerWeights& L = layers_[size_t(il)];
  const DeltaLayerDims d = delta_layer_dims(cfg_);
  const size_t conv = d.conv_channels(), K = d.key_dim(), V = d.value_dim();
  const size_t H = size_t(d.n_v_heads), W = conv + V + 2 * H;
  ForwardScratch scratch;
  const std::span<float> x = scratch.take(n * conv), g = scratch.take(n * H),
                         beta = scratch.take(n * H);
  causal_conv1d({int(conv), d.d_conv}, in, W, n, L.ssm_conv1d.data(), nullptr, true,
                state.conv_window(), x.data(), conv);
  l2_normalize_heads(x.data(), n, conv, d.n_k_heads, d.head_k_dim, cfg_.rms_eps);
  l2_normalize_heads(x.data() + K, n, conv, d.n_k_heads, d.head_k_dim, cfg_.rms_eps);
  delta_net_gates(in + conv + V + H, in + conv + V, W, n, d.n_v_heads, L.ssm_dt_bias.data(),
                  L.ssm_a.data(), g.data(), beta.data());
  GatedDeltaInputs gi;
  gi.q = x.data();
  gi.k = x.data() + K;
  gi.v = x.data() + 2 * K;
  gi.ldq = gi.ldk = gi.ldv = conv;
  gi.g = g.data();
  gi.beta = beta.data();
  gi.ldgate = H;
  gi.q_scale = 1.f / std::sqrt(float(d.head_k_dim));
  gated_delta_rule({d.n_k_heads, d.n_v_heads, d.head_k_dim, d.head_v_dim, delta_head_map(cfg_)}, gi,
                   n, state.scan_state(), o, V);
}

// A Gated DeltaNet layer: one GEMM into the cache's logged inputs, the state advance, the gated
// norm rmsnorm_head(o) * w * silu(z), and the out-projection.
void Model::delta_net(int il, const float* xn, size_t T, KVCache& cache, ForwardProfile* prof,
                      float* out) const {
  const LayerWeights& L = layers_[size_t(il)];
  const DeltaLayerDims d = delta_layer_dims(cfg_);
  const size_t conv = d.conv_channels(), V = d.value_dim(), W = conv + V + 2 * size_t(d.n_v_heads);
  float* in = cache.recurrent_inputs(il, T);
  timed_gemm(prof, xn, T, size_t(cfg_.n_embd), L.w_delta_in, in, W);
  ForwardScratch scratch;
  const std::span<float> o = scratch.take(T * V);
  RecurrentState& state = cache.recurrent_state(il);
  advance_delta(il, state, in, T, o.data());
  state.advance(T);
  gated_rmsnorm_delta(o.data(), V, in + conv, W, T, d.n_v_heads, d.head_v_dim, L.ssm_norm.data(),
                      cfg_.rms_eps, o.data(), V);
  timed_gemm(prof, o.data(), T, V, L.ssm_out, out, size_t(cfg_.n_embd));
}

// Gated attention: attn_q gives per head the query and a gate; the query and K get their RMS norms
// and interleaved M-RoPE (which for text is NeoX RoPE over the first n_rot dimensions with ggml's
// float angles, model_config.h; qwen3next's plain NeoX RoPE is that same rotation), attention runs
// through the cache, and its output is multiplied by sigmoid(gate) before the output projection.
void Model::gated_attention(int il, const float* xn, size_t T, const int32_t* positions,
                            KVCache& cache, const ForwardHooks* hooks, float* out) const {
  const ModelConfig& c = cfg_;
  const LayerWeights& L = layers_[size_t(il)];
  ForwardProfile* prof = hooks ? hooks->profile : nullptr;
  const size_t E = size_t(c.n_embd), Qd = size_t(c.q_dim()), KVd = size_t(c.kv_dim());
  const size_t hd = size_t(c.head_dim), ld = 2 * Qd + 2 * KVd;
  ForwardScratch scratch;
  const std::span<float> qkv = scratch.take(T * ld), q = scratch.take(T * Qd),
                         gate = scratch.take(T * Qd), att = scratch.take(T * Qd);
  timed_gemm(prof, xn, T, E, L.wqkv, qkv.data(), ld);
  for (size_t t = 0; t < T; ++t)
    for (size_t h = 0; h < size_t(c.n_head); ++h) {
      const float* src = &qkv[t * ld + h * 2 * hd];
      std::memcpy(&q[t * Qd + h * hd], src, hd * sizeof(float));
      std::memcpy(&gate[t * Qd + h * hd], src + hd, hd * sizeof(float));
    }
  float* k = qkv.data() + 2 * Qd;
  float* v = k + KVd;
  if (hooks && hooks->on_pre_rope_kv) hooks->on_pre_rope_kv(il, k, v, T, ld);
  rmsnorm(q.data(), T * size_t(c.n_head), hd, hd, L.q_norm.data(), c.rms_eps, q.data(), hd);
  for (size_t t = 0; t < T; ++t)
    rmsnorm(k + t * ld, size_t(c.n_head_kv), hd, hd, L.k_norm.data(), c.rms_eps, k + t * ld, hd);
  rope_ggml_angles(q.data(), T, Qd, c.n_head, positions, layer_rope_[size_t(il)]);
  rope_ggml_angles(k, T, ld, c.n_head_kv, positions, layer_rope_[size_t(il)]);
  if (hooks && hooks->on_query) hooks->on_query(il, q.data(), T, Qd);
  AttentionShape shape{c.n_head, c.n_head_kv, c.head_dim, attention_scale(c)};
  const auto ta = Clock::now();
  if (hooks && hooks->attend &&
      hooks->attend(il, {q.data(), Qd, positions, k, v, ld, T, att.data(), Qd}))
    cache.store(il, k, v, ld, T);
  else
    cache.attend(il, shape, q.data(), Qd, positions, k, v, ld, T, att.data(), Qd);
  if (prof) prof->attention_s += std::chrono::duration<double>(Clock::now() - ta).count();
  for (size_t i = 0; i < T * Qd; ++i) att[i] *= 1.f / (1.f + std::exp(-gate[i]));
  timed_gemm(prof, att.data(), T, Qd, L.wo, out, E);
}

// qwen35's layer: x += mixer(rmsnorm(x)); x += ffn(rmsnorm(x)), the mixer a Gated DeltaNet or a
// gated attention layer by kind, the FFN's norm the file's post_attention_norm.
std::vector<float> Model::forward_hybrid(std::span<const int32_t> tokens,
                                         std::span<const int32_t> positions, KVCache& cache,
                                         std::span<const int32_t> logits_rows,
                                         const ForwardHooks* hooks) const {
  const ModelConfig& c = cfg_;
  if (!cache.has_recurrent())
    throw std::invalid_argument("forward: " + c.arch_name +
                                " needs a cache with recurrent layers (Model::make_cache)");
  const size_t T = tokens.size(), E = size_t(c.n_embd);
  ForwardScratch scratch;
  const std::span<float> x = scratch.take(T * E), xn = scratch.take(T * E),
                         tmp = scratch.take(T * E);
  for (size_t t = 0; t < T; ++t) embed(tokens[t], &x[t * E]);
  cache.stage(positions.data(), T);
  const size_t n_kv = cache.size() + T;
  ForwardProfile* prof = hooks ? hooks->profile : nullptr;
  for (int l = 0; l < c.n_layer; ++l) {
    const LayerWeights& L = layers_[size_t(l)];
    rmsnorm(x.data(), T, E, E, L.attn_norm.data(), c.rms_eps, xn.data(), E);
    if (is_recurrent_layer(c, l))
      delta_net(l, xn.data(), T, cache, prof, tmp.data());
    else
      gated_attention(l, xn.data(), T, positions.data(), cache, hooks, tmp.data());
    add_inplace(x.data(), tmp.data(), T * E);
    rmsnorm(x.data(), T, E, E, L.ffn_norm.data(), c.rms_eps, xn.data(), E);
    if (c.n_expert > 0)
      ffn_moe_shared(L, xn.data(), T, tmp.data(), prof);
    else
      ffn_dense(L, xn.data(), T, tmp.data(), prof);
    add_inplace(x.data(), tmp.data(), T * E);
  }
  cache.commit(T);
  if (prof) {  // causal pairs of the attention layers
    const double pairs = causal_pairs(cache.positions(), n_kv, positions.data(), T);
    for (int l = 0; l < c.n_layer; ++l)
      if (!is_recurrent_layer(c, l)) prof->attention_pairs += pairs * c.n_head;
  }
  return output_logits(x.data(), logits_rows, prof);
}

}  // namespace accel
