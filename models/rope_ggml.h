// RoPE with ggml's single-precision angles, for architectures whose normed Q/K make attention
// sensitive to angle rounding (gemma3). Owns only that arithmetic; kernels/elementwise.h's rope()
// (angles in double) stays the engine's RoPE for every other architecture.
#pragma once
#include <cstddef>
#include <cstdint>

#include "kernels/elementwise.h"

namespace accel {

// As rope() (same pairs, same in-place rows), with each row's angles computed as ggml's CPU
// backend computes them: theta_0 = position in float, theta_{i+1} = theta_i * powf(base, -2 /
// n_rot) in float, cos/sin in float of freq_scale * (theta_i / freq_factors[i]) (factor 1 when
// there are none), times attn_factor. The float
// products drift from the exact angles by up to ~1e-5 rad at positions in the thousands; Q and K
// of norm sqrt(head_dim) turn that into score differences llama.cpp's logits show at 1e-4.
// Refuses YaRN (ACCEL_CHECK): none of its callers has it.
void rope_ggml_angles(float* x, size_t n_rows, size_t ld, int n_heads, const int32_t* pos,
                      const RopeParams& p);

}  // namespace accel
