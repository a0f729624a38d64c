// Model: weights loaded from a GGUF file and the transformer forward pass (llama / qwen2 / qwen3 /
// gemma3 / gpt-oss, dense or top-k routed MoE FFN; sliding-window layers attend through the
// cache's rings; qwen35's Gated DeltaNet and nemotron_h's Mamba-2 layers keep their state in the
// cache). Owns the forward computation and its scratch; never times, samples beyond argmax, or
// touches a tokenizer (see generation.h and tokenizer.h).
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "kernels/gemm.h"
#include "models/gguf.h"
#include "models/kv_cache.h"
#include "models/model_config.h"
#include "models/moe_ffn_oai.h"

namespace accel {

// Where a forward pass spent its time, accumulated across calls (for benchmarks and profiling).
struct ForwardProfile {
  double gemm_s = 0, attention_s = 0;
  double gemm_flops = 0;       // 2*M*N*K summed over GEMMs
  double attention_pairs = 0;  // visible (query, key) pairs summed over layers and query heads
};

// Optional callbacks into the forward pass; a null or empty member costs nothing.
struct ForwardHooks {
  ForwardProfile* profile = nullptr;
  // After RoPE, for every layer: q is [n_tokens][n_head * head_dim] with row stride ld.
  std::function<void(int layer, const float* q, size_t n_tokens, size_t ld)> on_query;
  // Before the K-norm (qwen3) and RoPE, for every layer: the projections' K and V (biases
  // included), k and v [n_tokens][kv_dim] with row stride ld. KV Prediction reads pre-RoPE K/V.
  std::function<void(int layer, const float* k, const float* v, size_t n_tokens, size_t ld)>
      on_pre_rope_kv;
  // Replaces one layer's attention for the batch (CritiPrefill's block-sparse prefill). Called
  // after RoPE and on_query with the batch's queries, its new K/V rows and the output to fill, as
  // the cache would get them (AttendBatch, kv_storage.h). Returning true means it wrote the
  // batch's attention to `out`; the cache then stores the rows without attending. Returning false
  // leaves the layer to the cache. ForwardProfile::attention_pairs still counts dense pairs.
  std::function<bool(int layer, const AttendBatch& batch)> attend;
};

struct LayerWeights {
  std::vector<float> attn_norm, ffn_norm;  // [n_embd]
  std::vector<float> qkv_bias;             // [q_dim + 2 kv_dim] (qwen2) or empty
  std::vector<float> q_norm, k_norm;       // [head_dim] (qwen3, gemma3) or empty
  // Gemma's norms on the attention and FFN outputs before each residual add: [n_embd] or empty.
  std::vector<float> post_attn_norm, post_ffn_norm;
  // gpt-oss: the output projection's bias [n_embd], the per-head attention sinks [n_head], and the
  // MoE FFN unit (router with bias, experts with biases, clamped SwiGLU); ffn_norm holds the file's
  // post_attention_norm, which gpt-oss applies before the FFN.
  std::vector<float> wo_bias, sinks;
  MoeFfnOai moe_oai;
  PackedWeight wqkv;       // rows: q_dim + 2 kv_dim, cols: n_embd
  PackedWeight wo;         // rows: n_embd, cols: q_dim
  PackedWeight w_gate_up;  // rows: 2 n_ff (gate rows then up rows), cols: n_embd
  PackedWeight w_down;     // rows: n_embd, cols: n_ff
  // MoE: router and per-expert weights (w_gate_up/w_down unused).
  PackedWeight w_router;                  // rows: n_expert, cols: n_embd
  std::vector<PackedWeight> exp_gate_up;  // (expert) rows: 2 n_ff_expert, cols: n_embd
  std::vector<PackedWeight> exp_down;     // (expert) rows: n_embd, cols: n_ff_expert
  // This layer's attention geometry (its kind's: gemma4's sliding and full layers differ) and
  // gemma4's extras: V RMS-normed without a weight, and the factor on the residual stream after
  // the layer (layer_output_scale; 1 = none).
  int head_dim = 0, n_head_kv = 0;
  size_t q_dim = 0, kv_dim = 0;
  bool v_norm = false;
  float out_scale = 1.f;
  // qwen35 attention layers: wqkv's first 2 q_dim rows are attn_q's, per head the query's
  // head_dim rows then the output gate's. Gated DeltaNet layers: w_delta_in packs attn_qkv
  // (conv_channels rows), attn_gate (z, value_dim), ssm_beta and ssm_alpha (n_v_heads each), so
  // one GEMM gives a token's whole logged input (KVCache::recurrent_inputs).
  PackedWeight w_delta_in;         // rows: conv_channels + value_dim + 2 n_v_heads, cols: n_embd
  std::vector<float> ssm_conv1d;   // [conv_channels][d_conv]
  std::vector<float> ssm_dt_bias;  // [n_v_heads]
  std::vector<float> ssm_a;        // [n_v_heads]: -exp(A_log), as GGUF stores it
  std::vector<float> ssm_norm;     // [head_v_dim], shared by the value heads
  PackedWeight ssm_out;            // rows: n_embd, cols: value_dim
  PackedWeight w_shexp_gate;       // qwen35moe: rows 1, cols n_embd (the shared expert's gate)
  // nemotron_h: a Mamba-2 layer's ssm_in is w_delta_in (rows z | xBC | dt, Mamba2LayerDims::
  // in_proj()), with ssm_conv1d [conv_channels][d_conv], its optional bias, dt bias and A per
  // head, the D skip per head, the grouped norm's weights in ssm_norm [d_inner], and ssm_out. An
  // attention layer uses wqkv, qkv_bias (zeros for absent biases when any is present), wo and
  // wo_bias; an FFN-only block w_gate_up (up rows only), w_down and their optional biases.
  std::vector<float> ssm_conv1d_bias;             // [conv_channels] or empty
  std::vector<float> ssm_d;                       // [n_heads]
  std::vector<float> ffn_up_bias, ffn_down_bias;  // [n_ff], [n_embd] or empty
  // nemotron_h_moe's FFN blocks: w_router, the experts' up rows in exp_gate_up and exp_down (at
  // the latent width when the file has one), the selection bias, the latent projections (empty
  // without), and the shared expert in w_gate_up (up rows) / w_down.
  std::vector<float> exp_probs_b;  // [n_expert]
  PackedWeight w_latent_down;      // rows: moe_latent, cols: n_embd
  PackedWeight w_latent_up;        // rows: n_embd, cols: moe_latent
};

class Model {
 public:
  // Loads and validates every tensor (names, shapes, types); throws GgufError naming the file and
  // tensor. The GGUF mapping is kept open for the token embedding table.
  static std::unique_ptr<Model> load(const std::string& path);

  const ModelConfig& config() const { return cfg_; }
  const GgufFile& file() const { return file_; }
  const std::string& path() const { return file_.path(); }
  uint64_t n_params() const { return n_params_; }
  size_t weight_bytes() const { return weight_bytes_; }  // packed bytes a forward streams
  // A cache for this model: one linear store per layer, or, when layers slide (gemma3), rings
  // for the sliding layers that allow rolling back up to max_rollback entries after any batch
  // (PLD's verify rejects at most its draft length).
  static constexpr size_t kDefaultMaxRollback = 64;
  KVCache make_cache(KVDType kv_dtype = KVDType::F32,
                     size_t max_rollback = kDefaultMaxRollback) const;

  // Runs tokens[i] at absolute position positions[i] (any order the cache allows: every position
  // must lie in [0, n_ctx)), appends their K/V to `cache`, and returns the logits of the batch
  // rows listed in logits_rows as [logits_rows.size()][n_vocab].
  std::vector<float> forward(std::span<const int32_t> tokens, std::span<const int32_t> positions,
                             KVCache& cache, std::span<const int32_t> logits_rows,
                             const ForwardHooks* hooks = nullptr) const;

  // Writes K/V rows made outside forward() (KV Prediction's predicted pre-RoPE rows) into layers
  // [layer0, layer0 + n_layers) of a cache whose batch was staged with cache.stage(positions, n):
  // applies this model's K-norm (qwen3) and RoPE at positions[i] to k in place, with the same
  // kernels forward() uses (one RoPE call covers every layer's heads), and stores k and v without
  // attending. k, v: [n][n_layers * kv_dim] with row stride ld, layer layer0 + m in columns
  // [m kv_dim, (m + 1) kv_dim). Once every layer is stored, cache.commit(n).
  void store_pre_rope_kv(int layer0, int n_layers, const int32_t* positions, size_t n, float* k,
                         const float* v, size_t ld, KVCache& cache) const;

  // Embedding row of a token as float (dequantized): [n_embd].
  void embed(int32_t token, float* out) const;

 private:
  explicit Model(GgufFile f);
  void load_weights();
  void load_gpt_oss_layer(const std::string& prefix, LayerWeights& L);
  void load_gemma4_layer(int il, LayerWeights& L);
  void ffn_dense(const LayerWeights& L, const float* xn, size_t T, float* out,
                 ForwardProfile* prof) const;
  void ffn_geglu(const LayerWeights& L, const float* xn, size_t T, float* out,
                 ForwardProfile* prof) const;
  void ffn_moe_oai(const LayerWeights& L, const float* xn, size_t T, float* out,
                   ForwardProfile* prof) const;
  void ffn_moe(const LayerWeights& L, const float* xn, size_t T, float* out,
               ForwardProfile* prof) const;
  // The output norm and projection of the residual rows listed in logits_rows (x: [T][n_embd]),
  // with gemma's soft-cap: [logits_rows.size()][n_vocab].
  std::vector<float> output_logits(const float* x, std::span<const int32_t> logits_rows,
                                   ForwardProfile* prof) const;
  // qwen35 (hybrid): loading, the cache with recurrent layers, the forward pass and its two
  // layer kinds (gated attention; Gated DeltaNet, whose state advance trim() also replays).
  void load_qwen35_layer(int il, const std::string& prefix, LayerWeights& L);
  KVCache make_hybrid_cache(KVDType kv_dtype) const;
  std::vector<float> forward_hybrid(std::span<const int32_t> tokens,
                                    std::span<const int32_t> positions, KVCache& cache,
                                    std::span<const int32_t> logits_rows,
                                    const ForwardHooks* hooks) const;
  void gated_attention(int il, const float* xn, size_t T, const int32_t* positions, KVCache& cache,
                       const ForwardHooks* hooks, float* out) const;
  void delta_net(int il, const float* xn, size_t T, KVCache& cache, ForwardProfile* prof,
                 float* out) const;
  void advance_delta(int il, RecurrentState& state, const float* inputs, size_t n, float* o) const;
  void ffn_moe_shared(const LayerWeights& L, const float* xn, size_t T, float* out,
                      ForwardProfile* prof) const;
  // nemotron_h (model_nemotron_h.cpp): loading, the cache (Mamba-2 state, K/V for attention
  // layers, nothing for FFN-only blocks), the forward pass and its three block kinds.
  void load_nemotron_h_layer(int il, const std::string& prefix, LayerWeights& L);
  KVCache make_nemotron_h_cache(KVDType kv_dtype) const;
  std::vector<float> forward_nemotron_h(std::span<const int32_t> tokens,
                                        std::span<const int32_t> positions, KVCache& cache,
                                        std::span<const int32_t> logits_rows,
                                        const ForwardHooks* hooks) const;
  void mamba2(int il, const float* xn, size_t T, KVCache& cache, ForwardProfile* prof,
              float* out) const;
  void advance_mamba2(int il, RecurrentState& state, const float* inputs, size_t n, float* y) const;
  void attention_no_rope(int il, const float* xn, size_t T, const int32_t* positions,
                         KVCache& cache, const ForwardHooks* hooks, float* out) const;
  void ffn_relu2(const LayerWeights& L, const float* xn, size_t T, float* out,
                 ForwardProfile* prof) const;
  void ffn_moe_relu2(const LayerWeights& L, const float* xn, size_t T, float* out,
                     ForwardProfile* prof) const;
  void load_nemotron_h_moe_block(const std::string& prefix, LayerWeights& L);

  GgufFile file_;
  ModelConfig cfg_;
  std::vector<LayerWeights> layers_;
  std::vector<RopeParams> layer_rope_;  // per layer: the RoPE its kind uses (base, dimensions)
  float embd_scale_ = 1.f;              // gemma: token embeddings are multiplied by sqrt(n_embd)
  std::vector<float> output_norm_;      // [n_embd]
  PackedWeight output_;                 // rows: n_vocab, cols: n_embd
  const uint8_t* tok_embd_ = nullptr;
  DType tok_embd_type_ = DType::F32;
  uint64_t n_params_ = 0;
  size_t weight_bytes_ = 0;
};

}  // namespace accel
