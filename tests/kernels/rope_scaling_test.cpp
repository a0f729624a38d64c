// RoPE scalings (linear, YaRN, Llama 3 frequency factors, attention factor, partial rotary) in
// kernels/elementwise: the float kernel and its double reference against a third, independent
// reference written from the published formulas (tests/support/rope_reference), hand-worked values,
// and batch invariance. Tests only.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "kernels/elementwise.h"
#include "tests/support/rope_reference.h"
#include "tests/support/test_support.h"

namespace {

using accel::RopeLayout;
using accel::RopeParams;
using accel::test::bit_equal;
using accel::test::near_all;
using accel::test::random_normal;
using accel::test::rope_attention_factor;
using accel::test::rope_reference_head;

constexpr double kU = 0x1p-24;
constexpr double kPi = 3.14159265358979323846;

// ---- the variants ------------------------------------------------------------------------------
struct Variant {
  std::string name;
  RopeParams p;
};

// Llama 3.1's frequency factors as its HF config defines them (factor 8, low/high frequency
// factors 1 and 4, original context 8192): 1 for short wavelengths, 8 for long, smooth between.
std::vector<float> llama3_factors(int n_rot, double base) {
  std::vector<float> f(size_t(n_rot / 2));
  const double factor = 8, lo = 1, hi = 4, orig = 8192;
  for (int i = 0; i < n_rot / 2; ++i) {
    const double wavelen = 2 * kPi * std::pow(base, 2.0 * i / n_rot);
    if (wavelen < orig / hi) {
      f[size_t(i)] = 1.f;
    } else if (wavelen > orig / lo) {
      f[size_t(i)] = float(factor);
    } else {
      const double smooth = (orig / wavelen - lo) / (hi - lo);
      f[size_t(i)] = float(1.0 / ((1 - smooth) / factor + smooth));
    }
  }
  return f;
}

RopeParams make(RopeLayout layout, int head_dim, int n_rot, float base) {
  RopeParams p;
  p.head_dim = head_dim;
  p.n_rot = n_rot;
  p.freq_base = base;
  p.layout = layout;
  return p;
}

std::vector<Variant> variants() {
  std::vector<Variant> v;
  for (RopeLayout l : {RopeLayout::Adjacent, RopeLayout::HalfSplit}) {
    const std::string ln = l == RopeLayout::Adjacent ? "adjacent" : "halfsplit";
    v.push_back({ln + "/plain", make(l, 64, 64, 10000.f)});
    RopeParams lin = make(l, 64, 64, 10000.f);
    lin.freq_scale = 0.25f;
    v.push_back({ln + "/linear x4", lin});
    RopeParams partial = make(l, 80, 24, 10000.f);  // partial rotary: 24 of 80 dims
    partial.freq_scale = 0.5f;
    v.push_back({ln + "/partial 24 of 80, linear x2", partial});
    RopeParams yarn = make(l, 128, 128, 1000000.f);  // Qwen3 with YaRN factor 4 from 32K
    yarn.freq_scale = 0.25f;
    yarn.ext_factor = 1.f;
    yarn.n_ctx_orig = 32768;
    v.push_back({ln + "/yarn x4 (qwen3)", yarn});
    RopeParams yarn2 = make(l, 96, 64, 10000.f);  // partial + YaRN + attn factor + beta keys
    yarn2.freq_scale = 1.f / 16;
    yarn2.ext_factor = 0.5f;
    yarn2.attn_factor = 0.8f;
    yarn2.beta_fast = 24.f;
    yarn2.beta_slow = 2.f;
    yarn2.n_ctx_orig = 4096;
    v.push_back({ln + "/yarn x16 partial, ext 0.5, attn 0.8", yarn2});
    RopeParams l3 = make(l, 128, 128, 500000.f);  // Llama 3.1's rope_freqs
    l3.freq_factors = llama3_factors(128, 500000.0);
    v.push_back({ln + "/llama3 freq factors", l3});
    RopeParams l3y = make(l, 64, 32, 500000.f);  // factors with YaRN and partial (all at once)
    l3y.freq_factors = llama3_factors(32, 500000.0);
    l3y.freq_scale = 0.5f;
    l3y.ext_factor = 1.f;
    l3y.n_ctx_orig = 8192;
    v.push_back({ln + "/llama3 factors + yarn x2 partial", l3y});
  }
  return v;
}

// Positions from 0 to past the longest contexts people run (angles up to ~1e5 rad).
const std::vector<int32_t> kPositions = {0, 1, 2, 3, 17, 1000, 4095, 8191, 32767, 131071};

// The kernel rounds m cos and m sin to float (abs error <= u/2 * m each, from double values within
// ~1e-16 * theta of the truth: 1e-11 at theta 1e5, negligible) and computes x0 c - x1 s with two
// products and a difference, each rounded: per element error <= 3u m (|x0| + |x1|) + O(u^2),
// checked against 8u * m * max|x|. The double reference agrees with this file's to ~1e-12
// relative (different but exact-in-double arithmetic), checked against 1e-9 * m * max|x|.
TEST(RopeScaling, KernelAndDoubleReferenceMatchIndependentReferenceForEveryVariant) {
  for (const Variant& var : variants()) {
    SCOPED_TRACE(var.name);
    const RopeParams& p = var.p;
    const int n_heads = 3;
    const size_t ld = size_t(n_heads) * p.head_dim + 3, rows = kPositions.size();
    const std::vector<float> x0 = random_normal(rows * ld, 40 + p.head_dim, 1.5f);
    std::vector<double> want(x0.begin(), x0.end());
    for (size_t r = 0; r < rows; ++r)
      for (int h = 0; h < n_heads; ++h) {
        double* hp = want.data() + r * ld + size_t(h) * p.head_dim;
        std::vector<double> head(hp, hp + p.head_dim);
        rope_reference_head(head, p, kPositions[r]);
        std::copy(head.begin(), head.end(), hp);
      }
    double max_x = 0;
    for (float v : x0) max_x = std::max(max_x, double(std::fabs(v)));
    const double m = rope_attention_factor(p);

    std::vector<float> x = x0;
    accel::rope(x.data(), rows, ld, n_heads, kPositions.data(), p);
    EXPECT_TRUE(near_all(x, want, 8 * kU * m * max_x, 0.0));

    std::vector<double> lib(x0.begin(), x0.end());
    accel::rope_reference(lib.data(), rows, ld, n_heads, kPositions.data(), p);
    double worst = 0;
    for (size_t i = 0; i < lib.size(); ++i) worst = std::max(worst, std::fabs(lib[i] - want[i]));
    EXPECT_LE(worst, 1e-9 * m * max_x);

    // Past n_rot (partial rotary) and the row padding nothing changes, bit for bit.
    for (size_t r = 0; r < rows; ++r)
      for (int h = 0; h < n_heads; ++h)
        for (int d = p.n_rot; d < p.head_dim; ++d) {
          const size_t i = r * ld + size_t(h) * p.head_dim + d;
          ASSERT_EQ(x[i], x0[i]) << "row " << r << " head " << h << " dim " << d;
        }
    for (size_t r = 0; r < rows; ++r)
      for (size_t i = size_t(n_heads) * p.head_dim; i < ld; ++i)
        ASSERT_EQ(x[r * ld + i], x0[r * ld + i]);
  }
}

// Angles depend on (position, pair index) only: a row gives the same bits alone, inside a batch,
// and at another index of a batch in another order.
TEST(RopeScaling, EveryVariantIsBatchInvariant) {
  for (const Variant& var : variants()) {
    SCOPED_TRACE(var.name);
    const RopeParams& p = var.p;
    const int n_heads = 2;
    const size_t ld = size_t(n_heads) * p.head_dim, rows = kPositions.size();
    const std::vector<float> x0 = random_normal(rows * ld, 77, 1.f);
    std::vector<float> batch = x0;
    accel::rope(batch.data(), rows, ld, n_heads, kPositions.data(), p);
    std::vector<int32_t> rev_pos(kPositions.rbegin(), kPositions.rend());
    std::vector<float> rev(rows * ld);
    for (size_t r = 0; r < rows; ++r)
      std::copy_n(x0.begin() + long(r * ld), ld, rev.begin() + long((rows - 1 - r) * ld));
    accel::rope(rev.data(), rows, ld, n_heads, rev_pos.data(), p);
    for (size_t r = 0; r < rows; ++r) {
      std::vector<float> one(x0.begin() + long(r * ld), x0.begin() + long((r + 1) * ld));
      accel::rope(one.data(), 1, ld, n_heads, &kPositions[r], p);
      const std::span<const float> in_batch(batch.data() + r * ld, ld);
      const std::span<const float> in_rev(rev.data() + (rows - 1 - r) * ld, ld);
      EXPECT_TRUE(bit_equal(one, in_batch)) << "position " << kPositions[r];
      EXPECT_TRUE(bit_equal(one, in_rev)) << "position " << kPositions[r];
    }
  }
}

// ggml_rope_yarn_corr_dims by hand: corr(b) = n_rot ln(n_ctx_orig / (2 pi b)) / (2 ln base).
// Llama 2 (128, 4096, 1e4): corr(32) = 20.944 -> 20, corr(1) = 45.027 -> 46.
// Qwen3 (128, 32768, 1e6): corr(32) = 23.596 -> 23, corr(1) = 39.651 -> 40.
// n_rot 16, 4096, 1e4: corr(1) = 5.63 -> 6; corr(32) = 2.62 -> 2.  n_ctx_orig 64: corr(32) < 0
// is clamped to 0, and a tiny base pushes corr(1) past n_rot - 1, clamped to it.
TEST(RopeScaling, YarnCorrectionDimsHandWorked) {
  struct Case {
    int n_rot, n_ctx_orig;
    float base;
    double low, high;
  } cases[] = {{128, 4096, 10000.f, 20, 46},
               {128, 32768, 1000000.f, 23, 40},
               {16, 4096, 10000.f, 2, 6},
               {16, 64, 1.5f, 0, 15}};
  for (const Case& c : cases) {
    RopeParams p = make(RopeLayout::Adjacent, c.n_rot, c.n_rot, c.base);
    p.n_ctx_orig = c.n_ctx_orig;
    double low = -1, high = -1;
    accel::rope_yarn_corr_dims(p, low, high);
    EXPECT_EQ(low, c.low) << c.n_rot << " " << c.n_ctx_orig << " " << c.base;
    EXPECT_EQ(high, c.high) << c.n_rot << " " << c.n_ctx_orig << " " << c.base;
  }
}

// The angle each pair turns by, read back with atan2 from a unit vector in that pair alone, and
// its length (the attention factor). Llama 2 shape with YaRN x4: pairs 0..20 (below low = 20)
// turn at the original frequency, pairs from 46 on at a quarter of it, and pair 33 is halfway:
// ramp = 1 - (33 - 20) / 26 = 0.5, so rate = base_rate * (0.25 * 0.5 + 0.5). Length
// 1 + 0.1 ln 4 = 1.138629. Angles are compared mod 2 pi to within 1e-5 rad (float cos/sin).
TEST(RopeScaling, YarnPairAnglesAndMagnitudeHandWorked) {
  RopeParams p = make(RopeLayout::HalfSplit, 128, 128, 10000.f);
  p.freq_scale = 0.25f;
  p.ext_factor = 1.f;
  p.n_ctx_orig = 4096;
  const int32_t pos = 3;
  for (int i : {0, 5, 20, 33, 46, 63}) {
    std::vector<float> v(128, 0.f);
    v[size_t(i)] = 1.f;  // HalfSplit pair i is (i, i + 64)
    accel::rope(v.data(), 1, 128, 1, &pos, p);
    const double base_rate = std::pow(10000.0, -2.0 * i / 128);
    const double mult = i <= 20 ? 1.0 : i >= 46 ? 0.25 : 0.25 * 0.5 + 0.5;
    const double want = pos * base_rate * mult;
    const double got = std::atan2(double(v[size_t(i) + 64]), double(v[size_t(i)]));
    EXPECT_NEAR(std::remainder(got - want, 2 * kPi), 0.0, 1e-5) << "pair " << i;
    EXPECT_NEAR(std::hypot(v[size_t(i)], v[size_t(i) + 64]), 1.0 + 0.1 * std::log(4.0), 1e-6);
  }
}

// Frequency factors divide each pair's rate; the attention factor alone (no YaRN) scales the
// length without the 1 + 0.1 ln term. Adjacent, n_rot 4, base 100: rates 1 and 0.1; factors
// (1, 4) give 1 and 0.025, so at position 10 the angles are 10 and 0.25 rad.
TEST(RopeScaling, FreqFactorsAndAttnFactorHandWorked) {
  RopeParams p = make(RopeLayout::Adjacent, 4, 4, 100.f);
  p.freq_factors = {1.f, 4.f};
  p.attn_factor = 2.f;
  float x[4] = {1, 0, 1, 0};
  const int32_t pos = 10;
  accel::rope(x, 1, 4, 1, &pos, p);
  EXPECT_NEAR(x[0], 2 * std::cos(10.0), 4 * kU * 2);
  EXPECT_NEAR(x[1], 2 * std::sin(10.0), 4 * kU * 2);
  EXPECT_NEAR(x[2], 2 * std::cos(0.25), 4 * kU * 2);
  EXPECT_NEAR(x[3], 2 * std::sin(0.25), 4 * kU * 2);
}

// YaRN with factor 1 is plain RoPE (interpolated and extrapolated rates coincide, length 1).
TEST(RopeScaling, YarnWithFactorOneEqualsPlainRope) {
  RopeParams plain = make(RopeLayout::HalfSplit, 64, 64, 10000.f);
  RopeParams yarn = plain;
  yarn.ext_factor = 1.f;
  yarn.n_ctx_orig = 2048;
  const std::vector<float> x0 = random_normal(kPositions.size() * 64, 3);
  std::vector<float> a = x0, b = x0;
  accel::rope(a.data(), kPositions.size(), 64, 1, kPositions.data(), plain);
  accel::rope(b.data(), kPositions.size(), 64, 1, kPositions.data(), yarn);
  // The blend interp (1 - r) + extrap r of two equal doubles may differ from them by an ulp
  // (relative 1e-16, i.e. 1e-11 rad at the largest angle): outputs within 2u of each other.
  std::vector<double> bd(b.begin(), b.end());
  EXPECT_TRUE(near_all(a, bd, 8 * kU * 4, 0.0));
}

}  // namespace
