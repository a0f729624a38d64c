// pflash helpers (see specprefill_pflash.h): anchors, inverse RoPE, retokenization. Must not
// call a model, read a cache or time anything.
#include "methods/specprefill_pflash.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace accel::specprefill {

std::vector<int32_t> ngram_anchor_chunks(std::span<const int32_t> tokens, int chunk, int ngram,
                                         int window) {
  if (chunk < 1) throw std::invalid_argument("[specprefill] anchors: chunk must be >= 1");
  const size_t n = tokens.size();
  if (ngram < 1 || window < ngram || n < size_t(ngram)) return {};
  const size_t g = size_t(ngram), w = std::min(size_t(window), n), q0 = n - w;
  std::vector<size_t> query_starts;  // starts of the final query's n-grams
  for (size_t s = q0; s + g <= n; ++s) query_starts.push_back(s);
  std::vector<int32_t> out;
  for (size_t p = 0; p + g <= q0; ++p) {
    bool hit = false;
    for (size_t s : query_starts)
      if (std::equal(tokens.begin() + std::ptrdiff_t(p), tokens.begin() + std::ptrdiff_t(p + g),
                     tokens.begin() + std::ptrdiff_t(s))) {
        hit = true;
        break;
      }
    if (!hit) continue;
    for (size_t c = p / size_t(chunk); c <= (p + g - 1) / size_t(chunk); ++c)
      if (out.empty() || out.back() < int32_t(c)) out.push_back(int32_t(c));
  }
  return out;  // p ascends, so chunk indices ascend and duplicates are adjacent
}

void unrotate_rope(float* x, size_t n_rows, size_t ld, int n_heads, const int32_t* pos,
                   const RopeParams& p) {
  std::vector<int32_t> neg(pos, pos + n_rows);
  for (int32_t& v : neg) v = -v;
  rope(x, n_rows, ld, n_heads, neg.data(), p);
  const double m = p.ext_factor == 0.f
                       ? double(p.attn_factor)
                       : double(p.attn_factor) * (1.0 + 0.1 * std::log(1.0 / double(p.freq_scale)));
  if (m == 1.0) return;
  const float inv = float(1.0 / (m * m));
  for (size_t r = 0; r < n_rows; ++r)
    for (int h = 0; h < n_heads; ++h) {
      float* v = x + r * ld + size_t(h) * size_t(p.head_dim);
      for (int i = 0; i < p.n_rot; ++i) v[i] *= inv;
    }
}

std::vector<int32_t> retokenize(const Tokenizer& from, const Tokenizer& to,
                                std::span<const int32_t> ids, bool add_special) {
  return to.encode(from.decode(ids), add_special, /*parse_special=*/false);
}

}  // namespace accel::specprefill
