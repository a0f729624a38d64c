// CritiPrefill's plan, key-block representatives and block selection (see critiprefill_select.h).
// The loops over blocks are written so that each block's value is the plain sequential chain of
// the header's numeric order (the compiler may vectorise across blocks, never within a chain).
#include "methods/critiprefill_select.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace accel::critiprefill {

void Config::validate() const {
  auto bad = [](const std::string& field, const std::string& why) {
    throw std::invalid_argument("critiprefill: '" + field + "' " + why);
  };
  if (block < 1) bad("block", "must be >= 1");
  if (segment < 1) bad("segment", "must be >= 1");
  if (segment % block != 0)
    bad("segment", "must be a multiple of 'block' (" + std::to_string(segment) + " vs " +
                       std::to_string(block) + ")");
  if (budget < 0) bad("budget", "must be >= 0");
  if (threshold < 0) bad("threshold", "must be >= 0");
  if (layer_skip < 0) bad("layer_skip", "must be >= 0");
}

size_t Config::pruned_segments(size_t n) const {
  size_t count = 0;
  for (size_t start = 0; start < n; start += size_t(segment)) count += segment_pruned(start, n);
  return count;
}

size_t Config::pool_blocks(size_t n) const {
  const size_t S = size_t(segment);
  const size_t n_seg = (n + S - 1) / S;
  return n_seg == 0 ? 0 : (n_seg - 1) * S / size_t(block);
}

KeyBlocks::KeyBlocks(const Heads& h, int block, size_t capacity_blocks)
    : block_(block),
      G_(h.n_kv_heads),
      D_(h.head_dim),
      cap_(capacity_blocks),
      max_(size_t(h.n_kv_heads) * size_t(h.head_dim) * capacity_blocks),
      min_(max_.size()) {}

void KeyBlocks::append(const float* k, size_t ld, size_t n) {
  if (block_ < 1 || n % size_t(block_) != 0 || n_ + n / size_t(block_) > cap_)
    throw std::invalid_argument("critiprefill: key blocks take whole blocks within capacity (" +
                                std::to_string(n) + " rows)");
  for (size_t b0 = 0; b0 < n; b0 += size_t(block_), ++n_)
    for (int g = 0; g < G_; ++g)
      for (int d = 0; d < D_; ++d) {
        const size_t col = size_t(g) * size_t(D_) + size_t(d);
        float mx = k[b0 * ld + col], mn = mx;
        for (size_t t = 1; t < size_t(block_); ++t) {
          const float x = k[(b0 + t) * ld + col];
          mx = std::max(mx, x);
          mn = std::min(mn, x);
        }
        max_[col * cap_ + n_] = mx;
        min_[col * cap_ + n_] = mn;
      }
}

void segment_scores(const Heads& h, const float* q, size_t ldq, size_t n_q, const KeyBlocks& keys,
                    size_t n_eligible, float* P) {
  const int G = h.n_heads / h.n_kv_heads, D = h.head_dim;
  const size_t E = n_eligible;
  if (n_q == 0 || E == 0 || E > keys.size())
    throw std::invalid_argument("critiprefill: segment_scores needs queries and 1.." +
                                std::to_string(keys.size()) + " eligible blocks (got " +
                                std::to_string(E) + ")");
  // Query representatives: element-wise max / min over the segment's rows, [H][D].
  const size_t width = size_t(h.n_heads) * size_t(D);
  std::vector<float> qmax(q, q + width), qmin(q, q + width);
  for (size_t t = 1; t < n_q; ++t)
    for (size_t j = 0; j < width; ++j) {
      qmax[j] = std::max(qmax[j], q[t * ldq + j]);
      qmin[j] = std::min(qmin[j], q[t * ldq + j]);
    }
  std::vector<float> a(E), b(E), c(E), e(E), s(E);
  for (int g = 0; g < h.n_kv_heads; ++g) {
    float* row = P + size_t(g) * E;
    for (int hh = 0; hh < G; ++hh) {
      const size_t qo = size_t(g * G + hh) * size_t(D);
      std::fill(a.begin(), a.end(), 0.f);
      std::fill(b.begin(), b.end(), 0.f);
      std::fill(c.begin(), c.end(), 0.f);
      std::fill(e.begin(), e.end(), 0.f);
      for (int d = 0; d < D; ++d) {
        const float x = qmax[qo + size_t(d)], y = qmin[qo + size_t(d)];
        const float* kx = keys.max_row(g, d);
        const float* kn = keys.min_row(g, d);
        for (size_t j = 0; j < E; ++j) {
          a[j] = a[j] + x * kx[j];
          b[j] = b[j] + y * kx[j];
          c[j] = c[j] + x * kn[j];
          e[j] = e[j] + y * kn[j];
        }
      }
      for (size_t j = 0; j < E; ++j) {
        const float sh = std::max((a[j] + b[j]) / 2.f, (c[j] + e[j]) / 2.f);
        s[j] = hh == 0 ? sh : s[j] + sh;
      }
    }
    float mx = -std::numeric_limits<float>::infinity();
    for (size_t j = 0; j < E; ++j) {
      row[j] = s[j] / float(G);
      mx = std::max(mx, row[j]);
    }
    float sum = 0.f;
    for (size_t j = 0; j < E; ++j) {
      row[j] = std::exp(row[j] - mx);
      sum = sum + row[j];
    }
    for (size_t j = 0; j < E; ++j) row[j] = row[j] / sum;
  }
}

void fuse_layers(bool layer_fusion, int layer, float* P, size_t n, std::vector<float>& state) {
  if (!layer_fusion) return;
  if (layer > 1 && state.size() == n)
    for (size_t j = 0; j < n; ++j) P[j] = 0.25f * state[j] + 0.75f * P[j];
  state.assign(P, P + n);
}

size_t top_blocks(const float* P, size_t n, int k, int32_t* out) {
  const size_t m = std::min(n, size_t(std::max(k, 0)));
  std::vector<int32_t> idx(n);
  for (size_t j = 0; j < n; ++j) idx[j] = int32_t(j);
  auto key = [&](int32_t j) {
    const float v = P[j];
    return std::isnan(v) ? -std::numeric_limits<float>::infinity() : v;
  };
  std::partial_sort(idx.begin(), idx.begin() + std::ptrdiff_t(m), idx.end(),
                    [&](int32_t x, int32_t y) {
                      const float a = key(x), b = key(y);
                      return a > b || (a == b && x < y);
                    });
  std::sort(idx.begin(), idx.begin() + std::ptrdiff_t(m));
  std::copy(idx.begin(), idx.begin() + std::ptrdiff_t(m), out);
  return m;
}

std::vector<int32_t> select_blocks(const Config& c, const Heads& h, int layer, const float* q,
                                   size_t ldq, size_t n_q, const KeyBlocks& keys, size_t n_eligible,
                                   std::vector<float>& state) {
  const size_t E = n_eligible, Hkv = size_t(h.n_kv_heads);
  std::vector<float> P(Hkv * E);
  segment_scores(h, q, ldq, n_q, keys, E, P.data());
  fuse_layers(c.layer_fusion, layer, P.data(), P.size(), state);
  const size_t k = std::min(E, size_t(std::max(c.top_k(), 0)));
  std::vector<int32_t> out(Hkv * k);
  for (size_t g = 0; g < Hkv; ++g) top_blocks(P.data() + g * E, E, int(k), out.data() + g * k);
  return out;
}

}  // namespace accel::critiprefill
