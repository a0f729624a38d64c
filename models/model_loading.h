// Helpers shared by Model's translation units (model.cpp, model_sliding_layers.cpp,
// model_hybrid.cpp): tensor lookups checked against their expected dims, weight packing, and a
// GEMM timed into the forward profile. Internal to models/: nothing outside Model uses them.
#pragma once
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/gemm.h"
#include "models/gguf.h"
#include "models/model.h"

namespace accel::model_loading {

using Clock = std::chrono::steady_clock;

// "[d0, d1, ...]" for error messages.
std::string dims_str(const std::vector<uint64_t>& d);

// Times a GEMM into the profile when one is attached.
void timed_gemm(ForwardProfile* prof, const float* X, size_t M, size_t ldx, const PackedWeight& W,
                float* Y, size_t ldy, const float* bias = nullptr);

// Causal (query, key) pairs of one head in one full-attention layer: keys at kv_pos[0, n_kv)
// visible to queries at q_pos[0, T) (key position <= query position), for ForwardProfile.
double causal_pairs(const int32_t* kv_pos, size_t n_kv, const int32_t* q_pos, size_t T);

// Looks up a tensor and checks its dims (ggml order); throws GgufError naming file and tensor.
const GgufTensorInfo& expect(const GgufFile& f, const std::string& name,
                             const std::vector<uint64_t>& dims);

// A 1-D tensor of n values as floats (any type), checked like expect().
std::vector<float> load_vector(const GgufFile& f, const std::string& name, uint64_t n);

// The row-concatenation of several [rows_i x cols] matrices packed into one weight (one GEMM for
// e.g. Q, K and V); parts of different types stay in their own types (PackedWeight::pack_mixed).
PackedWeight pack_rows(const GgufFile& f, const std::vector<const GgufTensorInfo*>& parts,
                       size_t cols);

// Expert e's [rows x cols] matrix of a stacked 3-D expert tensor t of n_expert slices (its
// dims checked by the caller), as a 2-D tensor view for pack_rows.
GgufTensorInfo expert_slice(const GgufTensorInfo& t, uint64_t e, uint64_t n_expert, uint64_t rows,
                            uint64_t cols);

// A mixture-of-experts layer's router and experts (ffn_gate_inp, ffn_{gate,up,down}_exps) into L:
// llama's MoE and qwen35moe's routed experts.
void load_routed_experts(const GgufFile& f, const std::string& p, const ModelConfig& c,
                         LayerWeights& L);

}  // namespace accel::model_loading
