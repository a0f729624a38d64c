// Model's nemotron_h (Nemotron-H) members: loading its three block kinds (Mamba-2, attention
// without RoPE, FFN-only), the cache that holds state only where a block needs it, and the forward
// pass (llama.cpp 3f545bec src/models/nemotron-h.cpp and mamba-base.cpp build_mamba2_layer).
// Shares the loader helpers of model_loading.h; must not grow the other architectures' paths.
#include <algorithm>
#include <chrono>
#include <cmath>

#include "kernels/causal_conv1d.h"
#include "kernels/elementwise.h"
#include "kernels/gated_norm.h"
#include "kernels/quant.h"
#include "kernels/ssm_scan.h"
#include "models/forward_scratch.h"
#include "models/model.h"
#include "models/model_loading.h"

namespace accel {

using namespace model_loading;

namespace {

// A small per-channel tensor of the given ggml dims ({1, H} for ssm_a / ssm_d, {d_conv, channels}
// for the conv) as floats; these are f32 in every converted file, and a block-quantized type is
// refused by name (its rows would not be whole blocks).
std::vector<float> load_small(const GgufFile& f, const std::string& name,
                              const std::vector<uint64_t>& dims) {
  const GgufTensorInfo& t = expect(f, name, dims);
  if (dtype_block_elems(t.type) != 1)
    throw GgufError("[model] " + f.path() + ": tensor '" + name + "' has type " +
                    std::string(dtype_name(t.type)) + ", expected f32, f16 or bf16");
  size_t n = 1;
  for (uint64_t d : dims) n *= size_t(d);
  std::vector<float> v(n);
  dequantize_row(t.type, f.tensor_data(t), v.data(), n);
  return v;
}

// An optional 1-D bias: empty when the file has none.
std::vector<float> optional_vector(const GgufFile& f, const std::string& name, uint64_t n) {
  return f.find_tensor(name) ? load_vector(f, name, n) : std::vector<float>{};
}

const char* kind_name(int kind) {
  return kind == 0 ? "recurrent" : kind == 1 ? "attention" : "FFN-only";
}

}  // namespace

// One nemotron_h block. Its kind comes from the per-layer arrays (model_config.h); the file's
// tensors must agree (ssm_in only in recurrent blocks, attn_q only in attention blocks, ffn_up
// only in FFN blocks), else the load is refused naming the key that set the kind.
void Model::load_nemotron_h_layer(int il, const std::string& p, LayerWeights& L) {
  const GgufFile& f = file_;
  const ModelConfig& c = cfg_;
  const uint64_t E = uint64_t(c.n_embd), Q = uint64_t(c.q_dim()), KV = uint64_t(c.kv_dim());
  const int kind = is_recurrent_layer(c, il) ? 0 : is_attention_layer(c, il) ? 1 : 2;
  const bool moe = c.arch == Arch::NemotronHMoe;
  const char* names[3] = {"ssm_in.weight", "attn_q.weight",
                          moe ? "ffn_gate_inp.weight" : "ffn_up.weight"};
  for (int k = 0; k < 3; ++k)
    if ((f.find_tensor(p + names[k]) != nullptr) != (k == kind))
      throw GgufError("[model] " + f.path() + ": " + c.arch_name + ".attention.head_count_kv / " +
                      c.arch_name + ".feed_forward_length: mark layer " + std::to_string(il) + " " +
                      kind_name(kind) + " but the file " + (k == kind ? "lacks" : "has") + " '" +
                      p + names[k] + "'");
  if (f.find_tensor(p + "attn_qkv.weight"))
    throw GgufError("[model] " + f.path() + ": tensor '" + p +
                    "attn_qkv.weight': a fused QKV projection is not supported for nemotron_h");
  if (kind == 0) {
    const Mamba2LayerDims d = mamba2_layer_dims(c);
    const uint64_t conv = d.conv_channels(), H = uint64_t(d.n_heads), Di = d.d_inner();
    L.w_delta_in = pack_rows(f, {&expect(f, p + "ssm_in.weight", {E, d.in_proj()})}, E);
    L.ssm_conv1d = load_small(f, p + "ssm_conv1d.weight", {uint64_t(d.d_conv), conv});
    L.ssm_conv1d_bias = optional_vector(f, p + "ssm_conv1d.bias", conv);
    L.ssm_dt_bias = load_vector(f, p + "ssm_dt.bias", H);
    L.ssm_a = load_small(f, p + "ssm_a", {1, H});
    L.ssm_d = load_small(f, p + "ssm_d", {1, H});
    L.ssm_norm =
        load_small(f, p + "ssm_norm.weight", {Di / uint64_t(d.n_groups), uint64_t(d.n_groups)});
    L.ssm_out = pack_rows(f, {&expect(f, p + "ssm_out.weight", {Di, E})}, Di);
  } else if (kind == 1) {
    L.wqkv = pack_rows(
        f,
        {&expect(f, p + "attn_q.weight", {E, Q}), &expect(f, p + "attn_k.weight", {E, KV}),
         &expect(f, p + "attn_v.weight", {E, KV})},
        E);
    const bool any_bias = f.find_tensor(p + "attn_q.bias") || f.find_tensor(p + "attn_k.bias") ||
                          f.find_tensor(p + "attn_v.bias");
    if (any_bias)  // llama.cpp adds each bias it finds; an absent one adds nothing (zeros here)
      for (auto [n, w] : {std::pair{"attn_q.bias", Q}, {"attn_k.bias", KV}, {"attn_v.bias", KV}}) {
        std::vector<float> b = optional_vector(f, p + n, w);
        b.resize(size_t(w), 0.f);
        L.qkv_bias.insert(L.qkv_bias.end(), b.begin(), b.end());
      }
    L.wo = pack_rows(f, {&expect(f, p + "attn_output.weight", {Q, E})}, Q);
    L.wo_bias = optional_vector(f, p + "attn_output.bias", E);
  } else if (moe) {
    load_nemotron_h_moe_block(p, L);
  } else {
    const uint64_t F = uint64_t(c.n_ff);
    L.w_gate_up = pack_rows(f, {&expect(f, p + "ffn_up.weight", {E, F})}, E);
    L.w_down = pack_rows(f, {&expect(f, p + "ffn_down.weight", {F, E})}, F);
    L.ffn_up_bias = optional_vector(f, p + "ffn_up.bias", F);
    L.ffn_down_bias = optional_vector(f, p + "ffn_down.bias", E);
  }
}

// A nemotron_h_moe FFN block (llama_model_nemotron_h::load_arch_tensors): router and selection
// bias, the optional latent projections (present exactly when moe_latent_size is set: the
// experts' width depends on it), the experts' up and down matrices at that width, and the shared
// expert's up and down.
void Model::load_nemotron_h_moe_block(const std::string& p, LayerWeights& L) {
  const GgufFile& f = file_;
  const ModelConfig& c = cfg_;
  const uint64_t E = uint64_t(c.n_embd), NE = uint64_t(c.n_expert), F = uint64_t(c.n_ff_expert);
  const uint64_t S = uint64_t(c.n_ff_shexp), Le = c.moe_latent > 0 ? uint64_t(c.moe_latent) : E;
  L.w_router = pack_rows(f, {&expect(f, p + "ffn_gate_inp.weight", {E, NE})}, E);
  L.exp_probs_b = load_vector(f, p + "exp_probs_b.bias", NE);
  for (const char* n : {"ffn_latent_down.weight", "ffn_latent_up.weight"})
    if ((f.find_tensor(p + n) != nullptr) != (c.moe_latent > 0))
      throw GgufError("[model] " + f.path() + ": " + c.arch_name + ".moe_latent_size is " +
                      std::to_string(c.moe_latent) + " but the file " +
                      (c.moe_latent > 0 ? "lacks" : "has") + " '" + p + n + "'");
  if (c.moe_latent > 0) {
    L.w_latent_down = pack_rows(f, {&expect(f, p + "ffn_latent_down.weight", {E, Le})}, E);
    L.w_latent_up = pack_rows(f, {&expect(f, p + "ffn_latent_up.weight", {Le, E})}, Le);
  }
  const GgufTensorInfo& u = expect(f, p + "ffn_up_exps.weight", {Le, F, NE});
  const GgufTensorInfo& d = expect(f, p + "ffn_down_exps.weight", {F, Le, NE});
  for (uint64_t e = 0; e < NE; ++e) {
    const GgufTensorInfo ue = expert_slice(u, e, NE, F, Le), de = expert_slice(d, e, NE, Le, F);
    L.exp_gate_up.push_back(pack_rows(f, {&ue}, Le));
    L.exp_down.push_back(pack_rows(f, {&de}, F));
  }
  L.w_gate_up = pack_rows(f, {&expect(f, p + "ffn_up_shexp.weight", {E, S})}, E);
  L.w_down = pack_rows(f, {&expect(f, p + "ffn_down_shexp.weight", {S, E})}, S);
}

// Recurrent layers hold a Mamba-2 state (conv window over xBC, scan state) and log their
// in-projection rows for trim()'s replay; attention layers hold K/V; FFN-only blocks nothing.
KVCache Model::make_nemotron_h_cache(KVDType kv_dtype) const {
  const Mamba2LayerDims d = mamba2_layer_dims(cfg_);
  RecurrentLayers r;
  r.layers = cfg_.recurrent_layers;
  r.stateless = cfg_.ffn_layers;
  r.state.conv_channels = int(d.conv_channels());
  r.state.d_conv = d.d_conv;
  r.state.scan_elements = ssm_state_elements({d.n_heads, d.head_dim, d.d_state, d.n_groups});
  r.input_width = d.in_proj();
  const size_t Di = d.d_inner();
  r.replay = [this, Di](int il, RecurrentState& s, const float* in, size_t n) {
    std::vector<float> y(n * Di);  // the layer output is not needed: only the state
    advance_mamba2(il, s, in, n, y.data());
  };
  return KVCache(std::move(r), cfg_.n_head_kv, cfg_.head_dim, kv_dtype);
}

// Advances a Mamba-2 layer's state over n tokens of logged in-projection rows ([n][z | xBC | dt])
// and writes the scan's output y [n][d_inner] (D skip included): the causal conv over xBC (with
// its bias) and SiLU, then the selective scan over x = xBC's first d_inner channels with grouped
// B and C after it and dt (bias and softplus in the kernel). The state's token count is the
// caller's to advance.
void Model::advance_mamba2(int il, RecurrentState& state, const float* in, size_t n,
                           float* y) const {
  const LayerWeights& L = layers_[size_t(il)];
  const Mamba2LayerDims d = mamba2_layer_dims(cfg_);
  const size_t Di = d.d_inner(), conv = d.conv_channels(), W = d.in_proj();
  const size_t BC = size_t(d.n_groups) * size_t(d.d_state);
  ForwardScratch scratch;
  const std::span<float> xbc = scratch.take(n * conv);
  causal_conv1d({int(conv), d.d_conv}, in + Di, W, n, L.ssm_conv1d.data(),
                L.ssm_conv1d_bias.empty() ? nullptr : L.ssm_conv1d_bias.data(), true,
                state.conv_window(), xbc.data(), conv);
  SsmScanInputs si;
  si.x = xbc.data();
  si.ldx = conv;
  si.dt = in + Di + conv;
  si.lddt = W;
  si.B = xbc.data() + Di;
  si.ldb = conv;
  si.C = xbc.data() + Di + BC;
  si.ldc = conv;
  si.dt_bias = L.ssm_dt_bias.data();
  si.A = L.ssm_a.data();
  si.D = L.ssm_d.data();
  ssm_scan({d.n_heads, d.head_dim, d.d_state, d.n_groups}, si, n, state.scan_state(), y, Di);
}

// A Mamba-2 layer: one GEMM into the cache's logged inputs, the state advance, then
// rmsnorm_group(y * silu(z)) * w (mamba-base.cpp: swiglu_split(z, y), then the grouped norm) and
// the out-projection.
void Model::mamba2(int il, const float* xn, size_t T, KVCache& cache, ForwardProfile* prof,
                   float* out) const {
  const LayerWeights& L = layers_[size_t(il)];
  const Mamba2LayerDims d = mamba2_layer_dims(cfg_);
  const size_t Di = d.d_inner(), W = d.in_proj();
  float* in = cache.recurrent_inputs(il, T);
  timed_gemm(prof, xn, T, size_t(cfg_.n_embd), L.w_delta_in, in, W);
  ForwardScratch scratch;
  const std::span<float> y = scratch.take(T * Di);
  RecurrentState& state = cache.recurrent_state(il);
  advance_mamba2(il, state, in, T, y.data());
  state.advance(T);
  gated_rmsnorm_mamba2(y.data(), Di, in, W, T, int(Di), d.n_groups, L.ssm_norm.data(), cfg_.rms_eps,
                       y.data(), Di);
  timed_gemm(prof, y.data(), T, Di, L.ssm_out, out, size_t(cfg_.n_embd));
}

// nemotron_h's attention: Q, K, V projections (optional biases), no RoPE and no Q/K norms, so
// the keys the cache keeps are the projections themselves (the pre- and post-RoPE hooks see the
// same rows); scale attention.scale or 1/sqrt(head_dim); output projection with optional bias.
void Model::attention_no_rope(int il, const float* xn, size_t T, const int32_t* positions,
                              KVCache& cache, const ForwardHooks* hooks, float* out) const {
  const ModelConfig& c = cfg_;
  const LayerWeights& L = layers_[size_t(il)];
  ForwardProfile* prof = hooks ? hooks->profile : nullptr;
  const size_t E = size_t(c.n_embd), Qd = size_t(c.q_dim()), KVd = size_t(c.kv_dim());
  const size_t ld = Qd + 2 * KVd;
  ForwardScratch scratch;
  const std::span<float> qkv = scratch.take(T * ld), att = scratch.take(T * Qd);
  timed_gemm(prof, xn, T, E, L.wqkv, qkv.data(), ld,
             L.qkv_bias.empty() ? nullptr : L.qkv_bias.data());
  const float* q = qkv.data();
  const float* k = q + Qd;
  const float* v = k + KVd;
  if (hooks && hooks->on_pre_rope_kv) hooks->on_pre_rope_kv(il, k, v, T, ld);
  if (hooks && hooks->on_query) hooks->on_query(il, q, T, ld);
  const AttentionShape shape{c.n_head, c.n_head_kv, c.head_dim, attention_scale(c)};
  const auto ta = Clock::now();
  if (hooks && hooks->attend && hooks->attend(il, {q, ld, positions, k, v, ld, T, att.data(), Qd}))
    cache.store(il, k, v, ld, T);
  else
    cache.attend(il, shape, q, ld, positions, k, v, ld, T, att.data(), Qd);
  if (prof) prof->attention_s += std::chrono::duration<double>(Clock::now() - ta).count();
  timed_gemm(prof, att.data(), T, Qd, L.wo, out, E, L.wo_bias.empty() ? nullptr : L.wo_bias.data());
}

namespace {

// down(relu(up x + b_up)^2) + b_down over T rows of x [T][n_in] into out [T][n_out] (ggml's relu
// then sqr, LLM_FFN_RELU_SQR); biases may be null.
void relu2_ffn(ForwardProfile* prof, const float* x, size_t T, size_t n_in, const PackedWeight& up,
               const float* up_b, size_t F, const PackedWeight& down, const float* down_b,
               float* out, size_t n_out) {
  ForwardScratch scratch;
  const std::span<float> u = scratch.take(T * F);
  timed_gemm(prof, x, T, n_in, up, u.data(), F, up_b);
  for (float& a : u) {
    const float r = a > 0.f ? a : 0.f;
    a = r * r;
  }
  timed_gemm(prof, u.data(), T, F, down, out, n_out, down_b);
}

}  // namespace

// An FFN-only block: relu^2 with the optional biases.
void Model::ffn_relu2(const LayerWeights& L, const float* xn, size_t T, float* out,
                      ForwardProfile* prof) const {
  relu2_ffn(prof, xn, T, size_t(cfg_.n_embd), L.w_gate_up,
            L.ffn_up_bias.empty() ? nullptr : L.ffn_up_bias.data(), size_t(cfg_.n_ff), L.w_down,
            L.ffn_down_bias.empty() ? nullptr : L.ffn_down_bias.data(), out, size_t(cfg_.n_embd));
}

// A nemotron_h_moe FFN block, in llama.cpp's build_moe_ffn order for its sigmoid gating: p =
// sigmoid(router x); the top n_expert_used of p + exp_probs_b (the bias only selects; ties to the
// lower index); weights p of the chosen, divided by max(their sum, 2^-14) when
// expert_weights_norm, times expert_weights_scale when it is neither 0 nor 1; each chosen
// expert's relu^2 FFN on x (through ffn_latent_down first when the file has it), weighted and
// summed, then ffn_latent_up; plus the shared expert's relu^2 FFN on x. Experts run in index
// order over the rows routed to them, so a token's sum does not depend on the batch.
void Model::ffn_moe_relu2(const LayerWeights& L, const float* xn, size_t T, float* out,
                          ForwardProfile* prof) const {
  const ModelConfig& c = cfg_;
  const size_t E = size_t(c.n_embd), F = size_t(c.n_ff_expert), NE = size_t(c.n_expert);
  const size_t K = size_t(c.n_expert_used), Le = c.moe_latent > 0 ? size_t(c.moe_latent) : E;
  ForwardScratch scratch;
  const std::span<float> p = scratch.take(T * NE), weight = scratch.take_filled(T * NE, 0.f);
  std::vector<float> sel(NE);
  std::vector<uint8_t> chosen(T * NE, 0);
  timed_gemm(prof, xn, T, E, L.w_router, p.data(), NE);
  std::vector<size_t> order(NE);
  for (size_t t = 0; t < T; ++t) {
    float* r = &p[t * NE];
    for (size_t e = 0; e < NE; ++e) {
      r[e] = 1.f / (1.f + std::exp(-r[e]));
      sel[e] = r[e] + L.exp_probs_b[e];
      order[e] = e;
    }
    std::partial_sort(
        order.begin(), order.begin() + std::ptrdiff_t(K), order.end(),
        [&](size_t a, size_t b) { return sel[a] > sel[b] || (sel[a] == sel[b] && a < b); });
    float sum = 0;
    for (size_t i = 0; i < K; ++i) sum += r[order[i]];
    const float div = c.expert_weights_norm ? std::max(sum, 6.103515625e-5f) : 1.f;
    const float scale = c.expert_weights_scale != 0.f && c.expert_weights_scale != 1.f
                            ? c.expert_weights_scale
                            : 1.f;
    for (size_t i = 0; i < K; ++i) {
      weight[t * NE + order[i]] = r[order[i]] / div * scale;
      chosen[t * NE + order[i]] = 1;
    }
  }
  const float* xin = xn;
  if (c.moe_latent > 0) {
    const std::span<float> xl = scratch.take(T * Le);
    timed_gemm(prof, xn, T, E, L.w_latent_down, xl.data(), Le);
    xin = xl.data();
  }
  // xs and y sized for every row: an expert may take all T.
  const std::span<float> acc = scratch.take_filled(T * Le, 0.f), xs = scratch.take(T * Le),
                         y = scratch.take(T * Le);
  std::vector<size_t> rows;
  for (size_t e = 0; e < NE; ++e) {
    rows.clear();
    for (size_t t = 0; t < T; ++t)
      if (chosen[t * NE + e]) rows.push_back(t);
    if (rows.empty()) continue;
    const size_t M = rows.size();
    for (size_t i = 0; i < M; ++i)
      std::copy(xin + rows[i] * Le, xin + (rows[i] + 1) * Le, xs.begin() + std::ptrdiff_t(i * Le));
    relu2_ffn(prof, xs.data(), M, Le, L.exp_gate_up[e], nullptr, F, L.exp_down[e], nullptr,
              y.data(), Le);
    for (size_t i = 0; i < M; ++i) {
      const float w = weight[rows[i] * NE + e];
      float* o = &acc[rows[i] * Le];
      for (size_t j = 0; j < Le; ++j) o[j] += w * y[i * Le + j];
    }
  }
  if (c.moe_latent > 0)
    timed_gemm(prof, acc.data(), T, Le, L.w_latent_up, out, E);
  else
    std::copy(acc.begin(), acc.end(), out);
  const std::span<float> sh = scratch.take(T * E);
  relu2_ffn(prof, xn, T, E, L.w_gate_up, nullptr, size_t(c.n_ff_shexp), L.w_down, nullptr,
            sh.data(), E);
  add_inplace(out, sh.data(), T * E);
}

// nemotron_h's block: x += mixer(rmsnorm(x)), the mixer a Mamba-2 layer, an attention layer or an
// FFN by kind; then the output norm and projection.
std::vector<float> Model::forward_nemotron_h(std::span<const int32_t> tokens,
                                             std::span<const int32_t> positions, KVCache& cache,
                                             std::span<const int32_t> logits_rows,
                                             const ForwardHooks* hooks) const {
  const ModelConfig& c = cfg_;
  if (has_recurrent_layers(c) && !cache.has_recurrent())
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
      mamba2(l, xn.data(), T, cache, prof, tmp.data());
    else if (is_attention_layer(c, l))
      attention_no_rope(l, xn.data(), T, positions.data(), cache, hooks, tmp.data());
    else if (c.arch == Arch::NemotronHMoe)
      ffn_moe_relu2(L, xn.data(), T, tmp.data(), prof);
    else
      ffn_relu2(L, xn.data(), T, tmp.data(), prof);
    add_inplace(x.data(), tmp.data(), T * E);
  }
  cache.commit(T);
  if (prof) {
    int n_attn = 0;
    for (int l = 0; l < c.n_layer; ++l) n_attn += is_attention_layer(c, l) ? 1 : 0;
    prof->attention_pairs +=
        causal_pairs(cache.positions(), n_kv, positions.data(), T) * double(c.n_head) * n_attn;
  }
  return output_logits(x.data(), logits_rows, prof);
}

}  // namespace accel
