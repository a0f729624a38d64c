// Seeded synthetic model families: random-weight GGUF files (a target and one or more drafts that
// share the byte-level tokenizer), initialised as trained models are so activations stay finite
// and non-degenerate at long context. Owns the family table and the weight generator; the files
// it writes are ordinary GGUFs that run through the same loader and forward pass as real models.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kernels/dtype.h"
#include "models/model_config.h"

namespace accel {

struct SyntheticMemberSpec {
  std::string role;  // file stem: "target", "draft", ...
  Arch arch = Arch::Llama;
  int n_layer = 0, n_embd = 0, n_head = 0, n_head_kv = 0, n_ff = 0, n_ctx = 0;
  int n_expert = 0, n_expert_used = 0;  // MoE when n_expert > 0 (n_ff is then per expert)
  float rope_base = 10000.f;
  // Written as {arch}.attention.scale when set (any value, so tests can also write bad ones);
  // unset leaves the key out and the engine uses 1/sqrt(head_dim) (only tiny-scale1 sets it).
  std::optional<float> attn_scale;
  // Sliding-window architectures (gemma3): {arch}.attention.sliding_window and its period
  // ({arch}.attention.sliding_window_pattern: layer il slides iff il % period < period - 1).
  int n_swa = 0, swa_period = 0;
  // Hybrid architectures (qwen35): {arch}.full_attention_interval (layer il is recurrent iff
  // (il + 1) % interval != 0) and the Gated DeltaNet sizes ({arch}.ssm.state_size = head size of
  // keys and values, group_count = key heads, time_step_rank = value heads, conv_kernel).
  int full_attn_interval = 0, ssm_d_state = 0, ssm_n_group = 0, ssm_dt_rank = 0, ssm_d_conv = 0;
  // gemma4 (31B-style dense): sliding layers keep head size n_embd / n_head and n_head_kv KV
  // heads; full layers have their own head size and KV heads (key_length, per-layer head_count_kv)
  // and no attn_v (V = K's projection, as the 31B's k_eq_v); final logit soft-cap.
  int head_dim_full = 0, n_head_kv_full = 0;
  float final_softcap = 0.f;
  // nemotron_h: one character per block as Nemotron-H's hybrid_override_pattern ('M' Mamba-2,
  // '*' attention, '-' FFN-only; n_layer = its length), written as the per-layer head_count_kv
  // and feed_forward_length arrays; the Mamba-2 inner size (heads = ssm_dt_rank, groups =
  // ssm_n_group, state = ssm_d_state); `biases` adds the optional attention and FFN biases.
  std::string block_pattern;
  int ssm_d_inner = 0;
  bool biases = false;
  // nemotron_h_moe ('E' blocks in the pattern): n_expert experts of width n_ff, top
  // n_expert_used by sigmoid + selection bias, weights normalised and scaled by 2.5 (Nemotron 3
  // Nano's), a shared expert of width n_ff_shexp, and a latent width (0 = none).
  int n_ff_shexp = 0, moe_latent = 0;
};

struct SyntheticFamily {
  std::string name;
  std::string description;
  std::vector<SyntheticMemberSpec> members;
};

const std::vector<SyntheticFamily>& synthetic_families();
const SyntheticFamily& find_synthetic_family(const std::string& name);  // throws naming the family

// The hyper-parameters a member's file declares, as ModelConfig::from_gguf reads them back
// (without opening a file: what `kvcalc --config family/role` sizes a cache from).
ModelConfig synthetic_member_config(const SyntheticMemberSpec& spec);

class GgufWriter;

struct TokenizerSpec;

// The metadata of one member's file (architecture, hyperparameters, tokenizer, general.file_type
// in llama.cpp's numbering, family/role/seed), without tensors: what write_synthetic_model writes
// before the weights. Tests check it for every family and dtype. The tokenizer is the byte-level
// one unless `vocab` is given (e.g. a llama.cpp vocab-only file's, `models make --vocab`): then
// its tokens, merges and pre-tokenizer, and vocab_size is its token count.
void set_synthetic_metadata(GgufWriter& w, const SyntheticMemberSpec& spec,
                            const std::string& family, uint64_t seed, DType dtype,
                            const TokenizerSpec* vocab = nullptr);

// The type a matrix with rows of `row_length` elements is written in for a member of weight type
// `dtype`: dtype itself, or q8_0 when the row is not a whole number of dtype's blocks (k-quants
// need multiples of 256; the tiny families' widths are 64-352), as llama.cpp's quantizer falls
// back for such tensors. q8_0 rather than a 4-5 bit fallback so the substitute never adds error.
DType matrix_dtype(DType dtype, uint64_t row_length);

// The weight types of a member's matrices: one type, or llama.cpp's "_M" mixes, which keep
// attn_v, ffn_down and output in a higher type (q4_k_m, q5_k_m: q6_K). llama.cpp upgrades attn_v
// and ffn_down in only about half the layers (its use_more_bits rule); ours does every layer.
struct WeightScheme {
  DType base;
  std::optional<DType> high;          // for attn_v, ffn_down, output; unset: base everywhere
  WeightScheme(DType t) : base(t) {}  // NOLINT(google-explicit-constructor): a DType is a scheme
  WeightScheme(DType b, DType h) : base(b), high(h) {}
  DType for_matrix(const std::string& name) const;
  uint32_t llama_file_type() const;  // general.file_type (15 MOSTLY_Q4_K_M, 17 MOSTLY_Q5_K_M)
};
// "f32", ..., "q6_k" (one type) or "q4_k_m", "q5_k_m"; nullopt when unknown.
std::optional<WeightScheme> weight_scheme_from_name(const std::string& name);

// Writes one member as a GGUF file. Same (spec, family name, seed, scheme) -> byte-identical file.
// token_embd and output have one row per token of `vocab` (byte-level when null).
void write_synthetic_model(const SyntheticMemberSpec& spec, const std::string& family,
                           uint64_t seed, const WeightScheme& scheme, const std::string& path,
                           const TokenizerSpec* vocab = nullptr);

// Writes every member of the family into out_dir as <role>.gguf; returns the paths in table order.
std::vector<std::string> make_synthetic_family(const std::string& family,
                                               const std::string& out_dir, uint64_t seed,
                                               const WeightScheme& scheme,
                                               const TokenizerSpec* vocab = nullptr);

}  // namespace accel
