// A plain double-precision model of GPT-OSS's MoE FFN (models/moe_ffn_oai.h) for one token, from
// the raw weights, with a first-order bound on how far the float implementation may stray from it.
// For tests only; shares no code with the unit beyond dequantize_row.
#pragma once
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

}  // namespace accel::test
