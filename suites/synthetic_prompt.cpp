// synthetic_prompt (see synthetic_prompt.h): splitmix64 so the ids do not depend on the C++
// library's distribution implementations.
#include "suites/synthetic_prompt.h"

#include <algorithm>
#include <stdexcept>

namespace accel {

std::vector<int32_t> synthetic_prompt(int n_vocab, int32_t bos, const std::vector<int32_t>& exclude,
                                      size_t n, uint64_t seed) {
  if (n_vocab <= int(exclude.size()))
    throw std::invalid_argument("synthetic_prompt: no usable ids");
  std::vector<int32_t> out;
  out.reserve(n);
  if (bos >= 0 && n > 0) out.push_back(bos);
  uint64_t s = seed * 0x9e3779b97f4a7c15ull + 0x1234567ull;
  while (out.size() < n) {
    uint64_t z = (s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    const int32_t id = int32_t(z % uint64_t(n_vocab));
    if (std::find(exclude.begin(), exclude.end(), id) == exclude.end()) out.push_back(id);
  }
  return out;
}

}  // namespace accel
