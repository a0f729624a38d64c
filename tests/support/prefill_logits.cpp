// all_logits (see prefill_logits.h).
#include "tests/support/prefill_logits.h"

#include "models/generation.h"

namespace accel::test {

std::vector<float> all_logits(const Model& m, const std::vector<int32_t>& toks, size_t chunk) {
  KVCache cache = m.make_cache();
  std::vector<float> out;
  prefill(m, toks, iota_positions(0, toks.size()), cache, chunk, &out);
  return out;
}

}  // namespace accel::test
