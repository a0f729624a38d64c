// Tests of methods/specprefill_scoring: the fast importance against the double brute-force
// reference (specprefill_reference.h) over a table of shapes with a derived error bound,
// selection agreement where the reference's ranking has a clear gap, hand-worked scoring and
// selection cases (edges, partial chunk, ties, rounding, tail floor, prefix offset), argument
// checks, and bit-identical results for 1 and 2 threads. Tests only.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/threading.h"
#include "methods/specprefill_scoring.h"
#include "tests/methods/specprefill_reference.h"
#include "tests/support/test_support.h"

namespace {

namespace sp = accel::specprefill;
namespace ref = accel::specprefill::reference;
using accel::PoolEdge;
using sp::AggregationOrder;

constexpr double kU = 0x1p-24;  // unit roundoff of float

// Owning storage for one scoring problem; layers() gives the views token_importance takes.
struct Problem {
  sp::DraftShape shape;
  size_t q_stride = 0, k_stride = 0;     // row strides in floats (padded on purpose)
  std::vector<std::vector<float>> q, k;  // (layer) -> [A][q_stride], [N][k_stride]
  std::vector<sp::LayerQK> views;

  Problem(int L, int H, int Hkv, int d, int A, size_t N, uint64_t seed, float q_scale = 1.f,
          size_t q_pad = 0, size_t k_pad = 0) {
    shape = {H, Hkv, d, A, N};
    q_stride = size_t(H) * d + q_pad;
    k_stride = size_t(Hkv) * d + k_pad;
    for (int l = 0; l < L; ++l) {
      q.push_back(accel::test::random_normal(size_t(A) * q_stride, seed * 1000 + 2 * l, q_scale));
      k.push_back(
          accel::test::random_normal(std::max<size_t>(N, 1) * k_stride, seed * 1000 + 2 * l + 1));
    }
    for (int l = 0; l < L; ++l) views.push_back({q[l].data(), q_stride, k[l].data(), k_stride});
  }
  std::span<const sp::LayerQK> layers() const { return views; }

  // Relative error bound of the fast importance (see the derivation in the test file header of
  // ScorerMatchesReference): scores carry gamma_d * sum|q k| / sqrt(d), the exp argument a
  // further 2u of its magnitude; each probability then has relative error <= 2 * (argument
  // error) + exp/normaliser error, and pooling/mean add (k + A) u.
  double rtol(const sp::ScoringOptions& o) const {
    const size_t d = size_t(shape.head_dim), H = size_t(shape.n_heads), A = size_t(shape.n_queries);
    const size_t group = H / size_t(shape.n_kv_heads), N = shape.n_keys;
    const double gamma = d * kU / (1 - d * kU), rs = 1 / std::sqrt(double(d));
    double arg_err = 0;
    for (size_t l = 0; l < q.size(); ++l)
      for (size_t h = 0; h < H; ++h)
        for (size_t a = 0; a < A; ++a) {
          const float* qv = q[l].data() + a * q_stride + h * d;
          double smax = -INFINITY, smin = INFINITY, dot_err = 0;
          for (size_t j = 0; j < N; ++j) {
            const float* kv = k[l].data() + j * k_stride + (h / group) * d;
            double s = 0, abs = 0;
            for (size_t t = 0; t < d; ++t)
              s += double(qv[t]) * kv[t], abs += std::fabs(qv[t] * kv[t]);
            smax = std::max(smax, s), smin = std::min(smin, s);
            dot_err = std::max(dot_err, gamma * abs);
          }
          arg_err = std::max(arg_err, 2 * dot_err * rs + 3 * kU * (smax - smin) * rs);
        }
    const int k = std::max(o.pool_kernel, 1);
    return 2 * (2 * arg_err + 8 * kU + (k + A + 2) * kU);  // factor 2 of slack
  }
};

std::string describe(const Problem& p, const sp::ScoringOptions& o) {
  std::ostringstream s;
  s << "L=" << p.q.size() << " H=" << p.shape.n_heads << " Hkv=" << p.shape.n_kv_heads
    << " d=" << p.shape.head_dim << " A=" << p.shape.n_queries << " N=" << p.shape.n_keys
    << " pool=" << o.pool_kernel
    << " edge=" << (o.pool_edge == PoolEdge::ZeroPad ? "zero" : "renorm")
    << " order=" << (o.order == AggregationOrder::PoolMaxMean ? "pool-max-mean" : "max-mean-pool");
  return s.str();
}

// ----------------------------------------------------------------------------------------------
// Scorer vs reference

TEST(SpecPrefillScoring, ScorerMatchesReference) {
  struct Heads {
    int H, Hkv;
  };
  const Heads heads[] = {{8, 2}, {12, 4}, {4, 4}};
  const sp::ScoringOptions variants[] = {
      {13, PoolEdge::ZeroPad, AggregationOrder::PoolMaxMean},      // reference default
      {13, PoolEdge::Renormalize, AggregationOrder::MaxMeanPool},  // pflash
      {0, PoolEdge::ZeroPad, AggregationOrder::PoolMaxMean},       // no pooling
      {3, PoolEdge::Renormalize, AggregationOrder::PoolMaxMean},
      {13, PoolEdge::ZeroPad, AggregationOrder::MaxMeanPool},
  };
  uint64_t seed = 7;
  int case_index = 0, compared_selections = 0;
  for (const Heads& hh : heads)
    for (int A : {1, 8})
      for (size_t N : {1, 5, 13, 40, 1000})
        for (int d : {16, 64}) {
          const int L = 1 + case_index % 3;
          // Alternate flat (q ~ N(0,1)) and peaked (q ~ N(0,3)) attention, dense and padded rows.
          const float q_scale = case_index % 2 ? 3.f : 1.f;
          const Problem p(L, hh.H, hh.Hkv, d, A, N, seed++, q_scale, case_index % 2 ? 5 : 0,
                          case_index % 3 ? 8 : 0);
          for (const sp::ScoringOptions& o : {variants[0], variants[1 + case_index % 4]}) {
            const std::vector<float> got = sp::token_importance(p.layers(), p.shape, o);
            const std::vector<double> want = ref::importance(p.layers(), p.shape, o);
            const double rtol = p.rtol(o);
            ASSERT_TRUE(accel::test::near_all(got, want, 1e-37, rtol))
                << describe(p, o) << " rtol=" << rtol;
            // Selections agree wherever the reference ranking has a gap larger than the error.
            if (N >= 40) {
              const double max_imp = *std::max_element(want.begin(), want.end());
              for (double keep : {0.1, 0.3, 0.5})
                for (int64_t tail : {int64_t(0), int64_t(64)}) {
                  const int chunk = N >= 1000 ? 32 : 4;
                  const sp::SelectOptions so{tail, sp::KeepRounding::Ceil};
                  if (ref::selection_gap(want, chunk, keep, so) <= 4 * rtol * max_imp) continue;
                  const sp::Selection a = sp::select_chunks(got.data(), N, chunk, keep, so);
                  const sp::Selection b = ref::select(want, chunk, keep, so);
                  EXPECT_EQ(a.kept_chunks, b.kept_chunks) << describe(p, o) << " keep=" << keep;
                  EXPECT_EQ(a.kept_positions, b.kept_positions) << describe(p, o);
                  ++compared_selections;
                }
            }
          }
          ++case_index;
        }
  // Most comparisons must actually have happened (random scores rarely tie within the bound).
  EXPECT_GT(compared_selections, 150);
}

// Head dims that are not a multiple of the SIMD width exercise the scalar transpose remainder;
// N not a multiple of the key tile exercises the zero-padded last tile.
TEST(SpecPrefillScoring, OddHeadDims) {
  uint64_t seed = 500;
  for (int d : {1, 8, 40, 72})
    for (size_t N : {7, 33, 257}) {
      const Problem p(2, 6, 3, d, 5, N, seed++, 2.f, 3, 5);
      const sp::ScoringOptions o{};
      const auto got = sp::token_importance(p.layers(), p.shape, o);
      const auto want = ref::importance(p.layers(), p.shape, o);
      ASSERT_TRUE(accel::test::near_all(got, want, 1e-37, p.rtol(o))) << describe(p, o);
    }
}

// Keys planted along the queries' direction make chosen chunks clearly most important: the fast
// selection must be exactly those chunks, and equal the reference's.
TEST(SpecPrefillScoring, PlantedChunksAreSelected) {
  const int L = 2, H = 8, Hkv = 2, d = 64, A = 8, C = 32;
  const size_t N = 1000;  // 32 chunks, the last of 8 tokens
  Problem p(L, H, Hkv, d, A, N, 99, 1.f);
  const std::vector<int> planted = {3, 17, 22, 31};
  for (int l = 0; l < L; ++l)
    for (int c : planted)
      for (size_t j = size_t(c) * C; j < std::min(N, size_t(c + 1) * C); ++j)
        for (int g = 0; g < Hkv; ++g)
          for (int t = 0; t < d; ++t) {
            // k_j = 8 * (sum over the group's queries) / A: logits ~ 8 for them, ~N(0,1) elsewhere.
            float s = 0;
            for (int a = 0; a < A; ++a)
              for (int hh = 0; hh < H / Hkv; ++hh)
                s += p.q[size_t(l)][size_t(a) * p.q_stride + size_t(g * (H / Hkv) + hh) * d + t];
            p.k[size_t(l)][j * p.k_stride + size_t(g) * d + t] = 8.f * s / float(A);
          }
  for (AggregationOrder order : {AggregationOrder::PoolMaxMean, AggregationOrder::MaxMeanPool}) {
    const sp::ScoringOptions o{13, PoolEdge::ZeroPad, order};
    const auto got = sp::token_importance(p.layers(), p.shape, o);
    const auto want = ref::importance(p.layers(), p.shape, o);
    const sp::Selection a = sp::select_chunks(got.data(), N, C, 0.1);
    const sp::Selection b = ref::select(want, C, 0.1);
    EXPECT_EQ(a.n_chunks, 32);
    EXPECT_EQ(a.kept_chunks, (std::vector<int32_t>{3, 17, 22, 31}));
    EXPECT_EQ(a.kept_chunks, b.kept_chunks);
    EXPECT_EQ(a.kept_positions, b.kept_positions);
    EXPECT_EQ(a.kept_positions.size(), 3u * 32 + 8);  // K = 104: the partial tail is kept
  }
}

// ----------------------------------------------------------------------------------------------
// Hand-worked scoring

// One layer, one head, d = 1, q = 1, keys (0, ln 2, ln 4): P = (1, 2, 4) / 7.
TEST(SpecPrefillScoring, HandWorkedSoftmaxAndPool) {
  const float q[1] = {1.f};
  const float k[3] = {0.f, std::log(2.f), std::log(4.f)};
  const sp::LayerQK layer{q, 0, k, 0};
  const sp::DraftShape sh{1, 1, 1, 1, 3};
  auto imp = [&](int pool, PoolEdge e, AggregationOrder o) {
    return sp::token_importance(std::span(&layer, 1), sh, {pool, e, o});
  };
  const double tol = 1e-6;
  const std::vector<double> p = {1 / 7., 2 / 7., 4 / 7.};
  auto expect = [&](const std::vector<float>& got, const std::vector<double>& want) {
    EXPECT_TRUE(accel::test::near_all(got, want, tol, 0));
  };
  expect(imp(0, PoolEdge::ZeroPad, AggregationOrder::PoolMaxMean), p);
  expect(imp(1, PoolEdge::ZeroPad, AggregationOrder::PoolMaxMean), p);
  // k = 3 zero-pad: (0+1+2)/21, (1+2+4)/21, (2+4+0)/21.
  expect(imp(3, PoolEdge::ZeroPad, AggregationOrder::PoolMaxMean), {3 / 21., 7 / 21., 6 / 21.});
  // Renormalised: (1+2)/14, 7/21, (2+4)/14. Same with pooling last (one row: max/mean are
  // identity).
  expect(imp(3, PoolEdge::Renormalize, AggregationOrder::PoolMaxMean), {3 / 14., 7 / 21., 6 / 14.});
  expect(imp(3, PoolEdge::Renormalize, AggregationOrder::MaxMeanPool), {3 / 14., 7 / 21., 6 / 14.});
  // k = 13 > N: every position averages the whole row; zero-pad divides by 13.
  expect(imp(13, PoolEdge::ZeroPad, AggregationOrder::PoolMaxMean), {1 / 13., 1 / 13., 1 / 13.});
  expect(imp(13, PoolEdge::Renormalize, AggregationOrder::PoolMaxMean), {1 / 3., 1 / 3., 1 / 3.});
}

// GQA: H = 2, Hkv = 1, A = 2. Head 0 prefers key 0, head 1 key 1; max over heads then mean over a.
TEST(SpecPrefillScoring, HandWorkedGqaMaxThenMean) {
  const float ln3 = std::log(3.f);
  // q rows [A][H*d], d = 1: a=0: (ln3, -ln3), a=1: (0, 0). Keys (1, -1) in one kv head.
  const float q[4] = {ln3, -ln3, 0.f, 0.f};
  const float k[2] = {1.f, -1.f};
  const sp::LayerQK layer{q, 0, k, 0};
  const sp::DraftShape sh{2, 1, 1, 2, 2};
  const auto got = sp::token_importance(std::span(&layer, 1), sh, {0});
  // a=0: head 0 logits (ln3, -ln3) -> (9/10, 1/10); head 1 -> (1/10, 9/10); max -> (0.9, 0.9).
  // a=1: uniform (0.5, 0.5). Mean: (0.7, 0.7).
  EXPECT_TRUE(accel::test::near_all(got, std::vector<double>{0.7, 0.7}, 1e-6, 0));
}

TEST(SpecPrefillScoring, SingleKeyIsOneAndEmptyIsEmpty) {
  const Problem p(2, 4, 2, 16, 3, 1, 5);
  const auto one = sp::token_importance(p.layers(), p.shape, {0});
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0], 1.f);
  sp::DraftShape empty = p.shape;
  empty.n_keys = 0;
  EXPECT_TRUE(sp::token_importance(p.layers(), empty).empty());
}

TEST(SpecPrefillScoring, RejectsBadArguments) {
  const Problem p(1, 8, 2, 16, 2, 10, 3);
  auto throws_naming = [&](sp::DraftShape sh, sp::ScoringOptions o, std::vector<sp::LayerQK> v,
                           const std::string& word) {
    try {
      sp::token_importance(v, sh, o);
      ADD_FAILURE() << "no throw, expected one naming " << word;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(word), std::string::npos) << e.what();
    }
  };
  const auto v = p.views;
  sp::DraftShape sh = p.shape;
  sh.n_kv_heads = 3;
  throws_naming(sh, {}, v, "n_kv_heads");
  sh = p.shape, sh.n_queries = 0;
  throws_naming(sh, {}, v, "n_queries");
  sh = p.shape, sh.head_dim = 0;
  throws_naming(sh, {}, v, "head_dim");
  throws_naming(p.shape, {12}, v, "pool_kernel");
  throws_naming(p.shape, {-1}, v, "pool_kernel");
  throws_naming(p.shape, {}, {}, "layers");
  auto w = v;
  w[0].q = nullptr;
  throws_naming(p.shape, {}, w, "q is null");
  w = v, w[0].k_stride = 31;
  throws_naming(p.shape, {}, w, "k_stride");
  w = v, w[0].q_stride = 100;
  throws_naming(p.shape, {}, w, "q_stride");
}

// 1 vs 2 threads: bit-identical for both aggregation orders and an uneven task count.
TEST(SpecPrefillScoring, ThreadCountInvariant) {
  const int saved = accel::num_threads();
  for (const auto& [H, Hkv, A, N] : std::vector<std::tuple<int, int, int, size_t>>{
           {8, 2, 8, 4099}, {12, 4, 3, 1000}, {4, 4, 1, 777}}) {
    const Problem p(3, H, Hkv, 64, A, N, 11, 2.f, 0, 16);
    for (AggregationOrder order : {AggregationOrder::PoolMaxMean, AggregationOrder::MaxMeanPool}) {
      const sp::ScoringOptions o{13, PoolEdge::ZeroPad, order};
      accel::set_num_threads(1);
      const auto one = sp::token_importance(p.layers(), p.shape, o);
      accel::set_num_threads(2);
      const auto two = sp::token_importance(p.layers(), p.shape, o);
      EXPECT_TRUE(accel::test::bit_equal(one, two)) << describe(p, o);
    }
  }
  accel::set_num_threads(saved);
}

// ----------------------------------------------------------------------------------------------
// Selection, hand-worked

std::vector<int32_t> range(int32_t a, int32_t b) {
  std::vector<int32_t> r(size_t(b - a));
  std::iota(r.begin(), r.end(), a);
  return r;
}

// imp over n positions with chunk c's tokens all at score[c].
std::vector<float> chunked_imp(size_t n, int chunk, const std::vector<float>& score) {
  std::vector<float> imp(n);
  for (size_t j = 0; j < n; ++j) imp[j] = score[j / size_t(chunk)];
  return imp;
}

TEST(SpecPrefillSelect, PartialLastChunk) {
  // N = 1000, C = 32: 31 full chunks + one of 8; keep 0.1 -> ceil(3.2) = 4 chunks.
  std::vector<float> score(32, 0.f);
  score[2] = 5, score[9] = 4, score[20] = 3, score[30] = 2, score[31] = 1;
  auto imp = chunked_imp(1000, 32, score);
  sp::Selection s = sp::select_chunks(imp.data(), imp.size(), 32, 0.1);
  EXPECT_EQ(s.n_chunks, 32);
  EXPECT_EQ(s.budget_chunks, 4);
  EXPECT_EQ(s.kept_chunks, (std::vector<int32_t>{2, 9, 20, 30}));
  EXPECT_EQ(s.kept_positions.size(), 128u);  // K = 128
  // The partial chunk scored by its mean over 8 tokens (not /32): make it the best.
  score[31] = 6;
  imp = chunked_imp(1000, 32, score);
  s = sp::select_chunks(imp.data(), imp.size(), 32, 0.1);
  EXPECT_EQ(s.kept_chunks, (std::vector<int32_t>{2, 9, 20, 31}));
  EXPECT_EQ(s.kept_positions.size(), 104u);  // K = 3 * 32 + 8
  EXPECT_EQ(s.kept_positions.back(), 999);
  EXPECT_TRUE(std::is_sorted(s.kept_positions.begin(), s.kept_positions.end()));
}

TEST(SpecPrefillSelect, TiesGoToLowerIndex) {
  std::vector<float> flat(8 * 4, 1.f);  // 8 chunks of 4, all equal
  EXPECT_EQ(sp::select_chunks(flat.data(), flat.size(), 4, 0.25).kept_chunks,
            (std::vector<int32_t>{0, 1}));
  // Chunks 2, 5, 7 tie at the top; keep 2 -> the lower two.
  auto imp = chunked_imp(32, 4, {0, 1, 3, 1, 2, 3, 0, 3});
  EXPECT_EQ(sp::select_chunks(imp.data(), imp.size(), 4, 0.25).kept_chunks,
            (std::vector<int32_t>{2, 5}));
  EXPECT_EQ(ref::select(std::vector<double>(imp.begin(), imp.end()), 4, 0.25).kept_chunks,
            (std::vector<int32_t>{2, 5}));
}

TEST(SpecPrefillSelect, KeepRounding) {
  auto imp = chunked_imp(7 * 16, 16, {7, 6, 5, 4, 3, 2, 1});
  // 0.2 of 7 chunks: ceil(1.4) = 2; floor variant max(1, 1) = 1.
  EXPECT_EQ(sp::select_chunks(imp.data(), imp.size(), 16, 0.2).kept_chunks,
            (std::vector<int32_t>{0, 1}));
  const sp::SelectOptions floor{0, sp::KeepRounding::FloorMin1};
  EXPECT_EQ(sp::select_chunks(imp.data(), imp.size(), 16, 0.2, floor).kept_chunks,
            (std::vector<int32_t>{0}));
  // 0.1 of 7: ceil(0.7) = 1, floor(0.7) = 0 -> max(1, 0) = 1.
  EXPECT_EQ(sp::select_chunks(imp.data(), imp.size(), 16, 0.1).budget_chunks, 1);
  EXPECT_EQ(sp::select_chunks(imp.data(), imp.size(), 16, 0.1, floor).budget_chunks, 1);
  // Python's math.ceil(100 * 0.07) = 8 (100 * 0.07 = 7.000000000000001); we match the reference.
  std::vector<float> hundred(100 * 2, 1.f);
  EXPECT_EQ(sp::select_chunks(hundred.data(), hundred.size(), 2, 0.07).budget_chunks, 8);
}

TEST(SpecPrefillSelect, KeepOneKeepsEverything) {
  const auto imp = accel::test::random_normal(1000, 4);
  const sp::Selection s = sp::select_chunks(imp.data(), imp.size(), 32, 1.0);
  EXPECT_EQ(s.kept_positions, range(0, 1000));
  EXPECT_EQ(s.kept_chunks, range(0, 32));
}

TEST(SpecPrefillSelect, InvalidArgumentsThrowNamingThem) {
  const std::vector<float> imp(64, 1.f);
  for (double keep : {0.0, -0.1, 1.5, std::nan("")}) {
    try {
      sp::select_chunks(imp.data(), imp.size(), 32, keep);
      ADD_FAILURE() << "keep=" << keep << " accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("keep"), std::string::npos) << e.what();
    }
  }
  try {
    sp::select_chunks(imp.data(), imp.size(), 0, 0.5);
    ADD_FAILURE() << "chunk=0 accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("chunk"), std::string::npos) << e.what();
  }
  EXPECT_THROW(sp::select_chunks(imp.data(), imp.size(), 32, 0.5, {-1}), std::invalid_argument);
}

TEST(SpecPrefillSelect, EmptyPrompt) {
  const sp::Selection s = sp::select_chunks(nullptr, 0, 32, 0.5);
  EXPECT_EQ(s.n_chunks, 0);
  EXPECT_TRUE(s.kept_positions.empty());
}

TEST(SpecPrefillSelect, ForceTailTokens) {
  // Scores fall with the index, so without the floor the tail would never be kept.
  std::vector<float> score(32);
  for (int c = 0; c < 32; ++c) score[size_t(c)] = float(100 - c);
  const auto imp = chunked_imp(1000, 32, score);
  const std::vector<double> impd(imp.begin(), imp.end());
  // T = 100: positions 900..999 lie in chunks 28..31 (chunk 28 = 896..927). keep 0.2 -> 7 chunks:
  // the 4 forced ones and the best 3 others.
  sp::SelectOptions o{100};
  sp::Selection s = sp::select_chunks(imp.data(), imp.size(), 32, 0.2, o);
  EXPECT_EQ(s.kept_chunks, (std::vector<int32_t>{0, 1, 2, 28, 29, 30, 31}));
  EXPECT_EQ(s.forced_chunks, 4);
  EXPECT_FALSE(s.tail_exceeded_budget);
  EXPECT_EQ(s.kept_chunks, ref::select(impd, 32, 0.2, o).kept_chunks);
  // keep 0.1 -> budget 4 = the forced chunks exactly.
  s = sp::select_chunks(imp.data(), imp.size(), 32, 0.1, o);
  EXPECT_EQ(s.kept_chunks, (std::vector<int32_t>{28, 29, 30, 31}));
  EXPECT_FALSE(s.tail_exceeded_budget);
  // T = 512: positions 488..999 -> chunks 15..31 (17 > budget 4): all kept, flagged.
  o.force_tail_tokens = 512;
  s = sp::select_chunks(imp.data(), imp.size(), 32, 0.1, o);
  EXPECT_EQ(s.kept_chunks, range(15, 32));
  EXPECT_EQ(s.kept_positions, range(15 * 32, 1000));
  EXPECT_TRUE(s.tail_exceeded_budget);
  EXPECT_EQ(s.kept_chunks, ref::select(impd, 32, 0.1, o).kept_chunks);
  // T larger than the prompt forces everything.
  o.force_tail_tokens = 5000;
  EXPECT_EQ(sp::select_chunks(imp.data(), imp.size(), 32, 0.1, o).kept_positions, range(0, 1000));
}

TEST(SpecPrefillSelect, PrefixOffset) {
  auto imp = chunked_imp(100, 10, {0, 9, 0, 0, 8, 0, 0, 0, 0, 7});
  const sp::Selection s = sp::select_chunks_after_prefix(imp.data(), imp.size(), 500, 10, 0.3);
  EXPECT_EQ(s.kept_chunks, (std::vector<int32_t>{1, 4, 9}));  // suffix-relative
  std::vector<int32_t> want = range(510, 520);
  for (int32_t p : range(540, 550)) want.push_back(p);
  for (int32_t p : range(590, 600)) want.push_back(p);
  EXPECT_EQ(s.kept_positions, want);
  EXPECT_THROW(
      sp::select_chunks_after_prefix(imp.data(), imp.size(), size_t(INT32_MAX) - 50, 10, 0.3),
      std::invalid_argument);
}

}  // namespace
