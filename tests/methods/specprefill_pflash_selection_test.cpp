// pflash's scoring and selection (methods.md §1.3, column "LB pflash") against plain,
// independently written reimplementations in this file: causal tail + max -> mean -> pool with
// in-range edges on random Q/K, forced head/tail chunks with their scaling, n-gram anchors and
// floor rounding on hand-worked and random score arrays; plus the anchor rule and inverse RoPE.
// Tests only.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <tuple>
#include <vector>

#include "methods/specprefill_pflash.h"
#include "methods/specprefill_scoring.h"

namespace {

namespace sp = accel::specprefill;

// ---- plain pflash reimplementation (double, explicit loops) ---------------------------------

// imp[j] = pool_renorm(mean_a max_{l,h} P[l,h,a,j]), query a at key position N-A+a, causal.
std::vector<double> plain_pflash_importance(const std::vector<std::vector<float>>& q,
                                            const std::vector<std::vector<float>>& k, int H,
                                            int Hkv, int d, int A, int N, int pool) {
  std::vector<double> raw(size_t(A) * N, 0.0);  // probabilities are >= 0, so 0 is a safe start
  for (size_t l = 0; l < q.size(); ++l)
    for (int h = 0; h < H; ++h)
      for (int a = 0; a < A; ++a) {
        const int g = h / (H / Hkv), last = N - A + a;  // keys 0..last visible
        std::vector<double> s(size_t(last) + 1);
        double mx = -1e300;
        for (int j = 0; j <= last; ++j) {
          double dot = 0;
          for (int t = 0; t < d; ++t)
            dot += double(q[l][size_t(a * H * d + h * d + t)]) *
                   double(k[l][size_t(j * Hkv * d + g * d + t)]);
          s[size_t(j)] = dot / std::sqrt(double(d));
          mx = std::max(mx, s[size_t(j)]);
        }
        double z = 0;
        for (double& v : s) z += (v = std::exp(v - mx));
        for (int j = 0; j <= last; ++j)
          raw[size_t(a * N + j)] = std::max(raw[size_t(a * N + j)], s[size_t(j)] / z);
      }
  std::vector<double> mean(static_cast<size_t>(N), 0.0), out(static_cast<size_t>(N));
  for (int j = 0; j < N; ++j) {
    for (int a = 0; a < A; ++a) mean[size_t(j)] += raw[size_t(a * N + j)];
    mean[size_t(j)] /= A;
  }
  for (int j = 0; j < N; ++j) {
    double s = 0;
    int cnt = 0;
    for (int t = j - pool / 2; t <= j + pool / 2; ++t)
      if (t >= 0 && t < N) s += mean[size_t(t)], ++cnt;
    out[size_t(j)] = s / cnt;
  }
  return out;
}

// pflash selection: budget max(1, floor(nc * keep)); head/tail scaled to F = max(1, budget/2)
// when head + tail >= budget; then anchors by score, then others by score (ties: lower index).
std::vector<int32_t> plain_pflash_select(const std::vector<float>& imp, int C, double keep,
                                         int head, int tail, const std::vector<int32_t>& anchors) {
  const int n = int(imp.size()), nc = (n + C - 1) / C;
  int budget = std::min(nc, std::max(1, int(std::floor(nc * keep))));
  if (head + tail >= budget && head + tail > 0) {
    const int F = std::max(1, budget / 2);
    const int h = head * F / (head + tail);
    head = h;
    tail = F - h;
  }
  std::vector<int32_t> kept;
  for (int c = 0; c < nc; ++c)
    if (c < head || c >= nc - tail) kept.push_back(c);
  std::vector<std::tuple<int, double, int>> rest;  // (-is_anchor, -score, index): sort ascending
  for (int c = 0; c < nc; ++c) {
    if (c < head || c >= nc - tail) continue;
    double s = 0;
    const int b = std::min(n, c * C + C);
    for (int j = c * C; j < b; ++j) s += imp[size_t(j)];
    const bool is_anchor = std::find(anchors.begin(), anchors.end(), c) != anchors.end();
    rest.emplace_back(is_anchor ? -1 : 0, -s / (b - c * C), c);
  }
  std::sort(rest.begin(), rest.end());
  const int take = budget - int(kept.size());
  for (int i = 0; i < take; ++i) kept.push_back(std::get<2>(rest[size_t(i)]));
  std::sort(kept.begin(), kept.end());
  return kept;
}

sp::Selection pflash_select(const std::vector<float>& imp, int C, double keep, int head, int tail,
                            std::vector<int32_t> anchors) {
  sp::SelectOptions o;
  o.keep_rounding = sp::KeepRounding::FloorMin1;
  o.head_chunks = head;
  o.tail_chunks = tail;
  o.anchor_chunks = std::move(anchors);
  return sp::select_chunks(imp.data(), imp.size(), C, keep, o);
}

// ---- hand-worked --------------------------------------------------------------------------

TEST(PflashSelection, HeadAndTailScaledToHalfTheBudgetWhenTheyFillIt) {
  // 5 chunks of 2, keep 0.5 -> floor(2.5) = 2; head 1 + tail 1 >= 2 -> F = 1: head 0, tail 1.
  // One chunk left: anchor chunk 1 wins over the higher-scoring chunk 2.
  const std::vector<float> imp = {0, 0, 1, 1, 5, 5, 0, 0, 0, 0};
  const sp::Selection s = pflash_select(imp, 2, 0.5, 1, 1, {1});
  EXPECT_EQ(s.budget_chunks, 2);
  EXPECT_EQ(s.head_chunks, 0);
  EXPECT_EQ(s.tail_chunks, 1);
  EXPECT_EQ(s.kept_chunks, (std::vector<int32_t>{1, 4}));
  EXPECT_EQ(s.anchor_chunks, 1);
  EXPECT_EQ(s.kept_chunks, plain_pflash_select(imp, 2, 0.5, 1, 1, {1}));
}

TEST(PflashSelection, ForcedHeadTailThenAnchorThenBestScore) {
  // keep 0.8 -> floor(4.0) = 4 chunks: head {0}, tail {4}, anchor {2}, then chunk 3 (3 > 1).
  const std::vector<float> imp = {0, 0, 1, 1, 0, 0, 2, 2, 0, 0};
  const sp::Selection s = pflash_select(imp, 2, 0.8, 1, 1, {2});
  EXPECT_EQ(s.kept_chunks, (std::vector<int32_t>{0, 2, 3, 4}));
  EXPECT_EQ(s.forced_chunks, 2);
  EXPECT_EQ(s.kept_positions, (std::vector<int32_t>{0, 1, 4, 5, 6, 7, 8, 9}));
}

TEST(PflashSelection, FloorRoundingKeepsAtLeastOneChunk) {
  const std::vector<float> imp(100, 1.f);  // 4 chunks of 32 (last 4), keep 0.1 -> floor 0.4 -> 1
  const sp::Selection s = pflash_select(imp, 32, 0.1, 0, 0, {});
  EXPECT_EQ(s.budget_chunks, 1);
  EXPECT_EQ(s.kept_chunks, (std::vector<int32_t>{0}));  // all equal: lower index
}

TEST(PflashSelection, AnchorsBeyondTheBudgetAreRankedByScore) {
  // Budget 2, no forced chunks, anchors {0, 2, 3}: the two best-scoring anchors win.
  const std::vector<float> imp = {1, 9, 3, 2};
  const sp::Selection s = pflash_select(imp, 1, 0.5, 0, 0, {0, 2, 3});
  EXPECT_EQ(s.kept_chunks, (std::vector<int32_t>{2, 3}));
  EXPECT_EQ(s.anchor_chunks, 2);
}

TEST(PflashSelection, AnchorOutsideTheChunksIsRefused) {
  const std::vector<float> imp = {1, 2, 3};
  EXPECT_THROW(pflash_select(imp, 1, 0.5, 0, 0, {3}), std::invalid_argument);
}

// ---- random ---------------------------------------------------------------------------------

TEST(PflashSelection, RandomScoresEqualThePlainReimplementation) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(0.f, 1.f);
  for (int trial = 0; trial < 300; ++trial) {
    const int n = 1 + int(rng() % 3000), C = 1 + int(rng() % 64);
    const int nc = (n + C - 1) / C;
    const double keep = 0.01 + 0.99 * u(rng);
    const int head = int(rng() % 12), tail = int(rng() % 30);
    std::vector<float> imp(static_cast<size_t>(n));
    for (float& v : imp) v = u(rng);  // continuous: chunk-mean ties have probability ~0
    std::vector<int32_t> anchors;
    for (int c = 0; c < nc; ++c)
      if (rng() % 10 == 0) anchors.push_back(c);
    const sp::Selection s = pflash_select(imp, C, keep, head, tail, anchors);
    EXPECT_EQ(s.kept_chunks, plain_pflash_select(imp, C, keep, head, tail, anchors))
        << "trial " << trial << " n " << n << " C " << C << " keep " << keep;
  }
}

TEST(PflashScoring, CausalTailMaxMeanPoolRenormalizedEqualsPlainReimplementation) {
  std::mt19937 rng(3);
  std::normal_distribution<float> g(0.f, 1.f);
  struct Shape {
    int L, H, Hkv, d, A, N, pool;
  };
  for (const Shape sh : {Shape{2, 4, 2, 8, 8, 50, 13}, Shape{1, 2, 1, 16, 8, 8, 13},
                         Shape{3, 6, 3, 4, 5, 200, 5}, Shape{2, 2, 2, 8, 1, 33, 1}}) {
    std::vector<std::vector<float>> q(size_t(sh.L)), k(size_t(sh.L));
    std::vector<sp::LayerQK> layers;
    for (int l = 0; l < sh.L; ++l) {
      q[size_t(l)].resize(size_t(sh.A * sh.H * sh.d));
      k[size_t(l)].resize(size_t(sh.N * sh.Hkv * sh.d));
      for (float& v : q[size_t(l)]) v = 2.f * g(rng);
      for (float& v : k[size_t(l)]) v = g(rng);
      layers.push_back({q[size_t(l)].data(), 0, k[size_t(l)].data(), 0});
    }
    sp::ScoringOptions o;
    o.pool_kernel = sh.pool;
    o.pool_edge = accel::PoolEdge::Renormalize;
    o.order = sp::AggregationOrder::MaxMeanPool;
    o.causal_tail = true;
    const std::vector<float> got =
        sp::token_importance(layers, {sh.H, sh.Hkv, sh.d, sh.A, size_t(sh.N), 0.f}, o);
    const std::vector<double> want =
        plain_pflash_importance(q, k, sh.H, sh.Hkv, sh.d, sh.A, sh.N, sh.pool);
    ASSERT_EQ(got.size(), want.size());
    for (size_t j = 0; j < want.size(); ++j)
      EXPECT_NEAR(got[j], want[j], 1e-5 * want[j] + 1e-9) << "N " << sh.N << " j " << j;
  }
}

TEST(PflashScoring, CausalTailNeedsAtMostOneQueryPerKey) {
  std::vector<float> q(8 * 4, 1.f), k(4 * 4, 1.f);
  std::vector<sp::LayerQK> layers{{q.data(), 0, k.data(), 0}};
  sp::ScoringOptions o;
  o.causal_tail = true;
  EXPECT_THROW(sp::token_importance(layers, {1, 1, 4, 8, 4, 0.f}, o), std::invalid_argument);
}

// ---- anchors and inverse RoPE ---------------------------------------------------------------

TEST(PflashAnchors, EarlierOccurrencesOfTheFinalQueryNgramsMarkTheirChunks) {
  // Final query = last 8 tokens (positions 8..15); its 4-grams start at 8..12. (1,2,3,4) starts
  // at 9 and occurs earlier at 0 (positions 0..3); (9,9,5,1) would span into the query: ignored.
  const std::vector<int32_t> t = {1, 2, 3, 4, 9, 9, 9, 9, 5, 1, 2, 3, 4, 7, 7, 7};
  EXPECT_EQ(sp::ngram_anchor_chunks(t, 2, 4, 8), (std::vector<int32_t>{0, 1}));
  EXPECT_EQ(sp::ngram_anchor_chunks(t, 3, 4, 8), (std::vector<int32_t>{0, 1}));
  EXPECT_EQ(sp::ngram_anchor_chunks(t, 4, 4, 8), (std::vector<int32_t>{0}));
  // Two earlier occurrences, one straddling chunks 1 and 2 (positions 5..8 with chunk 4).
  const std::vector<int32_t> u = {0, 0, 0, 0, 0, 7, 7, 7, 7, 0, 0, 0, 0, 0, 0, 0, 3, 7, 7, 7, 7};
  EXPECT_EQ(sp::ngram_anchor_chunks(u, 4, 4, 5), (std::vector<int32_t>{1, 2}));
  EXPECT_TRUE(sp::ngram_anchor_chunks(u, 4, 0, 5).empty());
  EXPECT_TRUE(sp::ngram_anchor_chunks(u, 4, 4, 3).empty());  // window shorter than the n-gram
}

TEST(PflashRope, UnrotateUndoesRopeUpToRounding) {
  for (const accel::RopeLayout layout : {accel::RopeLayout::Adjacent, accel::RopeLayout::HalfSplit})
    for (const float attn : {1.f, 1.3f}) {
      accel::RopeParams p;
      p.head_dim = 16;
      p.n_rot = 12;
      p.layout = layout;
      p.attn_factor = attn;
      std::mt19937 rng(1);
      std::normal_distribution<float> g(0.f, 1.f);
      const int heads = 3, rows = 5;
      std::vector<float> x(size_t(rows * heads * 16));
      for (float& v : x) v = g(rng);
      const std::vector<int32_t> pos = {0, 1, 77, 4095, 30000};
      std::vector<float> y = x;
      accel::rope(y.data(), rows, size_t(heads * 16), heads, pos.data(), p);
      sp::unrotate_rope(y.data(), rows, size_t(heads * 16), heads, pos.data(), p);
      for (size_t i = 0; i < x.size(); ++i) EXPECT_NEAR(y[i], x[i], 1e-5f) << i;
    }
}

}  // namespace
