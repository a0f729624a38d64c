// Tests of accel::attention_causal: agreement with the double reference over a table of shapes and
// position patterns (with a derived error bound), and bit-exact batch invariance (query alone vs in
// a batch with masked keys, at different batch indices, with 1 and 2 threads). Tests only.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <random>
#include <sstream>
#include <vector>

#include "kernels/attention.h"
#include "kernels/fp16.h"
#include "kernels/threading.h"
#include "tests/support/test_support.h"

namespace {

using accel::AttentionShape;
using accel::test::bit_equal;
using accel::test::near_all;
using accel::test::random_normal;

constexpr double kU = 0x1p-24;  // unit roundoff of float

// Key positions of a sparse prefill: runs of 32 consecutive positions separated by seeded gaps
// (0..31, then e.g. 96..127, 500..531, ...), non-decreasing, starting at `first`.
std::vector<int32_t> sparse_positions(size_t n, uint64_t seed, int32_t first = 0) {
  std::mt19937_64 rng(seed);
  std::vector<int32_t> pos(n);
  int32_t start = first;
  for (size_t j = 0; j < n; ++j) {
    if (j > 0 && j % 32 == 0) start = pos[j - 1] + 1 + int32_t(rng() % 400);
    pos[j] = start + int32_t(j % 32);
  }
  return pos;
}

struct Data {
  AttentionShape s;
  size_t n_q = 0, n_kv = 0, ldq = 0, ldkv = 0, ldo = 0;
  std::vector<float> q, k, v;
  std::vector<int32_t> q_pos, kv_pos;
};

// Random Q/K/V with row strides padded by `pad` floats (so strides are exercised); q_scale sets
// the score magnitude (scores ~ q_scale * N(0, 1) with the 1/sqrt(D) scale).
Data make_data(int H, int KVH, int D, size_t n_q, size_t n_kv, uint64_t seed, float q_scale = 1.f,
               size_t pad = 3) {
  Data d;
  d.s = {H, KVH, D, float(1.0 / std::sqrt(double(D)))};
  d.n_q = n_q;
  d.n_kv = n_kv;
  d.ldq = size_t(H) * D + pad;
  d.ldkv = size_t(KVH) * D + pad;
  d.ldo = size_t(H) * D + pad;
  d.q = random_normal(std::max<size_t>(1, n_q * d.ldq), seed, q_scale);
  d.k = random_normal(std::max<size_t>(1, n_kv * d.ldkv), seed + 1);
  d.v = random_normal(std::max<size_t>(1, n_kv * d.ldkv), seed + 2);
  d.kv_pos = sparse_positions(n_kv, seed + 3, /*first=*/2);
  return d;
}

std::vector<float> run(const Data& d) {
  std::vector<float> out(std::max<size_t>(1, d.n_q * d.ldo), NAN);
  accel::attention_causal(d.s, d.q.data(), d.ldq, d.q_pos.data(), d.n_q, d.k.data(), d.v.data(),
                          d.ldkv, d.kv_pos.data(), d.n_kv, out.data(), d.ldo);
  return out;
}

// The heads of query row i of `out` (stride ldo), as a dense vector.
std::vector<float> row(const std::vector<float>& out, size_t ldo, size_t i, size_t width) {
  return {out.begin() + i * ldo, out.begin() + i * ldo + width};
}

// A-priori forward error bound for one case (worst case over its queries and heads):
//  - each score s = scale * sum_d q_d k_d is an fp32 FMA chain: |ds| <= gamma_D * scale * sum|q k|,
//    plus rounding of scale*log2(e), of the product and of t - max: <= 4u * max|s| in all;
//  - exp2 polynomial: relative error <= 4u; so every p_j is off by a relative eps_p, and a
//    convex combination with relatively perturbed weights moves by <= 2 * eps_p * max|v|;
//  - l and o are fp32 sums over n visible keys plus one rescale per block and a final division:
//    <= (n + 2 * blocks + 2) u * max|v|.
// The bound is loose (typically 10-100x the observed error) but still far below the O(1/n) change
// a wrong mask, a missing key or a wrong head would cause.
double error_bound(const Data& d) {
  const int G = d.s.n_heads / d.s.n_kv_heads, D = d.s.head_dim;
  const double gamma = D * kU / (1 - D * kU);
  double max_abs_sum = 0, max_s = 0, max_v = 0;
  size_t max_vis = 0;
  for (float x : d.v) max_v = std::max(max_v, double(std::fabs(x)));
  for (size_t i = 0; i < d.n_q; ++i) {
    size_t vis = 0;
    for (size_t j = 0; j < d.n_kv; ++j) {
      if (d.kv_pos[j] > d.q_pos[i]) continue;
      ++vis;
      for (int h = 0; h < d.s.n_heads; ++h) {
        double a = 0, s = 0;
        for (int t = 0; t < D; ++t) {
          const double p = double(d.q[i * d.ldq + h * D + t]) * d.k[j * d.ldkv + (h / G) * D + t];
          a += std::fabs(p);
          s += p;
        }
        max_abs_sum = std::max(max_abs_sum, a * d.s.scale);
        max_s = std::max(max_s, std::fabs(s) * d.s.scale);
      }
    }
    max_vis = std::max(max_vis, vis);
  }
  const double eps_p = gamma * max_abs_sum + 4 * kU * max_s + 4 * kU;
  const double blocks = double(d.n_kv) / 64 + 1;
  return max_v * (2 * eps_p + (double(max_vis) + 2 * blocks + 2) * kU);
}

// out against the double reference within `bound` (absolute), row by row.
::testing::AssertionResult matches_within(const Data& d, const std::vector<float>& out,
                                          double bound) {
  std::vector<double> want(out.size(), 0.0);
  accel::attention_reference(d.s, d.q.data(), d.ldq, d.q_pos.data(), d.n_q, d.k.data(), d.v.data(),
                             d.ldkv, d.kv_pos.data(), d.n_kv, want.data(), d.ldo);
  // Compare only the written part of each row (not the stride padding).
  const size_t w = size_t(d.s.n_heads) * d.s.head_dim;
  std::vector<float> got;
  std::vector<double> ref;
  for (size_t i = 0; i < d.n_q; ++i) {
    got.insert(got.end(), out.begin() + i * d.ldo, out.begin() + i * d.ldo + w);
    ref.insert(ref.end(), want.begin() + i * d.ldo, want.begin() + i * d.ldo + w);
  }
  return near_all(got, ref, bound, 0.0);
}

::testing::AssertionResult matches_reference(const Data& d, const std::vector<float>& out) {
  return matches_within(d, out, error_bound(d));
}

struct Case {
  int H, KVH, D;
  size_t n_q, n_kv;
};
std::ostream& operator<<(std::ostream& os, const Case& c) {
  return os << "heads " << c.H << "/" << c.KVH << " D " << c.D << " n_q " << c.n_q << " n_kv "
            << c.n_kv;
}

std::vector<Case> table() {
  std::vector<Case> cases;
  for (int D : {8, 64, 80, 128})
    for (auto [H, KVH] : {std::pair{1, 1}, {4, 1}, {12, 4}, {8, 8}})
      for (size_t n_q : {size_t(1), size_t(3), size_t(17), size_t(130)})
        for (size_t n_kv : {size_t(1), size_t(63), size_t(64), size_t(65), size_t(597)})
          cases.push_back({H, KVH, D, n_q, n_kv});
  return cases;
}

class AttentionTable : public ::testing::TestWithParam<Case> {};

// Queries at a mix of positions: before every key (sees nothing: zeros), inside runs, in the gaps
// between runs, past the end; in no particular order and not tied to the cache's last rows.
TEST_P(AttentionTable, MatchesReference) {
  const Case c = GetParam();
  Data d = make_data(c.H, c.KVH, c.D, c.n_q, c.n_kv, 1000 + c.D * 7 + c.n_q * 13 + c.n_kv);
  std::mt19937_64 rng(c.n_q * 31 + c.n_kv);
  const int32_t last = d.kv_pos.back();
  d.q_pos.resize(c.n_q);
  for (size_t i = 0; i < c.n_q; ++i) d.q_pos[i] = int32_t(rng() % uint64_t(last + 40));
  d.q_pos[0] = 1;  // kv positions start at 2: this query sees no key
  if (c.n_q > 2) d.q_pos[c.n_q - 1] = last + 5;
  const std::vector<float> out = run(d);
  SCOPED_TRACE(::testing::PrintToString(c));
  EXPECT_TRUE(matches_reference(d, out));
  for (int t = 0; t < c.H * c.D; ++t) ASSERT_EQ(out[t], 0.f) << "query that sees no key, elt " << t;
}

INSTANTIATE_TEST_SUITE_P(Shapes, AttentionTable, ::testing::ValuesIn(table()),
                         [](const auto& info) {
                           const Case& c = info.param;
                           std::ostringstream os;
                           os << "H" << c.H << "_KV" << c.KVH << "_D" << c.D << "_q" << c.n_q
                              << "_kv" << c.n_kv;
                           return os.str();
                         });

// Scores around +-80 (q scaled up): exp of the raw scores would overflow float; the online
// softmax must subtract the running max. Also checks every output is finite.
TEST(Attention, LargeScoresDoNotOverflow) {
  for (int D : {64, 128}) {
    Data d = make_data(12, 4, D, 17, 300, 77 + D, /*q_scale=*/30.f);
    d.q_pos.assign(d.n_q, 0);
    for (size_t i = 0; i < d.n_q; ++i) d.q_pos[i] = d.kv_pos[std::min<size_t>(299, 20 * i + 5)];
    const std::vector<float> out = run(d);
    double max_score = 0;
    for (size_t j = 0; j < d.n_kv; ++j) {
      double s = 0;
      for (int t = 0; t < D; ++t) s += double(d.q[t]) * d.k[j * d.ldkv + t];
      max_score = std::max(max_score, std::fabs(s) * d.s.scale);
    }
    EXPECT_GT(max_score, 60.0) << "test data should produce scores near +-80";
    for (size_t i = 0; i < d.n_q; ++i)
      for (int t = 0; t < 12 * D; ++t) ASSERT_TRUE(std::isfinite(out[i * d.ldo + t]));
    EXPECT_TRUE(matches_reference(d, out)) << "D " << D;
  }
}

// ---- batch invariance --------------------------------------------------------------------------

// A prefill chunk: n_q queries that are rows [q0, q0 + n_q) of a cache of n_kv keys with sparse
// positions (keys after each query are present and masked). Query i alone, with only its visible
// keys (a decode step), must give the same bits as inside the chunk, at any batch index, with any
// thread count.
struct InvarianceCase {
  int H, KVH, D;
  size_t n_kv, q0, n_q;
};
// GoogleTest would otherwise print the struct's bytes, padding included (uninitialised memory).
void PrintTo(const InvarianceCase& c, std::ostream* os) {
  *os << "H" << c.H << " KVH" << c.KVH << " D" << c.D << " n_kv" << c.n_kv << " q0" << c.q0
      << " n_q" << c.n_q;
}

class AttentionInvariance : public ::testing::TestWithParam<InvarianceCase> {};

Data chunk(const InvarianceCase& c, uint64_t seed) {
  Data d = make_data(c.H, c.KVH, c.D, c.n_q, c.n_kv, seed, 2.f);
  d.q_pos.assign(d.kv_pos.begin() + c.q0, d.kv_pos.begin() + c.q0 + c.n_q);
  return d;
}

TEST_P(AttentionInvariance, AloneVersusBatchVersusThreads) {
  const InvarianceCase c = GetParam();
  const Data d = chunk(c, 4242 + c.D + c.n_q);
  const size_t w = size_t(c.H) * c.D;
  const int threads0 = accel::num_threads();

  accel::set_num_threads(2);
  const std::vector<float> batch2 = run(d);
  accel::set_num_threads(1);
  const std::vector<float> batch1 = run(d);
  accel::set_num_threads(threads0);
  EXPECT_TRUE(matches_reference(d, batch2));
  // (d) thread count.
  EXPECT_TRUE(bit_equal(batch1, batch2)) << "1 vs 2 threads";

  // (c) a different batch index: the same queries in reverse order.
  Data rev = d;
  for (size_t i = 0; i < c.n_q; ++i) {
    std::copy_n(d.q.begin() + i * d.ldq, w, rev.q.begin() + (c.n_q - 1 - i) * d.ldq);
    rev.q_pos[c.n_q - 1 - i] = d.q_pos[i];
  }
  const std::vector<float> rev_out = run(rev);

  for (size_t i = 0; i < c.n_q; ++i) {
    SCOPED_TRACE(::testing::Message() << "query " << i << " at position " << d.q_pos[i]);
    const std::vector<float> in_batch = row(batch2, d.ldo, i, w);
    EXPECT_TRUE(bit_equal(row(rev_out, d.ldo, c.n_q - 1 - i, w), in_batch)) << "reversed batch";
    // (a) vs (b): alone, with only the visible keys (positions are non-decreasing, so a prefix).
    Data one = d;
    one.n_q = 1;
    one.q.assign(d.q.begin() + i * d.ldq, d.q.begin() + (i + 1) * d.ldq);
    one.q_pos = {d.q_pos[i]};
    one.n_kv =
        size_t(std::upper_bound(d.kv_pos.begin(), d.kv_pos.end(), d.q_pos[i]) - d.kv_pos.begin());
    EXPECT_TRUE(bit_equal(row(run(one), one.ldo, 0, w), in_batch)) << "alone with visible keys";
    // Alone, but with every key of the cache present (masked ones included).
    one.n_kv = d.n_kv;
    EXPECT_TRUE(bit_equal(row(run(one), one.ldo, 0, w), in_batch)) << "alone with all keys";
    if (HasFailure()) break;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Chunks, AttentionInvariance,
    ::testing::Values(InvarianceCase{12, 4, 64, 600, 400, 130},  // row-lane layout, G = 3
                      InvarianceCase{12, 4, 64, 300, 250, 5},    // 15 rows: key-lane layout
                      InvarianceCase{12, 4, 64, 300, 250, 6},    // 18 rows: row-lane layout
                      InvarianceCase{4, 1, 128, 500, 3, 17},     // G = 4, early queries
                      InvarianceCase{8, 8, 80, 400, 380, 17},    // G = 1, D not a multiple of 16
                      InvarianceCase{1, 1, 8, 200, 60, 130},     // tiny head, 130 x 1 row tiles
                      InvarianceCase{12, 4, 128, 520, 0, 130}),  // queries at the cache start
    [](const auto& info) {
      const InvarianceCase& c = info.param;
      std::ostringstream os;
      os << "H" << c.H << "_KV" << c.KVH << "_D" << c.D << "_kv" << c.n_kv << "_q0_" << c.q0
         << "_nq" << c.n_q;
      return os.str();
    });

// A decode step after a sparse prefill: the query's position is far past the last key (e.g. the
// prompt had M tokens but only N were kept); fewer keys than queries in the batch also works.
TEST(Attention, QueriesPastTheCacheAndFewKeys) {
  Data d = make_data(12, 4, 64, 130, 17, 99);
  d.q_pos.resize(d.n_q);
  for (size_t i = 0; i < d.n_q; ++i) d.q_pos[i] = 1000 + int32_t(i);
  const std::vector<float> out = run(d);
  EXPECT_TRUE(matches_reference(d, out));
  // Every query sees the same 17 keys; rows with equal queries must be equal bit for bit.
  Data same = d;
  for (size_t i = 1; i < d.n_q; ++i) std::copy_n(d.q.begin(), d.ldq, same.q.begin() + i * d.ldq);
  const std::vector<float> out2 = run(same);
  const size_t w = 12 * 64;
  for (size_t i = 1; i < d.n_q; ++i)
    ASSERT_TRUE(bit_equal(row(out2, d.ldo, i, w), row(out2, d.ldo, 0, w))) << "row " << i;
}

TEST(Attention, EmptyInputs) {
  Data d = make_data(4, 1, 64, 3, 0, 5);
  d.q_pos = {0, 10, 100};
  const std::vector<float> out = run(d);
  for (size_t i = 0; i < 3; ++i)
    for (int t = 0; t < 4 * 64; ++t) ASSERT_EQ(out[i * d.ldo + t], 0.f);
  d.n_q = 0;
  run(d);  // no work, no crash
}

// F16 rows are widened exactly inside the kernel, so attention over an f16 copy of K/V must give
// the same bits as attention over f32 rows holding the same (rounded) values, in both layouts
// (many rows: row-lane; one row: key-lane), with head dims that are and are not vector multiples.
TEST(Attention, F16RowsEqualF32RowsOfTheRoundedValues) {
  for (int D : {64, 40}) {
    for (size_t n_q : {size_t(1), size_t(37)}) {
      SCOPED_TRACE("D " + std::to_string(D) + " n_q " + std::to_string(n_q));
      const AttentionShape s{4, 2, D, float(1.0 / std::sqrt(double(D)))};
      const size_t n_kv = 300, ldkv = size_t(2 * D), ldq = size_t(4 * D);
      auto k = random_normal(n_kv * ldkv, 1), v = random_normal(n_kv * ldkv, 2);
      const auto q = random_normal(n_q * ldq, 3);
      std::vector<uint16_t> k16(k.size()), v16(v.size());
      for (size_t i = 0; i < k.size(); ++i) {
        k16[i] = accel::f32_to_fp16(k[i]);
        v16[i] = accel::f32_to_fp16(v[i]);
        k[i] = accel::fp16_to_f32(k16[i]);
        v[i] = accel::fp16_to_f32(v16[i]);
      }
      std::vector<int32_t> kv_pos(n_kv), q_pos(n_q);
      std::iota(kv_pos.begin(), kv_pos.end(), 0);
      for (size_t i = 0; i < n_q; ++i) q_pos[i] = int32_t(n_kv - n_q + i);
      std::vector<float> a(n_q * ldq), b(n_q * ldq);
      accel::attention_causal(s, q.data(), ldq, q_pos.data(), n_q, k.data(), v.data(), ldkv,
                              kv_pos.data(), n_kv, a.data(), ldq);
      accel::attention_causal(s, q.data(), ldq, q_pos.data(), n_q,
                              accel::KVRows{k16.data(), v16.data(), ldkv, accel::KVFormat::F16},
                              kv_pos.data(), n_kv, b.data(), ldq);
      EXPECT_TRUE(bit_equal(a, b));
    }
  }
}

}  // namespace

// ---- sliding window, sinks, soft-capping
// ---------------------------------------------------------

namespace mask_options {

// The bound of error_bound plus what the options add: soft-capping rounds s / cap, tanh (a few
// ulps of a value below cap in magnitude) and the product by cap, and shrinks earlier score errors
// (|tanh'| <= 1): <= 8u * cap more per score; a sink adds one exp2 and one rounded term to l
// (<= 4u relative on the weights, absorbed in 2 * eps_p by doubling it).
double option_bound(const Data& d) {
  const double cap = d.s.softcap;
  double max_v = 0;
  for (float x : d.v) max_v = std::max(max_v, double(std::fabs(x)));
  return 2 * error_bound(d) + max_v * (2 * 8 * kU * cap + 8 * kU);
}

::testing::AssertionResult matches(const Data& d, const std::vector<float>& out) {
  return matches_within(d, out, option_bound(d));
}

struct OptCase {
  int window;
  bool sinks;
  float softcap;
  size_t n_q;
};

}  // namespace mask_options

// Windows from 1 key to past the whole cache, with and without sinks and soft-capping, over sparse
// key positions (runs with gaps, so a window can hold fewer keys than its width), in both layouts
// (1 and 3 rows: key-lane; 130 rows: row-lane). Queries sit at random positions as in
// AttentionTable. A wrong mask (off by one at the window edge) moves an output by O(1 / window).
TEST(AttentionMaskOptions, MatchReference) {
  using mask_options::OptCase;
  std::vector<OptCase> cases;
  for (int window : {0, 1, 2, 7, 64, 100, 5000})
    for (bool sinks : {false, true})
      for (float cap : {0.f, 2.5f})
        for (size_t n_q : {size_t(1), size_t(3), size_t(130)})
          cases.push_back({window, sinks, cap, n_q});
  for (const OptCase& c : cases) {
    SCOPED_TRACE(::testing::Message() << "window " << c.window << " sinks " << c.sinks << " cap "
                                      << c.softcap << " n_q " << c.n_q);
    Data d = make_data(12, 4, 64, c.n_q, 300, 31 + c.window + c.n_q, /*q_scale=*/3.f);
    std::vector<float> sinks = random_normal(12, 77 + c.window, 2.f);
    d.s.window = c.window;
    d.s.sinks = c.sinks ? sinks.data() : nullptr;
    d.s.softcap = c.softcap;
    std::mt19937_64 rng(c.n_q * 31 + c.window);
    const int32_t last = d.kv_pos.back();
    d.q_pos.resize(c.n_q);
    for (size_t i = 0; i < c.n_q; ++i) d.q_pos[i] = int32_t(rng() % uint64_t(last + 40));
    if (c.n_q > 2) d.q_pos[c.n_q - 1] = last + 5;
    EXPECT_TRUE(mask_options::matches(d, run(d)));
  }
}

// Worked by hand. Zero queries give equal scores, so the output is the mean of the visible values;
// keys at positions 0..9 with value row j = j (every element).
//  - window 3, query at 9: keys 7, 8, 9 are visible (9 - 6 = 3 is not < 3): mean 8.
//  - window 1, query at 4: only key 4: 4. Window 3, query at 1: keys 0, 1: 0.5.
//  - sink log(3) with window 3 at 9: weights 1/6 each and 3/6 on the sink: (7 + 8 + 9) / 6 = 4.
//  - soft-cap 1: q.k = 100 for key 9 and 0 for the others (one query, window 2 at 9: keys 8, 9):
//    capped scores tanh(100) ~ 1 and 0: out = (8 + 9 e) / (1 + e).
TEST(AttentionMaskOptions, HandWorked) {
  const int D = 8;
  std::vector<float> k(10 * D, 0.f), v(10 * D), q(D, 0.f);
  std::vector<int32_t> kv_pos(10);
  for (int j = 0; j < 10; ++j) {
    kv_pos[j] = j;
    for (int d = 0; d < D; ++d) v[j * D + d] = float(j);
  }
  auto one = [&](AttentionShape s, int32_t qp) {
    std::vector<float> out(D, NAN);
    accel::attention_causal(s, q.data(), D, &qp, 1, k.data(), v.data(), D, kv_pos.data(), 10,
                            out.data(), D);
    return out[D - 1];
  };
  AttentionShape s{1, 1, D, 1.f};
  s.window = 3;
  EXPECT_FLOAT_EQ(one(s, 9), 8.f);
  EXPECT_FLOAT_EQ(one(s, 1), 0.5f);
  s.window = 1;
  EXPECT_FLOAT_EQ(one(s, 4), 4.f);
  const float sink = std::log(3.f);
  s.window = 3;
  s.sinks = &sink;
  EXPECT_NEAR(one(s, 9), 4.f, 4e-6);  // exp2 of the log2-domain sink: a few ulps
  s.sinks = nullptr;
  s.window = 2;
  s.softcap = 1.f;
  for (int d = 0; d < D; ++d) k[9 * D + d] = d == 0 ? 100.f : 0.f;
  q[0] = 1.f;
  const double e = std::exp(std::tanh(100.0));
  EXPECT_NEAR(one(s, 9), (8 + 9 * e) / (1 + e), 4e-6);
}

// Batch invariance with a window and sinks (as AttentionInvariance): a query alone, in a chunk, in
// reverse order and on 1 or 2 threads gives the same bits; and alone with only the keys of its
// window present, as long as they keep their block-aligned indices (keys outside the window are
// replaced by positions that are masked: a ring buffer's overwritten slots).
TEST(AttentionMaskOptions, BatchInvariance) {
  std::vector<float> sinks = random_normal(12, 5, 2.f);
  for (size_t n_q : {size_t(5), size_t(130)})
    for (int window : {1, 50, 128}) {
      SCOPED_TRACE(::testing::Message() << "n_q " << n_q << " window " << window);
      const InvarianceCase c{12, 4, 64, 600, 400, n_q};
      Data d = chunk(c, 99 + n_q + window);
      std::iota(d.kv_pos.begin(), d.kv_pos.end(), 0);  // dense positions: the window is full
      d.q_pos.assign(d.kv_pos.begin() + c.q0, d.kv_pos.begin() + c.q0 + c.n_q);
      d.s.window = window;
      d.s.sinks = sinks.data();
      const size_t w = size_t(c.H) * c.D;
      const int threads0 = accel::num_threads();
      accel::set_num_threads(1);
      const std::vector<float> b1 = run(d);
      accel::set_num_threads(2);
      const std::vector<float> b2 = run(d);
      accel::set_num_threads(threads0);
      EXPECT_TRUE(bit_equal(b1, b2)) << "1 vs 2 threads";
      EXPECT_TRUE(mask_options::matches(d, b2));
      for (size_t i = 0; i < n_q; ++i) {
        Data one = d;
        one.n_q = 1;
        one.q.assign(d.q.begin() + i * d.ldq, d.q.begin() + (i + 1) * d.ldq);
        one.q_pos = {d.q_pos[i]};
        ASSERT_TRUE(bit_equal(row(run(one), one.ldo, 0, w), row(b2, d.ldo, i, w))) << "row " << i;
        // Keys outside the window moved far into the future (masked): same bits.
        for (size_t j = 0; j < one.n_kv; ++j)
          if (!accel::attention_visible(one.kv_pos[j], one.q_pos[0], window))
            one.kv_pos[j] = 1 << 30;
        ASSERT_TRUE(bit_equal(row(run(one), one.ldo, 0, w), row(b2, d.ldo, i, w)))
            << "row " << i << " with out-of-window keys replaced";
      }
    }
}

TEST(AttentionMaskOptions, RefusesBadOptions) {
  Data d = make_data(4, 1, 64, 1, 10, 5);
  d.q_pos = {20};
  d.s.window = -1;
  EXPECT_DEATH(run(d), "sliding window -1 is negative");
  d.s.window = 0;
  d.s.softcap = -1.f;
  EXPECT_DEATH(run(d), "soft-cap");
}
