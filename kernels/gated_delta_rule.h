// The Gated DeltaNet recurrence (Qwen3-Next / Qwen3.5 linear-attention layers) over a
// caller-owned state, plus the two small steps around it that fix its inputs: the per-head L2
// norm of q and k, and the alpha/beta gates. Knows nothing of layers or caches; the projections,
// conv and the output gated norm belong to the model.
//
// Definition (llama.cpp delta-net-base.cpp, qwen35.cpp and ggml_gated_delta_net), per value head
// h reading key head kh(h), with S[h] a head_v_dim x head_k_dim matrix (row j = value index j):
//   S   <- S * exp(g[t][h])
//   d_j  = beta[t][h] * (v[t][h][j] - sum_i S[j][i] k[t][kh][i])
//   S[j][i] <- S[j][i] + d_j * k[t][kh][i]
//   o[t][h][j] = q_scale * sum_i S[j][i] q[t][kh][i]
// i.e. S^T = S^T e^g + k (beta (v - (S^T e^g)^T k))^T and o = (S^T)^T q * scale in the issue's
// key-major notation. q and k are L2-normalised per head beforehand (l2_normalize_heads) and
// q_scale is 1/sqrt(head_k_dim); the gates are g = softplus(alpha + dt_bias) * A (A = -exp(A_log)
// as stored in GGUF, so g <= 0) and beta = sigmoid(b) (delta_net_gates).
//
// Head map: Qwen3.5 tiles key heads over value heads (kh = h mod n_k_heads, ggml_repeat_4d);
// Qwen3-Next interleaves them (kh = h / (n_v_heads / n_k_heads)).
//
// Batch-invariance contract (tested in tests/kernels/gated_delta_rule_test.cpp): the recurrence
// runs in sequential token order on every path. Each state row S[h][j] evolves independently of
// the other rows and is advanced token by token by one fixed operation sequence, so o and the final
// state are bit-identical for any split of a sequence into calls (decode = a one-token call), any
// thread count, and any position of the token inside the call (within one binary; AVX-512 builds
// sum in another lane tree). Prefill is blocked, not the chunked WY form: items are (value head, 8
// state rows) that walk every token with their rows in L1.
#pragma once
#include <cstddef>

namespace accel {

enum class DeltaHeadMap { Tiled, Interleaved };

struct GatedDeltaShape {
  int n_k_heads = 0;   // ssm_n_group in GGUF
  int n_v_heads = 0;   // ssm_dt_rank; a multiple of n_k_heads
  int head_k_dim = 0;  // ssm_d_state
  int head_v_dim = 0;  // ssm_d_inner / n_v_heads
  DeltaHeadMap map = DeltaHeadMap::Tiled;
};

struct GatedDeltaInputs {
  const float* q = nullptr;  // [n_tokens][n_k_heads * head_k_dim], L2-normalised per head
  size_t ldq = 0;
  const float* k = nullptr;  // [n_tokens][n_k_heads * head_k_dim], L2-normalised per head
  size_t ldk = 0;
  const float* v = nullptr;  // [n_tokens][n_v_heads * head_v_dim]
  size_t ldv = 0;
  const float* g = nullptr;     // [n_tokens][n_v_heads] log decay (<= 0)
  const float* beta = nullptr;  // [n_tokens][n_v_heads] in (0, 1)
  size_t ldgate = 0;            // row stride of g and beta
  float q_scale = 0.f;
};

// state: [n_v_heads][head_v_dim][head_k_dim], advanced in place. o: [n_tokens][n_v_heads *
// head_v_dim], row stride ldo; must not overlap the inputs or the state.
void gated_delta_rule(const GatedDeltaShape& s, const GatedDeltaInputs& in, size_t n_tokens,
                      float* state, float* o, size_t ldo);

size_t gated_delta_state_elements(const GatedDeltaShape& s);

// In place: each of the n_heads heads (head_dim floats) of each row becomes
// x / max(||x||_2, eps) (ggml_l2_norm; the sum of squares in double), row stride ld.
void l2_normalize_heads(float* x, size_t n_rows, size_t ld, int n_heads, int head_dim, float eps);

// g[t][h] = softplus(alpha[t][h] + dt_bias[h]) * A[h], beta[t][h] = sigmoid(b[t][h]) =
// 1 / (1 + e^-b). alpha, b: [n_tokens][n_heads] with row stride ld; g and beta are written with
// row stride n_heads.
void delta_net_gates(const float* alpha, const float* b, size_t ld, size_t n_tokens, int n_heads,
                     const float* dt_bias, const float* A, float* g, float* beta);

}  // namespace accel
