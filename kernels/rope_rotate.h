// The rotation of one RoPE pair, shared by rope() (elementwise.cpp) and rope_ggml_angles
// (models/rope_ggml.cpp), with each layout's rounding spelled out so that every version of a loop
// the compiler makes from it gives the same bits. Must not go back to a plain x0 * c - x1 * s
// beside x0 * s + x1 * c on adjacent elements: GCC 12 at -O3 vectorizes that alternating pair into
// vfmaddsub (fused, although the project builds with -ffp-contract=off) in its 512- and 256-bit
// versions of the loop and into vmulps + vaddsubps (unfused) in its 128-bit one, and it chose
// between them at run time by an alias check on the row's address (fixed 2026-11-29).
#pragma once

#include <cmath>

#include "kernels/elementwise.h"

namespace accel::rope_rotate {

// Adjacent pairs (llama): x0' = x0 c - x1 s and x1' = x0 s + x1 c, each one fused multiply-add
// on a rounded product: the bits of the wide versions, which ran whenever the alias check passed.
inline void rotate_fused(float& a, float& b, float c, float s) {
  const float x0 = a, x1 = b;
  a = std::fma(x0, c, -(x1 * s));
  b = std::fma(x0, s, x1 * c);
}

// Half-split pairs (NeoX): the same expressions with every product rounded, as -ffp-contract=off
// keeps them: their outputs lie half a head apart, so no lane alternates between them.
inline void rotate_unfused(float& a, float& b, float c, float s) {
  const float x0 = a, x1 = b;
  a = x0 * c - x1 * s;
  b = x0 * s + x1 * c;
}

// One head's n_rot / 2 pairs (half of them), pair i by the angle whose cos and sin are cs[2i] and
// cs[2i + 1].
inline void rotate_head(float* v, const float* cs, int half, RopeLayout layout) {
  if (layout == RopeLayout::Adjacent)
    for (int i = 0; i < half; ++i) rotate_fused(v[2 * i], v[2 * i + 1], cs[2 * i], cs[2 * i + 1]);
  else
    for (int i = 0; i < half; ++i) rotate_unfused(v[i], v[i + half], cs[2 * i], cs[2 * i + 1]);
}

}  // namespace accel::rope_rotate
