// Tests of kernels/gated_delta_rule (the Gated DeltaNet recurrence) and its input steps (per-head
// L2 norm, alpha/beta gates): against the double reference within its derived bound
// (tests/support/recurrent_reference.cpp) for outputs and final state, both key-head maps,
// prefill followed by decode against one long reference pass, and the contract stated in
// gated_delta_rule.h: bit-identical outputs and state for any split into calls, any thread count.
#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <utility>
#include <vector>

#include "kernels/gated_delta_rule.h"
#include "kernels/ssm_scan.h"
#include "tests/support/recurrent_reference.h"
#include "tests/support/test_support.h"

namespace {

using accel::DeltaHeadMap;
using accel::GatedDeltaInputs;
using accel::GatedDeltaShape;
using accel::test::bit_equal;
using accel::test::random_normal;
using accel::test::within_bound;

constexpr double kU = 0x1p-24;

// One layer's inputs as llama.cpp lays out the conv output: q, k and v side by side in one row.
struct DeltaData {
  GatedDeltaShape s;
  size_t n = 0, ld = 0;
  std::vector<float> qkv, g, beta, state;
  GatedDeltaInputs inputs(size_t t0) const {
    const size_t wk = size_t(s.n_k_heads) * s.head_k_dim;
    const float* row = qkv.data() + t0 * ld;
    GatedDeltaInputs in;
    in.q = row, in.ldq = ld;
    in.k = row + wk, in.ldk = ld;
    in.v = row + 2 * wk, in.ldv = ld;
    in.g = g.data() + t0 * size_t(s.n_v_heads), in.beta = beta.data() + t0 * size_t(s.n_v_heads);
    in.ldgate = size_t(s.n_v_heads);
    in.q_scale = float(1.0 / std::sqrt(double(s.head_k_dim)));
    return in;
  }
};

// q and k normalised as the model does; gates from alpha, b ~ N(0, 1), dt_bias ~ N(0, 1) and
// A = -exp(N(0, 1)), through delta_net_gates, so g and beta have the model's ranges.
DeltaData make(const GatedDeltaShape& s, size_t n, uint64_t seed) {
  DeltaData d;
  d.s = s, d.n = n;
  const size_t wk = size_t(s.n_k_heads) * s.head_k_dim;
  d.ld = 2 * wk + size_t(s.n_v_heads) * s.head_v_dim + 1;
  d.qkv = random_normal(n * d.ld, seed);
  accel::l2_normalize_heads(d.qkv.data(), n, d.ld, 2 * s.n_k_heads, s.head_k_dim, 1e-6f);
  const auto alpha = random_normal(n * s.n_v_heads, seed + 1),
             b = random_normal(n * s.n_v_heads, seed + 2);
  const auto dt_bias = random_normal(s.n_v_heads, seed + 3);
  auto A = random_normal(s.n_v_heads, seed + 4);
  for (float& a : A) a = -std::exp(a);
  d.g.resize(n * s.n_v_heads), d.beta.resize(n * s.n_v_heads);
  accel::delta_net_gates(alpha.data(), b.data(), size_t(s.n_v_heads), n, s.n_v_heads,
                         dt_bias.data(), A.data(), d.g.data(), d.beta.data());
  d.state = random_normal(accel::gated_delta_state_elements(s), seed + 5, 0.3f);
  return d;
}

std::vector<float> run(const DeltaData& d, std::vector<float>& state,
                       const std::vector<size_t>& chunks) {
  const size_t wo = size_t(d.s.n_v_heads) * d.s.head_v_dim;
  std::vector<float> o(d.n * wo);
  accel::test::in_calls(d.n, chunks, [&](size_t t, size_t m) {
    accel::gated_delta_rule(d.s, d.inputs(t), m, state.data(), o.data() + t * wo, wo);
  });
  return o;
}

// Sizes around the 8-row item and the vector width (head dims 1, 12, 35), more value heads than
// key heads under both maps, and Qwen3.5's layer shape (16 key heads, 32 value heads, 128 x 128).
TEST(GatedDeltaRule, MatchesReferenceWithinDerivedBound) {
  struct Case {
    GatedDeltaShape s;
    size_t n;
  };
  const Case cases[] = {{{1, 1, 1, 1, DeltaHeadMap::Tiled}, 6},
                        {{2, 4, 16, 12, DeltaHeadMap::Tiled}, 33},
                        {{2, 4, 16, 12, DeltaHeadMap::Interleaved}, 33},
                        {{3, 3, 35, 9, DeltaHeadMap::Tiled}, 20},
                        {{1, 3, 8, 8, DeltaHeadMap::Interleaved}, 2},
                        {{16, 32, 128, 128, DeltaHeadMap::Tiled}, 24}};
  for (const Case& c : cases) {
    SCOPED_TRACE(::testing::Message()
                 << "k heads " << c.s.n_k_heads << ", v heads " << c.s.n_v_heads << ", dk "
                 << c.s.head_k_dim << ", dv " << c.s.head_v_dim << ", map "
                 << (c.s.map == DeltaHeadMap::Tiled ? "tiled" : "interleaved") << ", n " << c.n);
    const DeltaData d = make(c.s, c.n, 41 + c.n);
    const auto want =
        accel::test::gated_delta_rule_reference(c.s, d.inputs(0), c.n, d.state.data());
    std::vector<float> state = d.state;
    const auto o = run(d, state, {c.n});
    double ro = 0, rs = 0;
    EXPECT_TRUE(within_bound(o, want.o, &ro));
    EXPECT_TRUE(within_bound(state, want.state, &rs));
    EXPECT_GT(ro, 1e-4);  // the bound is not vacuous (see ssm_scan_test)
  }
}

// The two maps differ whenever n_v_heads > n_k_heads: a kernel that ignored the map would pass
// the reference test above for one of them only; this pins that they give different outputs.
TEST(GatedDeltaRule, HeadMapsReadDifferentKeyHeads) {
  GatedDeltaShape s{2, 4, 16, 12, DeltaHeadMap::Tiled};
  const DeltaData d = make(s, 5, 3);
  std::vector<float> st1 = d.state, st2 = d.state;
  const auto a = run(d, st1, {5});
  DeltaData d2 = d;
  d2.s.map = DeltaHeadMap::Interleaved;
  const auto b = run(d2, st2, {5});
  EXPECT_FALSE(bit_equal(a, b));
}

TEST(GatedDeltaRule, PrefillThenDecodeMatchesOneLongPass) {
  const GatedDeltaShape s{2, 4, 32, 32, DeltaHeadMap::Tiled};
  const DeltaData d = make(s, 1008, 9);
  const auto want = accel::test::gated_delta_rule_reference(s, d.inputs(0), d.n, d.state.data());
  std::vector<float> state = d.state;
  const auto o = run(d, state, {1000, 1, 1, 1, 1, 1, 1, 1, 1});
  EXPECT_TRUE(within_bound(o, want.o));
  EXPECT_TRUE(within_bound(state, want.state));
}

TEST(GatedDeltaRule, BitIdenticalAcrossSplitsAndThreads) {
  const DeltaData d = make({16, 32, 128, 128, DeltaHeadMap::Tiled}, 40, 77);
  accel::test::expect_same_bits_for_any_split(d.n, {{1}, {32, 1}, {7}, {3, 1, 20}},
                                              [&](const std::vector<size_t>& chunks) {
                                                std::vector<float> st = d.state;
                                                auto o = run(d, st, chunks);
                                                return std::make_pair(o, st);
                                              });
}

// Sum of squares in double (its error ~dim * 2^-53, negligible), then sqrt to float (u), the
// reciprocal (u) and the product (u): relative error <= 3u, checked at 4u. eps applies below it.
TEST(GatedDeltaRule, L2NormalizeHeadsMatchesDefinition) {
  const int heads = 3, dim = 37;
  const size_t ld = heads * dim + 2;
  auto x = random_normal(4 * ld, 5);
  for (int i = 0; i < dim; ++i) x[ld + dim + size_t(i)] = 1e-9f;  // row 1, head 1: under eps
  const auto x0 = x;
  accel::l2_normalize_heads(x.data(), 4, ld, heads, dim, 1e-6f);
  for (size_t r = 0; r < 4; ++r)
    for (int h = 0; h < heads; ++h) {
      double ss = 0;
      for (int i = 0; i < dim; ++i)
        ss += double(x0[r * ld + h * dim + i]) * x0[r * ld + h * dim + i];
      const double inv = 1.0 / std::max(std::sqrt(ss), 1e-6);
      for (int i = 0; i < dim; ++i) {
        const double want = x0[r * ld + h * dim + i] * inv;
        EXPECT_NEAR(x[r * ld + h * dim + i], want, 4 * kU * std::abs(want)) << r << " " << h;
      }
    }
  EXPECT_EQ(x[ld - 1], x0[ld - 1]);  // slack between rows untouched
}

// g = softplus(alpha + dt_bias) * A: the sum rounds (u |z|, scaled by softplus'/softplus =
// sigmoid/softplus), softplus 2u, the product u. beta = 1 / (1 + e^-b): exp u (entering beta
// relatively at most once), the add u, the division u: 3u, checked at 4u.
TEST(GatedDeltaRule, GatesMatchDefinition) {
  const int heads = 5;
  const size_t n = 40, ld = heads + 1;
  const auto alpha = random_normal(n * ld, 1, 4.f), b = random_normal(n * ld, 2, 4.f);
  const auto bias = random_normal(heads, 3);
  auto A = random_normal(heads, 4);
  for (float& a : A) a = -std::exp(a);
  std::vector<float> g(n * heads), beta(n * heads);
  accel::delta_net_gates(alpha.data(), b.data(), ld, n, heads, bias.data(), A.data(), g.data(),
                         beta.data());
  for (size_t t = 0; t < n; ++t)
    for (int h = 0; h < heads; ++h) {
      const double z = double(alpha[t * ld + h]) + bias[h];
      const double sp = z > 20 ? z : std::log1p(std::exp(z));
      const double sig_z = 1 / (1 + std::exp(-z));
      const double want_g = sp * A[h];
      const double rel = 4 * kU + kU * std::abs(z) * (z > 20 ? 0 : sig_z / sp);
      EXPECT_NEAR(g[t * heads + h], want_g, rel * std::abs(want_g)) << t << " " << h;
      const double want_b = 1 / (1 + std::exp(-double(b[t * ld + h])));
      EXPECT_NEAR(beta[t * heads + h], want_b, 4 * kU * want_b) << t << " " << h;
    }
}

}  // namespace
