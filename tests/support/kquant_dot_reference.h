// An independent scalar model of the GEMM's integer-dot paths (kernels/kquant_panel.h,
// kernels/mxfp4_panel.h, kernels/q8_0_panel.h): one output from a row of raw ggml blocks (read by
// byte offset, not through the kernel's structs or panels) and a row of activations quantized with
// quantize_activations_q8_K (k-quants) or quantize_activations_q8_0 (MXFP4, q8_0). For tests only.
#pragma once
#include <cstddef>
#include <cstdint>

#include "kernels/dtype.h"

namespace accel::test {

// ggml's get_scale_min_k4 over a q4_K/q5_K block's 12 scale bytes, written plainly (the tests'
// reference for kquant_scale_min).
void ggml_scale_min(int j, const uint8_t* q, int& sc, int& m);

struct KDotReference {
  float model;       // the documented float sequence, which the kernel must equal bit for bit
  double exact;      // the same sum without float rounding: sum_b dx_b * (d * A_b - dmin * B_b)
  double magnitude;  // sum over the fma terms of |dx_b * d * A_b| + |dx_b * dmin * B_b|
};

// Weight row `w` (K / 256 blocks of type t, or K / 32 for MXFP4 and q8_0), activations x (K
// floats), optional bias.
KDotReference kquant_dot_reference(DType t, const uint8_t* w, const float* x, size_t K,
                                   const float* bias);

}  // namespace accel::test
