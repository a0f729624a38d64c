// rope_reference.h: RoPE from the formulas, for tests.
#include "tests/support/rope_reference.h"

#include <algorithm>
#include <cmath>
#include <complex>

namespace accel::test {

namespace {
constexpr double kPi = 3.14159265358979323846;
}  // namespace

// YaRN as HF transformers' _compute_yarn_parameters writes it: inverse frequencies of the
// extrapolated (original) and interpolated (divided by the factor) model, blended per dimension
// pair by an extrapolation weight that is 1 for the fast-rotating pairs and falls linearly to 0
// between the two correction dimensions; cos and sin are scaled by the attention factor
// 0.1 ln(factor) + 1. Frequency factors (Llama 3) divide each inverse frequency first.
std::vector<double> rope_inverse_frequencies(const RopeParams& p) {
  const int half = p.n_rot / 2;
  std::vector<double> inv(static_cast<size_t>(half));
  // Correction dimension of b rotations over the original context.
  auto correction_dim = [&](double rotations) {
    return p.n_rot * std::log(p.n_ctx_orig / (rotations * 2 * kPi)) / (2 * std::log(p.freq_base));
  };
  const double lo = std::max(0.0, std::floor(correction_dim(p.beta_fast)));
  const double hi = std::min(p.n_rot - 1.0, std::ceil(correction_dim(p.beta_slow)));
  for (int i = 0; i < half; ++i) {
    const double dim = 2.0 * i;  // the even dimension index of the pair, as HF writes it
    double base_inv = 1.0 / std::pow(double(p.freq_base), dim / p.n_rot);
    if (!p.freq_factors.empty()) base_inv /= p.freq_factors[size_t(i)];
    const double interpolated = base_inv * p.freq_scale;
    if (p.ext_factor == 0.f) {
      inv[size_t(i)] = interpolated;
      continue;
    }
    const double ramp = std::clamp((i - lo) / std::max(hi - lo, 0.001), 0.0, 1.0);
    const double extrapolation_weight = (1.0 - ramp) * p.ext_factor;
    inv[size_t(i)] = interpolated * (1 - extrapolation_weight) + base_inv * extrapolation_weight;
  }
  return inv;
}

double rope_attention_factor(const RopeParams& p) {
  return p.ext_factor == 0.f ? p.attn_factor
                             : p.attn_factor * (0.1 * std::log(1.0 / p.freq_scale) + 1.0);
}

// Rotates one head given as doubles: the pair (a, b) is the complex number a + ib multiplied by
// m * e^{i pos * inv_freq}.
void rope_reference_head(std::vector<double>& v, const RopeParams& p, int32_t pos) {
  const std::vector<double> inv = rope_inverse_frequencies(p);
  const double m = rope_attention_factor(p);
  const int half = p.n_rot / 2;
  for (int i = 0; i < half; ++i) {
    const int a = p.layout == RopeLayout::Adjacent ? 2 * i : i;
    const int b = p.layout == RopeLayout::Adjacent ? 2 * i + 1 : i + half;
    const std::complex<double> z(v[size_t(a)], v[size_t(b)]);
    const std::complex<double> r = z * std::polar(m, pos * inv[size_t(i)]);
    v[size_t(a)] = r.real();
    v[size_t(b)] = r.imag();
  }
}

}  // namespace accel::test
