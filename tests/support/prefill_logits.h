// The logits of every prompt position from a chunked prefill into a fresh cache, for the engine
// tests that compare chunkings, threads and families. Test support only; owns no model state.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "models/model.h"

namespace accel::test {

// [toks.size()][n_vocab]: `m` prefilling `toks` at positions 0.. in chunks of `chunk` tokens.
std::vector<float> all_logits(const Model& m, const std::vector<int32_t>& toks, size_t chunk);

}  // namespace accel::test
