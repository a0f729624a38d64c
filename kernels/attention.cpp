// PLACEHOLDER (being replaced by the optimised kernel): plain per-(query, head) attention with a
// two-pass softmax; batch invariant because every query is computed alone in key-index order.
#include "kernels/attention.h"

#include <cmath>
#include <vector>

namespace accel {

void attention_causal(const AttentionShape& s, const float* q, size_t ldq, const int32_t* q_pos,
                      size_t n_q, const float* k, const float* v, size_t ldkv,
                      const int32_t* kv_pos, size_t n_kv, float* out, size_t ldo) {
  const int group = s.n_heads / s.n_kv_heads, D = s.head_dim;
#pragma omp parallel
  {
    std::vector<float> sc(n_kv);
#pragma omp for schedule(static) collapse(2)
    for (size_t i = 0; i < n_q; ++i)
      for (int h = 0; h < s.n_heads; ++h) {
        const float* qi = q + i * ldq + size_t(h) * D;
        const size_t kvo = size_t(h / group) * D;
        float m = -INFINITY;
        for (size_t j = 0; j < n_kv; ++j) {
          if (kv_pos[j] > q_pos[i]) continue;
          float acc = 0;
          for (int d = 0; d < D; ++d) acc += qi[d] * k[j * ldkv + kvo + d];
          sc[j] = acc * s.scale;
          m = std::fmax(m, sc[j]);
        }
        float* o = out + i * ldo + size_t(h) * D;
        for (int d = 0; d < D; ++d) o[d] = 0;
        float l = 0;
        for (size_t j = 0; j < n_kv; ++j) {
          if (kv_pos[j] > q_pos[i]) continue;
          const float p = std::exp(sc[j] - m);
          l += p;
          for (int d = 0; d < D; ++d) o[d] += p * v[j * ldkv + kvo + d];
        }
        if (l > 0)
          for (int d = 0; d < D; ++d) o[d] /= l;
      }
  }
}

void attention_reference(const AttentionShape& s, const float* q, size_t ldq, const int32_t* q_pos,
                         size_t n_q, const float* k, const float* v, size_t ldkv,
                         const int32_t* kv_pos, size_t n_kv, double* out, size_t ldo) {
  const int group = s.n_heads / s.n_kv_heads, D = s.head_dim;
  std::vector<double> sc(n_kv);
  for (size_t i = 0; i < n_q; ++i)
    for (int h = 0; h < s.n_heads; ++h) {
      const size_t kvo = size_t(h / group) * D;
      double m = -INFINITY;
      for (size_t j = 0; j < n_kv; ++j) {
        if (kv_pos[j] > q_pos[i]) continue;
        double acc = 0;
        for (int d = 0; d < D; ++d) acc += double(q[i * ldq + h * D + d]) * k[j * ldkv + kvo + d];
        sc[j] = acc * s.scale;
        m = std::max(m, sc[j]);
      }
      double l = 0;
      double* o = out + i * ldo + size_t(h) * D;
      for (int d = 0; d < D; ++d) o[d] = 0;
      for (size_t j = 0; j < n_kv; ++j) {
        if (kv_pos[j] > q_pos[i]) continue;
        const double p = std::exp(sc[j] - m);
        l += p;
        for (int d = 0; d < D; ++d) o[d] += p * v[j * ldkv + kvo + d];
      }
      if (l > 0)
        for (int d = 0; d < D; ++d) o[d] /= l;
    }
}

}  // namespace accel
