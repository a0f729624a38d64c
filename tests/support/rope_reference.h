// An independent double-precision RoPE for tests, written from the published formulas (HF
// transformers' inverse-frequency form of YaRN and Llama 3 factors; rotations as complex products)
// rather than from kernels/elementwise.cpp, so the kernel and its own reference are checked
// against something that does not share their code. Tests only.
#pragma once
#include <cstdint>
#include <vector>

#include "kernels/elementwise.h"

namespace accel::test {

// Per-pair inverse frequency (radians per position) for p's scalings.
std::vector<double> rope_inverse_frequencies(const RopeParams& p);
// The factor on cos and sin: attn_factor, times 0.1 ln(1 / freq_scale) + 1 under YaRN.
double rope_attention_factor(const RopeParams& p);
// Rotates one head (head_dim doubles) in place at position pos.
void rope_reference_head(std::vector<double>& head, const RopeParams& p, int32_t pos);

}  // namespace accel::test
