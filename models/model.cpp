// Model loading (tensor names, shapes and types checked against the config) and the forward pass of
// the attention architectures; the qwen35 hybrid layers are in model_hybrid.cpp, nemotron_h's in
// model_nemotron_h.cpp, and the sliding
// architectures' layer loaders in model_sliding_layers.cpp. Every op is row-wise or a
// batch-invariant kernel, so a token's logits do not depend on how the sequence was chunked
// (ARCHITECTURE.md invariant 1).
#include "models/model.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>

#include "kernels/attention.h"
#include "kernels/elementwise.h"
#include "kernels/quant.h"
#include "kernels/threading.h"
#include "models/forward_scratch.h"
#include "models/model_loading.h"
#include "models/rope_ggml.h"

namespace accel {

using namespace model_loading;

namespace {

// swiglu's serial time per element in parallel_for's flop-like units: 0.29 ns of CPU time
// (tests/bench/bench_threads_under_load BM_SerialCost kernel 2) over GEMM's 0.0050 ns per flop
// (BM_GemmSize M 64, N 1024, K 1024, one thread) in the same run (Zen 5, 2026-11-29; 2.56 ns
// per element before swiglu was vectorised).
constexpr double kSwigluWorkPerElement = 58;

// Every layer of a gemma3 or gpt-oss model has the same Q/K/V row shapes: their files state no
// per-layer head sizes or KV head counts that differ, and a file that does is refused by key.
// (gemma4's kinds differ by design; each layer carries its own geometry.)
void check_uniform_layers(const ModelConfig& c, const std::string& path) {
  if (c.arch == Arch::Gemma4) return;
  if (c.head_dim_swa != 0 && c.head_dim_swa != c.head_dim)
    throw GgufError("[model] " + path + ": " + c.arch_name +
                    ".attention.key_length_swa: sliding layers with their own head size (" +
                    std::to_string(c.head_dim_swa) + " vs " + std::to_string(c.head_dim) +
                    ") are not supported for " + c.arch_name);
  for (int h : c.n_head_kv_layer)
    if (h != c.n_head_kv)
      throw GgufError("[model] " + path + ": " + c.arch_name +
                      ".attention.head_count_kv: per-layer KV head counts that differ are not "
                      "supported for " +
                      c.arch_name);
}

// The RoPE layer il applies: the model's, with the layer kind's base and rotated dimensions.
// llama.cpp gives gemma3's sliding layers frequency scale 1 (rope_freq_scale_train_swa's default)
// and gpt-oss's the full layers' scale.
RopeParams layer_rope(const ModelConfig& c, int il) {
  const LayerAttention la = layer_attention(c, il);
  RopeParams r = c.rope;
  r.freq_base = la.rope_base;
  r.n_rot = la.n_rot;
  r.head_dim = la.head_dim;
  if (la.sliding && c.arch != Arch::GptOss) r.freq_scale = 1.f;
  // gemma4: the frequency factors (rope_freqs) apply to the full layers only.
  if (la.sliding && c.arch == Arch::Gemma4) r.freq_factors.clear();
  return r;
}

// RoPE as the architecture's reference computes it: gemma's Q and K are RMS-normed, so ggml's
// float angles (rope_ggml.h) are reproduced; every other architecture keeps rope()'s double
// angles (and so its existing bits).
void rope_for(const ModelConfig& c, float* x, size_t n, size_t ld, int heads, const int32_t* pos,
              const RopeParams& r) {
  if (c.arch == Arch::Gemma3 || c.arch == Arch::Gemma4)
    rope_ggml_angles(x, n, ld, heads, pos, r);
  else
    rope(x, n, ld, heads, pos, r);
}

}  // namespace

KVCache Model::make_cache(KVDType kv_dtype, size_t max_rollback) const {
  if (is_nemotron_h_arch(cfg_.arch)) return make_nemotron_h_cache(kv_dtype);
  if (has_recurrent_layers(cfg_)) return make_hybrid_cache(kv_dtype);
  if (!has_sliding_layers(cfg_))
    return KVCache(cfg_.n_layer, cfg_.n_head_kv, cfg_.head_dim, kv_dtype);
  std::vector<KVLayerShape> shapes;
  for (int l = 0; l < cfg_.n_layer; ++l) {
    const LayerAttention la = layer_attention(cfg_, l);
    shapes.push_back({la.n_head_kv, la.head_dim, la.window});
  }
  return KVCache(shapes, kv_dtype, max_rollback);
}

Model::Model(GgufFile f) : file_(std::move(f)) {}

std::unique_ptr<Model> Model::load(const std::string& path) {
  std::unique_ptr<Model> m(new Model(GgufFile::open(path)));
  m->cfg_ = ModelConfig::from_gguf(m->file_);
  check_uniform_layers(m->cfg_, path);
  m->load_weights();
  // The weights now live in their packed panels; the file's pages would otherwise stay resident
  // beside them (a second copy of the model). Token embeddings are still read from the mapping
  // and fault back in row by row as tokens use them.
  m->file_.release_resident_pages();
  return m;
}

void Model::load_weights() {
  const GgufFile& f = file_;
  ModelConfig& c = cfg_;
  const uint64_t E = uint64_t(c.n_embd), Q = uint64_t(c.q_dim()), KV = uint64_t(c.kv_dim());

  const GgufTensorInfo* emb = f.find_tensor("token_embd.weight");
  if (!emb) throw GgufError("[model] " + f.path() + ": tensor 'token_embd.weight' is missing");
  if (emb->dims.size() != 2 || emb->dims[0] != E || emb->dims[1] == 0 || emb->dims[1] > (1u << 22))
    throw GgufError("[model] " + f.path() + ": tensor 'token_embd.weight' has shape " +
                    dims_str(emb->dims) + ", expected [" + std::to_string(E) + ", n_vocab]");
  if (c.n_vocab == 0) c.n_vocab = int(emb->dims[1]);
  if (uint64_t(c.n_vocab) != emb->dims[1])
    throw GgufError("[model] " + f.path() + ": tensor 'token_embd.weight' has " +
                    std::to_string(emb->dims[1]) + " rows but the vocabulary has " +
                    std::to_string(c.n_vocab) + " tokens");
  tok_embd_ = f.tensor_data(*emb);
  tok_embd_type_ = emb->type;
  const uint64_t V = uint64_t(c.n_vocab);

  // Llama 3.x's RoPE frequency factors (llama.cpp's LLM_TENSOR_ROPE_FREQS): one divisor per rotated
  // pair, written by the converter from the HF rope_scaling "llama3" parameters.
  if (f.find_tensor("rope_freqs.weight") && is_qwen35_arch(c.arch))
    throw GgufError("[model] " + f.path() +
                    ": tensor 'rope_freqs.weight': frequency factors are not supported for qwen35");
  if (f.find_tensor("rope_freqs.weight")) {
    c.rope.freq_factors.clear();
    for (float v : load_vector(f, "rope_freqs.weight", uint64_t(c.rope.n_rot / 2))) {
      if (!(std::isfinite(v) && v > 0.f && v <= 1e6f))
        throw GgufError(
            "[model] " + f.path() +
            ": tensor 'rope_freqs.weight' holds a factor outside (0, 1e6]: " + std::to_string(v));
      c.rope.freq_factors.push_back(v);
    }
  }

  output_norm_ = load_vector(f, "output_norm.weight", E);
  if (f.find_tensor("output.weight"))
    output_ = pack_rows(f, {&expect(f, "output.weight", {E, V})}, E);
  else
    output_ = pack_rows(f, {emb}, E);  // tied embeddings

  // llama.cpp scales gemma3's token embeddings by sqrtf(n_embd) (float) before the first layer.
  embd_scale_ = c.arch == Arch::Gemma3 || c.arch == Arch::Gemma4 ? std::sqrt(float(c.n_embd)) : 1.f;
  layer_rope_.clear();
  for (int l = 0; l < c.n_layer; ++l) layer_rope_.push_back(layer_rope(c, l));
  layers_.resize(size_t(c.n_layer));
  for (int l = 0; l < c.n_layer; ++l) {
    const std::string p = "blk." + std::to_string(l) + ".";
    LayerWeights& L = layers_[size_t(l)];
    L.attn_norm = load_vector(f, p + "attn_norm.weight", E);
    const LayerAttention la = layer_attention(c, l);
    L.head_dim = la.head_dim;
    L.n_head_kv = la.n_head_kv;
    L.q_dim = size_t(c.n_head) * size_t(la.head_dim);
    L.kv_dim = size_t(la.n_head_kv) * size_t(la.head_dim);
    if (c.arch == Arch::GptOss) {
      load_gpt_oss_layer(p, L);
      continue;
    }
    if (c.arch == Arch::Gemma4) {
      load_gemma4_layer(l, L);
      continue;
    }
    if (is_qwen35_arch(c.arch)) {
      load_qwen35_layer(l, p, L);
      continue;
    }
    if (is_nemotron_h_arch(c.arch)) {
      load_nemotron_h_layer(l, p, L);
      continue;
    }
    L.ffn_norm = load_vector(f, p + "ffn_norm.weight", E);
    L.wqkv = pack_rows(
        f,
        {&expect(f, p + "attn_q.weight", {E, Q}), &expect(f, p + "attn_k.weight", {E, KV}),
         &expect(f, p + "attn_v.weight", {E, KV})},
        E);
    L.wo = pack_rows(f, {&expect(f, p + "attn_output.weight", {Q, E})}, Q);
    if (c.qkv_bias) {
      for (auto [n, d] : {std::pair{"attn_q.bias", Q}, {"attn_k.bias", KV}, {"attn_v.bias", KV}}) {
        auto b = load_vector(f, p + n, d);
        L.qkv_bias.insert(L.qkv_bias.end(), b.begin(), b.end());
      }
    }
    if (c.qk_norm) {
      L.q_norm = load_vector(f, p + "attn_q_norm.weight", uint64_t(c.head_dim));
      L.k_norm = load_vector(f, p + "attn_k_norm.weight", uint64_t(c.head_dim));
    }
    if (c.arch == Arch::Gemma3) {
      L.post_attn_norm = load_vector(f, p + "post_attention_norm.weight", E);
      L.post_ffn_norm = load_vector(f, p + "post_ffw_norm.weight", E);
    }
    if (c.n_expert == 0) {
      const uint64_t F = uint64_t(c.n_ff);
      L.w_gate_up = pack_rows(
          f, {&expect(f, p + "ffn_gate.weight", {E, F}), &expect(f, p + "ffn_up.weight", {E, F})},
          E);
      L.w_down = pack_rows(f, {&expect(f, p + "ffn_down.weight", {F, E})}, F);
    } else {
      load_routed_experts(f, p, c, L);
    }
  }
  n_params_ = 0;
  for (const auto& t : f.tensors()) n_params_ += t.n_elements;
  weight_bytes_ = output_.bytes();
  for (const auto& L : layers_) {
    weight_bytes_ += L.wqkv.bytes() + L.wo.bytes() + L.w_gate_up.bytes() + L.w_down.bytes() +
                     L.w_router.bytes() + L.moe_oai.bytes() + L.w_delta_in.bytes() +
                     L.ssm_out.bytes() + L.w_shexp_gate.bytes();
    for (const auto& w : L.exp_gate_up) weight_bytes_ += w.bytes();
    for (const auto& w : L.exp_down) weight_bytes_ += w.bytes();
  }
}

void Model::embed(int32_t token, float* out) const {
  const size_t rb = dtype_row_bytes(tok_embd_type_, size_t(cfg_.n_embd));
  dequantize_row(tok_embd_type_, tok_embd_ + size_t(token) * rb, out, size_t(cfg_.n_embd));
}

namespace {

// A gated FFN: down(act(gate(x)) * up(x)), gate and up from one GEMM, act row by row.
using GateAct = void (*)(const float* gate, const float* up, float* out, size_t n);
void gated_ffn(const LayerWeights& L, const float* xn, size_t T, size_t E, size_t F, GateAct act,
               float* out, ForwardProfile* prof) {
  ForwardScratch scratch;
  const std::span<float> gu = scratch.take(T * 2 * F);  // [T][gate F | up F]
  timed_gemm(prof, xn, T, E, L.w_gate_up, gu.data(), 2 * F);
  parallel_ranges(T, double(T) * double(F) * kSwigluWorkPerElement, [&](size_t t0, size_t t1, int) {
    for (size_t t = t0; t < t1; ++t) act(&gu[t * 2 * F], &gu[t * 2 * F + F], &gu[t * 2 * F], F);
  });
  timed_gemm(prof, gu.data(), T, 2 * F, L.w_down, out, E);
}

}  // namespace

void Model::ffn_dense(const LayerWeights& L, const float* xn, size_t T, float* out,
                      ForwardProfile* prof) const {
  gated_ffn(L, xn, T, size_t(cfg_.n_embd), size_t(cfg_.n_ff), swiglu, out, prof);
}

// Gemma's FFN: down(gelu_tanh(gate(x)) * up(x)) with ggml's GELU arithmetic (geglu_tanh).
void Model::ffn_geglu(const LayerWeights& L, const float* xn, size_t T, float* out,
                      ForwardProfile* prof) const {
  gated_ffn(L, xn, T, size_t(cfg_.n_embd), size_t(cfg_.n_ff), geglu_tanh, out, prof);
}

void Model::ffn_moe_oai(const LayerWeights& L, const float* xn, size_t T, float* out,
                        ForwardProfile* prof) const {
  const auto t0 = Clock::now();
  L.moe_oai.forward(xn, T, size_t(cfg_.n_embd), out, size_t(cfg_.n_embd));
  if (prof) prof->gemm_s += std::chrono::duration<double>(Clock::now() - t0).count();
}

void Model::ffn_moe(const LayerWeights& L, const float* xn, size_t T, float* out,
                    ForwardProfile* prof) const {
  const size_t F = size_t(cfg_.n_ff_expert), E = size_t(cfg_.n_embd);
  const int NE = cfg_.n_expert, K = cfg_.n_expert_used;
  ForwardScratch scratch;
  const std::span<float> router = scratch.take(T * size_t(NE));
  timed_gemm(prof, xn, T, E, L.w_router, router.data(), size_t(NE));
  // Per token: softmax over experts, top-K (ties to the lower index), weights renormalised.
  const std::span<float> weight = scratch.take_filled(T * size_t(NE), 0.f);  // 0: not routed
  std::vector<int> order(static_cast<size_t>(NE));
  for (size_t t = 0; t < T; ++t) {
    float* r = &router[t * size_t(NE)];
    softmax(r, size_t(NE));
    for (int e = 0; e < NE; ++e) order[size_t(e)] = e;
    std::partial_sort(order.begin(), order.begin() + K, order.end(),
                      [&](int a, int b) { return r[a] > r[b] || (r[a] == r[b] && a < b); });
    float sum = 0;
    for (int i = 0; i < K; ++i) sum += r[order[size_t(i)]];
    for (int i = 0; i < K; ++i)
      weight[t * size_t(NE) + size_t(order[size_t(i)])] = r[order[size_t(i)]] / sum;
  }
  std::fill(out, out + T * E, 0.f);
  // Experts in index order: each token's output is summed in expert-index order whatever the batch.
  // Sized for every row: an expert may take all T.
  const std::span<float> xs = scratch.take(T * E), gu = scratch.take(T * 2 * F),
                         y = scratch.take(T * E);
  std::vector<size_t> rows;
  for (int e = 0; e < NE; ++e) {
    rows.clear();
    for (size_t t = 0; t < T; ++t)
      if (weight[t * size_t(NE) + size_t(e)] > 0.f) rows.push_back(t);
    if (rows.empty()) continue;
    const size_t M = rows.size();
    for (size_t i = 0; i < M; ++i) std::memcpy(&xs[i * E], xn + rows[i] * E, E * 4);
    timed_gemm(prof, xs.data(), M, E, L.exp_gate_up[size_t(e)], gu.data(), 2 * F);
    for (size_t i = 0; i < M; ++i) swiglu(&gu[i * 2 * F], &gu[i * 2 * F + F], &gu[i * 2 * F], F);
    timed_gemm(prof, gu.data(), M, 2 * F, L.exp_down[size_t(e)], y.data(), E);
    for (size_t i = 0; i < M; ++i) {
      const float w = weight[rows[i] * size_t(NE) + size_t(e)];
      float* o = out + rows[i] * E;
      for (size_t j = 0; j < E; ++j) o[j] += w * y[i * E + j];
    }
  }
}

// qwen35moe's FFN: the routed experts plus sigmoid(x . gate_inp_shexp) times the shared expert's
// SwiGLU FFN (llama_model_qwen35moe::graph::build_layer_ffn).
void Model::ffn_moe_shared(const LayerWeights& L, const float* xn, size_t T, float* out,
                           ForwardProfile* prof) const {
  const size_t E = size_t(cfg_.n_embd);
  ffn_moe(L, xn, T, out, prof);
  ForwardScratch scratch;
  const std::span<float> sh = scratch.take(T * E), gate = scratch.take(T);
  gated_ffn(L, xn, T, E, size_t(cfg_.n_ff_shexp), swiglu, sh.data(), prof);
  timed_gemm(prof, xn, T, E, L.w_shexp_gate, gate.data(), 1);
  for (size_t t = 0; t < T; ++t) {
    const float g = 1.f / (1.f + std::exp(-gate[t]));
    for (size_t j = 0; j < E; ++j) out[t * E + j] += sh[t * E + j] * g;
  }
}

void Model::store_pre_rope_kv(int layer0, int n_layers, const int32_t* positions, size_t n,
                              float* k, const float* v, size_t ld, KVCache& cache) const {
  const ModelConfig& c = cfg_;
  const size_t kvd = size_t(c.kv_dim());
  if (is_qwen35_arch(c.arch) || is_nemotron_h_arch(c.arch))
    throw std::invalid_argument("store_pre_rope_kv: " + c.arch_name +
                                " has recurrent layers (and qwen35 gated attention, nemotron_h "
                                "FFN-only blocks); KV Prediction does not predict them");
  if (layer0 < 0 || n_layers < 1 || layer0 + n_layers > c.n_layer || cache.n_layer() != c.n_layer ||
      cache.kv_dim() != c.kv_dim() || ld < size_t(n_layers) * kvd)
    throw std::invalid_argument("store_pre_rope_kv: layers or KV cache shape do not match");
  if (cache.size() + n > cache.capacity())
    throw std::logic_error("store_pre_rope_kv: the batch was not staged");
  for (size_t i = 0; i < n; ++i)
    if (positions[i] < 0 || positions[i] >= c.n_ctx)
      throw std::out_of_range("store_pre_rope_kv: position " + std::to_string(positions[i]) +
                              " outside the model's context [0, " + std::to_string(c.n_ctx) + ")");
  // The same kernels forward() applies to its K rows (per-head RMSNorm, then RoPE, both
  // row-wise), so equal inputs give equal cache rows.
  if (c.qk_norm)
    for (int m = 0; m < n_layers; ++m)
      for (size_t t = 0; t < n; ++t) {
        float* kr = k + t * ld + size_t(m) * kvd;
        rmsnorm(kr, size_t(c.n_head_kv), size_t(c.head_dim), size_t(c.head_dim),
                layers_[size_t(layer0 + m)].k_norm.data(), c.rms_eps, kr, size_t(c.head_dim));
      }
  if (has_sliding_layers(c))  // each layer with its kind's RoPE
    for (int m = 0; m < n_layers; ++m)
      rope_for(c, k + size_t(m) * kvd, n, ld, c.n_head_kv, positions,
               layer_rope_[size_t(layer0 + m)]);
  else
    rope(k, n, ld, n_layers * c.n_head_kv, positions, c.rope);
  for (int m = 0; m < n_layers; ++m)
    cache.store(layer0 + m, k + size_t(m) * kvd, v + size_t(m) * kvd, ld, n);
}

std::vector<float> Model::forward(std::span<const int32_t> tokens,
                                  std::span<const int32_t> positions, KVCache& cache,
                                  std::span<const int32_t> logits_rows,
                                  const ForwardHooks* hooks) const {
  const ModelConfig& c = cfg_;
  const size_t T = tokens.size();
  if (positions.size() != T)
    throw std::invalid_argument("forward: " + std::to_string(T) + " tokens but " +
                                std::to_string(positions.size()) + " positions");
  // The cache's kv_dim is its full layers' row width (0 when every layer slides).
  int full_kv_dim = 0;
  for (int l = 0; l < c.n_layer && full_kv_dim == 0; ++l)
    if (layer_attention(c, l).window == 0) full_kv_dim = int(layers_[size_t(l)].kv_dim);
  if (cache.n_layer() != c.n_layer || cache.kv_dim() != full_kv_dim)
    throw std::invalid_argument("forward: KV cache shape does not match the model");
  for (size_t i = 0; i < T; ++i) {
    if (tokens[i] < 0 || tokens[i] >= c.n_vocab)
      throw std::out_of_range("forward: token id " + std::to_string(tokens[i]) +
                              " outside the vocabulary [0, " + std::to_string(c.n_vocab) + ")");
    if (positions[i] < 0 || positions[i] >= c.n_ctx)
      throw std::out_of_range("forward: position " + std::to_string(positions[i]) +
                              " outside the model's context [0, " + std::to_string(c.n_ctx) + ")");
  }
  for (int32_t r : logits_rows)
    if (r < 0 || size_t(r) >= T) throw std::out_of_range("forward: logits row out of range");
  if (T == 0) return {};
  if (is_qwen35_arch(c.arch)) return forward_hybrid(tokens, positions, cache, logits_rows, hooks);
  if (is_nemotron_h_arch(c.arch))
    return forward_nemotron_h(tokens, positions, cache, logits_rows, hooks);

  // Scratch for the widest layer (gemma4's kinds differ in head size and KV heads).
  const size_t E = size_t(c.n_embd);
  size_t max_qkv = 0, max_q = 0;
  for (const LayerWeights& L : layers_) {
    max_qkv = std::max(max_qkv, L.q_dim + 2 * L.kv_dim);
    max_q = std::max(max_q, L.q_dim);
  }
  ForwardScratch scratch;
  const std::span<float> x = scratch.take(T * E), xn = scratch.take(T * E),
                         qkv = scratch.take(T * max_qkv), att = scratch.take(T * max_q),
                         tmp = scratch.take(T * E);
  for (size_t t = 0; t < T; ++t) {
    embed(tokens[t], &x[t * E]);
    if (embd_scale_ != 1.f)
      for (size_t j = 0; j < E; ++j) x[t * E + j] *= embd_scale_;
  }

  cache.stage(positions.data(), T);
  const size_t n_kv = cache.size() + T;
  ForwardProfile* prof = hooks ? hooks->profile : nullptr;
  AttentionShape shape{c.n_head, c.n_head_kv, c.head_dim, attention_scale(c)};

  for (int l = 0; l < c.n_layer; ++l) {
    const LayerWeights& L = layers_[size_t(l)];
    const size_t Qd = L.q_dim, KVd = L.kv_dim, ldqkv = Qd + 2 * KVd, hd = size_t(L.head_dim);
    shape.n_kv_heads = L.n_head_kv;
    shape.head_dim = L.head_dim;
    rmsnorm(x.data(), T, E, E, L.attn_norm.data(), c.rms_eps, xn.data(), E);
    timed_gemm(prof, xn.data(), T, E, L.wqkv, qkv.data(), ldqkv,
               L.qkv_bias.empty() ? nullptr : L.qkv_bias.data());
    float* q = qkv.data();
    float* k = qkv.data() + Qd;
    if (hooks && hooks->on_pre_rope_kv) hooks->on_pre_rope_kv(l, k, k + KVd, T, ldqkv);
    if (c.qk_norm) {
      for (size_t t = 0; t < T; ++t) {
        rmsnorm(q + t * ldqkv, size_t(c.n_head), hd, hd, L.q_norm.data(), c.rms_eps, q + t * ldqkv,
                hd);
        rmsnorm(k + t * ldqkv, size_t(L.n_head_kv), hd, hd, L.k_norm.data(), c.rms_eps,
                k + t * ldqkv, hd);
      }
    }
    if (L.v_norm) {  // gemma4: ggml_rms_norm on V, per head, no weight (a weight of ones: exact)
      const std::vector<float> ones(hd, 1.f);
      for (size_t t = 0; t < T; ++t)
        rmsnorm(k + KVd + t * ldqkv, size_t(L.n_head_kv), hd, hd, ones.data(), c.rms_eps,
                k + KVd + t * ldqkv, hd);
    }
    rope_for(c, q, T, ldqkv, c.n_head, positions.data(), layer_rope_[size_t(l)]);
    rope_for(c, k, T, ldqkv, L.n_head_kv, positions.data(), layer_rope_[size_t(l)]);
    shape.window = layer_attention(c, l).window;
    shape.sinks = L.sinks.empty() ? nullptr : L.sinks.data();
    if (hooks && hooks->on_query) hooks->on_query(l, q, T, ldqkv);
    const auto ta = Clock::now();
    // The cache stores this batch's K/V in its format and attends over everything it holds,
    // unless a hook computes this layer's attention itself.
    if (hooks && hooks->attend &&
        hooks->attend(l, {q, ldqkv, positions.data(), k, k + KVd, ldqkv, T, att.data(), Qd}))
      cache.store(l, k, k + KVd, ldqkv, T);
    else
      cache.attend(l, shape, q, ldqkv, positions.data(), k, k + KVd, ldqkv, T, att.data(), Qd);
    if (prof) prof->attention_s += std::chrono::duration<double>(Clock::now() - ta).count();
    timed_gemm(prof, att.data(), T, Qd, L.wo, tmp.data(), E,
               L.wo_bias.empty() ? nullptr : L.wo_bias.data());
    if (!L.post_attn_norm.empty())
      rmsnorm(tmp.data(), T, E, E, L.post_attn_norm.data(), c.rms_eps, tmp.data(), E);
    add_inplace(x.data(), tmp.data(), T * E);
    rmsnorm(x.data(), T, E, E, L.ffn_norm.data(), c.rms_eps, xn.data(), E);
    if (c.arch == Arch::GptOss)
      ffn_moe_oai(L, xn.data(), T, tmp.data(), prof);
    else if (c.n_expert > 0)
      ffn_moe(L, xn.data(), T, tmp.data(), prof);
    else if (c.arch == Arch::Gemma3 || c.arch == Arch::Gemma4)
      ffn_geglu(L, xn.data(), T, tmp.data(), prof);
    else
      ffn_dense(L, xn.data(), T, tmp.data(), prof);
    if (!L.post_ffn_norm.empty())
      rmsnorm(tmp.data(), T, E, E, L.post_ffn_norm.data(), c.rms_eps, tmp.data(), E);
    add_inplace(x.data(), tmp.data(), T * E);
    if (L.out_scale != 1.f)  // gemma4's layer_output_scale scales the whole residual stream
      for (float& v : x) v *= L.out_scale;
  }
  cache.commit(T);
  if (prof) {
    // Pairs each layer's mask lets through (a sliding layer sees at most its window).
    for (int l = 0; l < c.n_layer; ++l) {
      const int window = layer_attention(c, l).window;
      double pairs = 0;
      for (size_t t = 0; t < T; ++t)
        for (size_t j = 0; j < n_kv; ++j)
          pairs += attention_visible(cache.positions()[j], positions[t], window) ? 1 : 0;
      prof->attention_pairs += pairs * c.n_head;
    }
  }
  return output_logits(x.data(), logits_rows, prof);
}

std::vector<float> Model::output_logits(const float* x, std::span<const int32_t> logits_rows,
                                        ForwardProfile* prof) const {
  const ModelConfig& c = cfg_;
  const size_t R = logits_rows.size(), E = size_t(c.n_embd);
  std::vector<float> h(R * E), logits(R * size_t(c.n_vocab));
  for (size_t i = 0; i < R; ++i)
    rmsnorm(&x[size_t(logits_rows[i]) * E], 1, E, E, output_norm_.data(), c.rms_eps, &h[i * E], E);
  timed_gemm(prof, h.data(), R, E, output_, logits.data(), size_t(c.n_vocab));
  if (c.final_softcap > 0.f) {  // llama.cpp: scale by 1/cap, tanh, scale by cap
    const float inv = 1.f / c.final_softcap;
    for (float& v : logits) v = std::tanh(v * inv) * c.final_softcap;
  }
  return logits;
}

}  // namespace accel
