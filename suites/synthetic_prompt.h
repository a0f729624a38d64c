// The built-in synthetic workload: seeded prompts of an exact token length, for timing methods
// before (or without) a real suite. Owns only prompt generation; no scoring.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

namespace accel {

// n token ids: BOS first when bos >= 0, then ids drawn uniformly from [0, n_vocab) skipping the
// special ids listed in `exclude`. Same (n_vocab, bos, exclude, n, seed) -> same prompt.
std::vector<int32_t> synthetic_prompt(int n_vocab, int32_t bos, const std::vector<int32_t>& exclude,
                                      size_t n, uint64_t seed);

}  // namespace accel
