// The `small` synthetic family's target for benchmarks: made once under models-cache/small in the
// source tree (reused by later runs) and loaded once per process. Benchmarks only; tests make
// their own tiny families in scratch directories.
#pragma once
#include "models/model.h"

namespace accel::test {

const Model& small_family_target();

}  // namespace accel::test
