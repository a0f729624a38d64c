// A plain double-precision model of GPT-OSS's MoE FFN (models/moe_ffn_oai.h) for one token, from
// the raw weights, with a first-order bound on how far the float implementation may stray from it;
// and seeded random layers for the tests and the benchmark. Shares no code with the unit beyond
// dequantize_row.
#pragma once
#include <cstdint>
#include <vector>

#include "models/moe_ffn_oai.h"

namespace accel::test {

struct MoeOaiReference {
  std::vector<double> out;    // n_embd
  std::vector<double> bound;  // n_embd: |float - out| allowed per element (derivation in .cpp)
  std::vector<int> chosen;    // experts in descending exact logit, ties to the lower index
  // The exact gap between the k-th and (k+1)-th logits minus both their float error bounds; when
  // <= 0 the float router may legitimately choose differently and `bound` means nothing.
  double selection_margin = 0;
};

MoeOaiReference moe_ffn_oai_reference(const MoeOaiSource& src, const float* x);

// Seeded N(0, sd) weights of one layer (router f32, experts of type t, biases f32), owning the
// buffers `src` points at (so move it, never copy it).
struct MoeOaiLayer {
  std::vector<uint8_t> router, gate, up, down;
  std::vector<float> router_b, gate_b, up_b, down_b;
  MoeOaiSource src;
};
struct MoeOaiLayerScales {
  float router = 1.f, gate_up = 0.5f, down = 0.1f, bias = 1.f;
};
MoeOaiLayer random_moe_oai_layer(DType t, int n_embd, int n_ff, int n_expert, int n_used,
                                 uint64_t seed, MoeOaiLayerScales sd = {});

}  // namespace accel::test
