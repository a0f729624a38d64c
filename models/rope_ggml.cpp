// rope_ggml_angles (see rope_ggml.h). Row by row, so a token's result does not depend on its batch.
#include "models/rope_ggml.h"

#include <cmath>
#include <vector>

#include "kernels/check.h"
#include "kernels/rope_rotate.h"
#include "kernels/threading.h"

namespace accel {

void rope_ggml_angles(float* x, size_t n_rows, size_t ld, int n_heads, const int32_t* pos,
                      const RopeParams& p) {
  ACCEL_CHECK(p.n_rot >= 2 && p.n_rot % 2 == 0 && p.n_rot <= p.head_dim,
              "n_rot %d must be even and at most head_dim %d", p.n_rot, p.head_dim);
  ACCEL_CHECK(p.ext_factor == 0.f, "ggml-angle RoPE has no YaRN");
  ACCEL_CHECK(p.freq_factors.empty() || p.freq_factors.size() == size_t(p.n_rot / 2),
              "%zu frequency factors for %d rotated pairs", p.freq_factors.size(), p.n_rot / 2);
  const int half = p.n_rot / 2;
  const float theta_scale = std::pow(p.freq_base, -2.0f / float(p.n_rot));
  parallel_ranges(n_rows, double(n_rows) * double(n_heads) * double(half) * 40,
                  [&](size_t r0, size_t r1, int) {
                    std::vector<float> cs(size_t(half) * 2);
                    for (size_t r = r0; r < r1; ++r) {
                      float theta = float(pos[r]);
                      for (int i = 0; i < half; ++i) {
                        // ggml divides the angle by the pair's factor before scaling it.
                        const float ff = p.freq_factors.empty() ? 1.f : p.freq_factors[size_t(i)];
                        const float th = p.freq_scale * (theta / ff);
                        cs[2 * i] = std::cos(th) * p.attn_factor;
                        cs[2 * i + 1] = std::sin(th) * p.attn_factor;
                        theta *= theta_scale;
                      }
                      for (int h = 0; h < n_heads; ++h)
                        rope_rotate::rotate_head(x + r * ld + size_t(h) * p.head_dim, cs.data(),
                                                 half, p.layout);
                    }
                  });
}

}  // namespace accel
