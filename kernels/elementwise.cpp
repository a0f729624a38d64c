// Implementations of elementwise.h. Each loop is written so that a row's result depends only on
// that row; no cross-row reductions, no batch-dependent branches.
#include "kernels/elementwise.h"

#include "kernels/fp16.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/check.h"
#include "kernels/rope_rotate.h"
#include "kernels/simd.h"
#include "kernels/threading.h"

namespace accel {

namespace {
// Work estimates for parallel_for's threshold, in its flop-like units (GEMM's multiply-add = 2,
// 0.0080 ns of one thread's CPU time on the 2-core Xeon of issue 9), from each loop's serial CPU
// time in tests/bench/bench_threads_under_load BM_SerialCost: rmsnorm 0.63 ns per element; rope
// 1071 ns per row of 32 angles and 12 heads, 1020 ns with 1 head, so 0.145 ns per rotated pair
// and 31.7 ns per angle (then one pow, one cos, one sin in double; the pow is now hoisted out of
// the row loop, so this overestimates a little).
constexpr double kRmsnormWorkPerElement = 80;
constexpr double kRopeWorkPerAngle = 4000;
constexpr double kRopeWorkPerPair = 18;
}  // namespace

void rmsnorm(const float* x, size_t n_rows, size_t dim, size_t ldx, const float* weight, float eps,
             float* out, size_t ldo) {
  const double work = double(n_rows) * double(dim) * kRmsnormWorkPerElement;
  parallel_ranges(n_rows, work, [&](size_t r0, size_t r1, int) {
    for (size_t r = r0; r < r1; ++r) {
      const float* xr = x + r * ldx;
      float* o = out + r * ldo;
      // Sum of squares in double: one fixed sequential order, and no loss at 32K-wide activations.
      double ss = 0;
      for (size_t i = 0; i < dim; ++i) ss += double(xr[i]) * double(xr[i]);
      const float inv = float(1.0 / std::sqrt(ss / double(dim) + double(eps)));
      for (size_t i = 0; i < dim; ++i) o[i] = xr[i] * inv * weight[i];
    }
  });
}

void rmsnorm_reference(const float* x, size_t n_rows, size_t dim, size_t ldx, const float* weight,
                       float eps, double* out, size_t ldo) {
  for (size_t r = 0; r < n_rows; ++r) {
    double ss = 0;
    for (size_t i = 0; i < dim; ++i) ss += double(x[r * ldx + i]) * x[r * ldx + i];
    const double inv = 1.0 / std::sqrt(ss / dim + eps);
    for (size_t i = 0; i < dim; ++i) out[r * ldo + i] = x[r * ldx + i] * inv * weight[i];
  }
}

namespace {
// Pair (a, b) offsets of rotation pair i within a head.
inline void rope_pair(const RopeParams& p, int i, int& a, int& b) {
  if (p.layout == RopeLayout::Adjacent) {
    a = 2 * i;
    b = 2 * i + 1;
  } else {
    a = i;
    b = i + p.n_rot / 2;
  }
}

// YaRN's ramp weight of pair i: 1 below `low` (extrapolate), 0 above `high` (interpolate).
inline double yarn_ramp(double low, double high, int i) {
  const double y = (double(i) - low) / std::max(0.001, high - low);
  return 1.0 - std::min(1.0, std::max(0.0, y));
}

// The magnitude multiplier on cos and sin (see elementwise.h).
inline double rope_mscale(const RopeParams& p) {
  if (p.ext_factor == 0.f) return double(p.attn_factor);
  return double(p.attn_factor) * (1.0 + 0.1 * std::log(1.0 / double(p.freq_scale)));
}

// theta = position * w[i]: every scaling is a per-pair factor on the position, so it is computed
// once per call and the angle of a row depends on (position, i) alone.
std::vector<double> rope_angle_rates(const RopeParams& p) {
  const int half = p.n_rot / 2;
  double low = 0, high = 0;
  if (p.ext_factor != 0.f) rope_yarn_corr_dims(p, low, high);
  std::vector<double> w(static_cast<size_t>(half));
  for (int i = 0; i < half; ++i) {
    double extrap = std::pow(double(p.freq_base), -2.0 * double(i) / double(p.n_rot));
    if (!p.freq_factors.empty()) extrap /= double(p.freq_factors[size_t(i)]);
    const double interp = double(p.freq_scale) * extrap;
    if (p.ext_factor == 0.f) {
      w[size_t(i)] = interp;
    } else {
      const double r = yarn_ramp(low, high, i) * double(p.ext_factor);
      w[size_t(i)] = interp * (1.0 - r) + extrap * r;
    }
  }
  return w;
}
}  // namespace

void rope_yarn_corr_dims(const RopeParams& p, double& low, double& high) {
  // ggml's ggml_rope_yarn_corr_dim: the pair index whose wavelength makes `b` rotations over
  // n_ctx_orig positions.
  const double pi = 3.14159265358979323846;
  auto corr = [&](double b) {
    return double(p.n_rot) * std::log(double(p.n_ctx_orig) / (b * 2.0 * pi)) /
           (2.0 * std::log(double(p.freq_base)));
  };
  low = std::max(0.0, std::floor(corr(double(p.beta_fast))));
  high = std::min(double(p.n_rot - 1), std::ceil(corr(double(p.beta_slow))));
}

void rope(float* x, size_t n_rows, size_t ld, int n_heads, const int32_t* pos,
          const RopeParams& p) {
  ACCEL_CHECK(p.n_rot >= 0 && p.n_rot % 2 == 0 && p.n_rot <= p.head_dim,
              "n_rot %d must be even and at most head_dim %d", p.n_rot, p.head_dim);
  ACCEL_CHECK(p.freq_factors.empty() || p.freq_factors.size() == size_t(p.n_rot / 2),
              "%zu frequency factors for n_rot %d (need n_rot / 2)", p.freq_factors.size(),
              p.n_rot);
  const int half = p.n_rot / 2;
  const std::vector<double> w = rope_angle_rates(p);
  const double m = rope_mscale(p);
  const double work = double(n_rows) * (double(half) * kRopeWorkPerAngle +
                                        double(n_heads) * double(half) * kRopeWorkPerPair);
  parallel_ranges(n_rows, work, [&](size_t r0, size_t r1, int) {
    std::vector<float> cs(size_t(half) * 2);
    for (size_t r = r0; r < r1; ++r) {
      for (int i = 0; i < half; ++i) {
        const double th = double(pos[r]) * w[size_t(i)];
        cs[2 * i] = float(std::cos(th) * m);
        cs[2 * i + 1] = float(std::sin(th) * m);
      }
      for (int h = 0; h < n_heads; ++h)
        rope_rotate::rotate_head(x + r * ld + size_t(h) * p.head_dim, cs.data(), half, p.layout);
    }
  });
}

// The formulas of elementwise.h term by term, per element, in double.
void rope_reference(double* x, size_t n_rows, size_t ld, int n_heads, const int32_t* pos,
                    const RopeParams& p) {
  double low = 0, high = 0;
  if (p.ext_factor != 0.f) rope_yarn_corr_dims(p, low, high);
  const double m = rope_mscale(p);
  for (size_t r = 0; r < n_rows; ++r)
    for (int h = 0; h < n_heads; ++h)
      for (int i = 0; i < p.n_rot / 2; ++i) {
        int a, b;
        rope_pair(p, i, a, b);
        double* v = x + r * ld + size_t(h) * p.head_dim;
        const double ff = p.freq_factors.empty() ? 1.0 : double(p.freq_factors[size_t(i)]);
        const double extrap =
            double(pos[r]) * std::pow(double(p.freq_base), -2.0 * i / p.n_rot) / ff;
        const double interp = double(p.freq_scale) * extrap;
        double th = interp;
        if (p.ext_factor != 0.f) {
          const double mix = yarn_ramp(low, high, i) * double(p.ext_factor);
          th = interp * (1.0 - mix) + extrap * mix;
        }
        const double x0 = v[a], x1 = v[b];
        v[a] = m * (x0 * std::cos(th) - x1 * std::sin(th));
        v[b] = m * (x0 * std::sin(th) + x1 * std::cos(th));
      }
}

void softmax(float* x, size_t n) {
  if (n == 0) return;
  float m = x[0];
  for (size_t i = 1; i < n; ++i) m = std::fmax(m, x[i]);
  double sum = 0;
  for (size_t i = 0; i < n; ++i) {
    x[i] = std::exp(x[i] - m);
    sum += x[i];
  }
  const float inv = float(1.0 / sum);
  for (size_t i = 0; i < n; ++i) x[i] *= inv;
}

double log_sum_exp(const float* x, size_t n) {
  if (n == 0) return -INFINITY;
  double m = x[0];
  for (size_t i = 1; i < n; ++i) m = std::fmax(m, double(x[i]));
  // All -inf (log 0) or any +inf: the answer is m; x - m below would be inf - inf = NaN.
  if (std::isinf(m)) return m;
  double sum = 0;
  for (size_t i = 0; i < n; ++i) sum += std::exp(double(x[i]) - m);
  return m + std::log(sum);
}

namespace {

// silu(g) * u per lane. With e = e^-|g| in [0, 1] (simd::exp_nonpos: no overflow, the same
// operations in every lane and in a masked tail), silu(g) = g / (1 + e) for g >= 0 and
// g * e / (1 + e) for g < 0: both are g / (1 + e^-g). Vectorised because the scalar libm exp
// per element was most of a dense FFN's non-GEMM time (2.56 ns per element, about 5% of a
// 512-token prefill of `small` on one thread).
inline simd::vf silu_times(simd::vf g, simd::vf u) {
  using namespace simd;
  const vf e = exp_nonpos(min(g, sub(zero(), g)));
  const vf num = sel(lt(g, zero()), mul(g, e), g);
  return mul(div(num, add(set1(1.f), e)), u);
}

}  // namespace

void swiglu(const float* gate, const float* up, float* out, size_t n) {
  // Loads before the store of each vector: out may alias gate or up.
  size_t i = 0;
  for (; i + simd::W <= n; i += simd::W)
    simd::store(out + i, silu_times(simd::load(gate + i), simd::load(up + i)));
  if (i < n) {
    const auto m = simd::first(int(n - i));
    simd::store_n(out + i, silu_times(simd::load_n(gate + i, m), simd::load_n(up + i, m)), m);
  }
}

void swiglu_oai(const float* gate, const float* up, float* out, size_t n, float alpha,
                float limit) {
  for (size_t i = 0; i < n; ++i) {
    const float g = std::min(gate[i], limit);
    const float u = std::clamp(up[i], -limit, limit);
    out[i] = g / (1.f + std::exp(alpha * -g)) * (u + 1.f);
  }
}

namespace {

// ggml's table entry for an fp16 input: gelu_tanh in float, rounded to fp16. ggml-cpu is built
// with GCC's default -ffp-contract=fast, which makes 1 + A*h*h one fma; this project builds with
// contraction off, so the fma is written out. Without it one of the 39,424 entries in (-10, 10)
// differed from libggml-cpu's (h = -0x1.ffcp+0).
float gelu_tanh_fp16(float x) {
  const float h = fp16_to_f32(f32_to_fp16(x));
  const float g =
      0.5f * h * (1.0f + std::tanh(0.79788456080286535588f * h * std::fma(0.044715f * h, h, 1.0f)));
  return fp16_to_f32(f32_to_fp16(g));
}

// The 65,536 entries, one per fp16 bit pattern, computed once (as ggml's table): a lookup instead
// of a tanh per activation, the same floats by construction.
const std::vector<float>& gelu_table() {
  static const std::vector<float> table = [] {
    std::vector<float> t(65536);
    for (uint32_t h = 0; h < 65536; ++h) t[h] = gelu_tanh_fp16(fp16_to_f32(uint16_t(h)));
    return t;
  }();
  return table;
}

}  // namespace

float gelu_tanh_table_entry(float x) {
  return gelu_tanh_fp16(x);
}

void geglu_tanh(const float* gate, const float* up, float* out, size_t n) {
  const float* table = gelu_table().data();
  for (size_t i = 0; i < n; ++i) {
    const float x = gate[i];
    const float g = x <= -10.f ? 0.f : x >= 10.f ? x : table[f32_to_fp16(x)];
    out[i] = g * up[i];
  }
}

void add_inplace(float* y, const float* x, size_t n) {
  for (size_t i = 0; i < n; ++i) y[i] += x[i];
}

}  // namespace accel
