// The `small` synthetic family's target for benchmarks: made once under models-cache/small in the
// source tree (reused by later runs) and loaded once per process. Benchmarks only; tests make
// their own tiny families in scratch directories.
#pragma once
#include "models/model.h"

namespace accel::test {

const Model& small_family_target();
// The `medium` family's target in q4_k_m (models-cache/medium-q4_k_m, made on first use, ~0.6 GB):
// decode of a k-quant model too large for the last-level cache.
const Model& medium_q4_k_m_target();

}  // namespace accel::test
