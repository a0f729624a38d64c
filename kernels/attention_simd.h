// Forwarding header, kept only while kernels/attention.cpp still includes this name: the SIMD
// layer is kernels/simd.h. Must not grow code of its own; delete it once attention.cpp includes
// "kernels/simd.h" and says `using namespace simd;`.
#pragma once
#include "kernels/simd.h"

namespace accel {
namespace attn_simd = simd;
}  // namespace accel
