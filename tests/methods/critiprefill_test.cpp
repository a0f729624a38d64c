// CritiPrefill on the tiny family and on random Q/K: the identity checks (threshold >= N, every
// layer dense, every past block selected: the baseline bit for bit), selections equal to a plain
// full-matrix implementation of spec §5.3's steps (random Q/K, and the model's own Q/K during a
// sparse prefill), pruned attention equal to a double reference over the selected keys, chunking
// and thread-count independence, dense decode over the full cache, and parameter checks.
#include <gtest/gtest.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <map>
#include <numeric>

#include "kernels/attention.h"
#include "kernels/threading.h"
#include "methods/baseline.h"
#include "methods/critiprefill.h"
#include "models/generation.h"
#include "models/synthetic.h"
#include "suites/synthetic_prompt.h"
#include "tests/support/test_support.h"

namespace accel {
namespace {

namespace cp = critiprefill;

// ---------------------------------------------------------------------------------------------
// A plain implementation of spec §5.3 steps 1-9 over one layer's whole Q and K, written from the
// spec (and the reference's cache_profilling) without the method's code: full [H, n_seg, n_blk]
// matrices, repeat_kv, an additive finfo.min mask, softmax over every block, the fusion EMA over
// the whole matrix, and top-k per (kv head, segment). Float arithmetic in the order the method's
// header states, so equal inputs give equal scores.

struct RefLayerState {
  std::vector<float> prev;  // [Hkv][n_seg][n_blk], empty = none
};

// q: [N][H*D] (row stride ldq), k: [N][Hkv*D] (row stride ldk). Returns, per kv head g and
// segment s, the top-k block indices ascending: sel[g][s].
std::vector<std::vector<std::vector<int32_t>>> reference_selection(const float* q, size_t ldq,
                                                                   const float* k, size_t ldk,
                                                                   size_t N, int H, int Hkv, int D,
                                                                   const cp::Config& c, int layer,
                                                                   RefLayerState& st) {
  const size_t S = size_t(c.segment), B = size_t(c.block), nrep = S / B;
  const size_t G = size_t(H / Hkv);
  // 1. Truncate to pool_len.
  const size_t n_seg_all = (N + S - 1) / S;
  const size_t pool_len = (n_seg_all - 1) * S, n_seg = pool_len / S, n_blk = pool_len / B;
  // 2-3. Representatives, keys repeated to H heads.
  auto rep = [&](const float* x, size_t ld, size_t col, size_t t0, size_t len, bool want_max) {
    float r = x[t0 * ld + col];
    for (size_t t = t0 + 1; t < t0 + len; ++t)
      r = want_max ? std::max(r, x[t * ld + col]) : std::min(r, x[t * ld + col]);
    return r;
  };
  std::vector<float> qmax(size_t(H) * n_seg * D), qmin(qmax.size());
  std::vector<float> kmax(size_t(H) * n_blk * D), kmin(kmax.size());
  for (int h = 0; h < H; ++h)
    for (int d = 0; d < D; ++d) {
      for (size_t s = 0; s < n_seg; ++s) {
        qmax[(h * n_seg + s) * D + d] = rep(q, ldq, size_t(h) * D + d, s * S, S, true);
        qmin[(h * n_seg + s) * D + d] = rep(q, ldq, size_t(h) * D + d, s * S, S, false);
      }
      const size_t kcol = size_t(h) / G * D + d;  // repeat_kv
      for (size_t b = 0; b < n_blk; ++b) {
        kmax[(h * n_blk + b) * D + d] = rep(k, ldk, kcol, b * B, B, true);
        kmin[(h * n_blk + b) * D + d] = rep(k, ldk, kcol, b * B, B, false);
      }
    }
  auto dot = [&](const float* x, const float* y) {
    float acc = 0.f;
    for (int d = 0; d < D; ++d) acc = acc + x[d] * y[d];
    return acc;
  };
  // 4. Scores per query head: the mean of the max and min queries' dot products, max over keys.
  std::vector<float> A(size_t(H) * n_seg * n_blk);
  for (int h = 0; h < H; ++h)
    for (size_t s = 0; s < n_seg; ++s)
      for (size_t b = 0; b < n_blk; ++b) {
        const float* qx = &qmax[(h * n_seg + s) * D];
        const float* qn = &qmin[(h * n_seg + s) * D];
        const float* kx = &kmax[(h * n_blk + b) * D];
        const float* kn = &kmin[(h * n_blk + b) * D];
        const float wmax = (dot(qx, kx) + dot(qn, kx)) / 2.f;
        const float wmin = (dot(qx, kn) + dot(qn, kn)) / 2.f;
        A[(h * n_seg + s) * n_blk + b] = std::max(wmax, wmin);
      }
  // 5. Mean over the query heads of each kv group.
  std::vector<float> P(size_t(Hkv) * n_seg * n_blk);
  for (int g = 0; g < Hkv; ++g)
    for (size_t s = 0; s < n_seg; ++s)
      for (size_t b = 0; b < n_blk; ++b) {
        float sum = 0.f;
        for (size_t i = 0; i < G; ++i) {
          const float a = A[((g * G + i) * n_seg + s) * n_blk + b];
          sum = i == 0 ? a : sum + a;
        }
        P[(g * n_seg + s) * n_blk + b] = sum / float(G);
      }
  // 6. Mask: segment s keeps blocks b <= s * nrep - 1.
  for (int g = 0; g < Hkv; ++g)
    for (size_t s = 0; s < n_seg; ++s)
      for (size_t b = 0; b < n_blk; ++b)
        if (!(b + nrep < s * nrep + nrep)) P[(g * n_seg + s) * n_blk + b] += -FLT_MAX;
  // 7. Softmax over blocks (fp32).
  for (size_t row = 0; row < size_t(Hkv) * n_seg; ++row) {
    float* p = &P[row * n_blk];
    float m = -INFINITY;
    for (size_t b = 0; b < n_blk; ++b) m = std::max(m, p[b]);
    float sum = 0.f;
    for (size_t b = 0; b < n_blk; ++b) {
      p[b] = std::exp(p[b] - m);
      sum = sum + p[b];
    }
    for (size_t b = 0; b < n_blk; ++b) p[b] = p[b] / sum;
  }
  // 8. Layer fusion.
  if (c.layer_fusion) {
    if (layer <= 1 || st.prev.empty()) {
      st.prev = P;
    } else {
      for (size_t i = 0; i < P.size(); ++i) P[i] = st.prev[i] * 0.25f + P[i] * 0.75f;
      st.prev = P;
    }
  }
  // 9. Top-k per (kv head, segment): descending score, ties to the lower index; ascending out.
  const size_t topk = size_t(c.budget / c.block);
  std::vector<std::vector<std::vector<int32_t>>> sel(static_cast<size_t>(Hkv),
                                                     std::vector<std::vector<int32_t>>(n_seg));
  for (int g = 0; g < Hkv; ++g)
    for (size_t s = 0; s < n_seg; ++s) {
      const float* p = &P[(g * n_seg + s) * n_blk];
      std::vector<int32_t> idx(n_blk);
      std::iota(idx.begin(), idx.end(), 0);
      std::stable_sort(idx.begin(), idx.end(), [&](int32_t a, int32_t b) { return p[a] > p[b]; });
      idx.resize(std::min(topk, n_blk));
      std::sort(idx.begin(), idx.end());
      sel[size_t(g)][s] = idx;
    }
  return sel;
}

// The method's selection for segment s laid out as [g][k] -> per-head lists.
std::vector<int32_t> head_list(const std::vector<int32_t>& blocks, int Hkv, int g) {
  const size_t k = blocks.size() / size_t(Hkv);
  return {blocks.begin() + std::ptrdiff_t(g * k), blocks.begin() + std::ptrdiff_t((g + 1) * k)};
}

// ---------------------------------------------------------------------------------------------
// Random Q/K

struct RandomCase {
  int H, Hkv, D, segment, block, budget, threshold, layer_skip;
  bool fusion;
  size_t N;
};

TEST(CritiPrefillSelection, EqualsPlainReferenceOnRandomQK) {
  const RandomCase cases[] = {
      {4, 2, 32, 64, 8, 64, 256, 1, true, 1000},      // tiny-family shape
      {12, 4, 64, 128, 32, 256, 512, 1, true, 1536},  // small-family heads, N a segment multiple
      {8, 8, 16, 64, 16, 128, 128, 0, true, 777},     // every layer pruned (reset at 0 and 1)
      {6, 2, 24, 96, 32, 192, 384, 2, false, 1200},   // no fusion, first pruned layer 2
      {4, 1, 32, 64, 32, 32, 64, 1, true, 600},       // budget of one block
  };
  constexpr int kLayers = 4;
  for (const RandomCase& rc : cases) {
    SCOPED_TRACE(::testing::Message() << "H " << rc.H << "/" << rc.Hkv << " D " << rc.D << " seg "
                                      << rc.segment << " block " << rc.block << " N " << rc.N);
    cp::Config c;
    c.segment = rc.segment;
    c.block = rc.block;
    c.budget = rc.budget;
    c.threshold = rc.threshold;
    c.layer_skip = rc.layer_skip;
    c.layer_fusion = rc.fusion;
    c.validate();
    const cp::Heads heads{rc.H, rc.Hkv, rc.D};
    const size_t ldq = size_t(rc.H * rc.D), ldk = size_t(rc.Hkv * rc.D), S = size_t(rc.segment);
    RefLayerState ref_state;
    std::map<size_t, std::vector<float>> state;  // segment -> fusion row
    size_t compared = 0;
    for (int l = 0; l < kLayers; ++l) {
      if (!c.layer_pruned(l)) continue;
      // Queries with a per-channel offset so that segments and blocks differ in scale.
      std::vector<float> q = test::random_normal(rc.N * ldq, 100 + l, 1.f);
      std::vector<float> k = test::random_normal(rc.N * ldk, 200 + l, 1.f);
      for (size_t t = 0; t < rc.N; ++t)
        for (size_t j = 0; j < ldk; ++j) k[t * ldk + j] += 0.5f * std::sin(float(t * 7 + j) / 50);
      const auto ref = reference_selection(q.data(), ldq, k.data(), ldk, rc.N, rc.H, rc.Hkv, rc.D,
                                           c, l, ref_state);
      cp::KeyBlocks kb(heads, rc.block, c.pool_blocks(rc.N));
      kb.append(k.data(), ldk, c.pool_blocks(rc.N) * size_t(rc.block));
      for (size_t start = 0; start < rc.N; start += S) {
        if (!c.segment_pruned(start, rc.N)) continue;
        const auto got = cp::select_blocks(c, heads, l, q.data() + start * ldq, ldq, S, kb,
                                           start / size_t(rc.block), state[start / S]);
        for (int g = 0; g < rc.Hkv; ++g) {
          ASSERT_EQ(head_list(got, rc.Hkv, g), ref[size_t(g)][start / S])
              << "layer " << l << " segment " << start / S << " kv head " << g;
          ++compared;
        }
      }
    }
    EXPECT_GT(compared, 0u);
  }
}

TEST(CritiPrefillSelection, TopBlocksTiesNaNAndCap) {
  const float P[] = {0.5f, NAN, 0.25f, 0.5f, 0.1f};
  int32_t out[5];
  ASSERT_EQ(cp::top_blocks(P, 5, 2, out), 2u);
  EXPECT_EQ(std::vector<int32_t>(out, out + 2), (std::vector<int32_t>{0, 3}));  // tie: both 0.5
  ASSERT_EQ(cp::top_blocks(P, 5, 3, out), 3u);
  EXPECT_EQ(std::vector<int32_t>(out, out + 3), (std::vector<int32_t>{0, 2, 3}));
  ASSERT_EQ(cp::top_blocks(P, 5, 9, out), 5u);  // capped by the eligible count
  EXPECT_EQ(std::vector<int32_t>(out, out + 5), (std::vector<int32_t>{0, 1, 2, 3, 4}));
  const float Q[] = {0.2f, 0.2f, 0.2f};
  ASSERT_EQ(cp::top_blocks(Q, 3, 2, out), 2u);
  EXPECT_EQ(std::vector<int32_t>(out, out + 2), (std::vector<int32_t>{0, 1}));
}

TEST(CritiPrefillSelection, PlanMatchesSpecDefaults) {
  const cp::Config c;  // 512 / 32 / 2048 / 4096 / layer 0 dense / fusion
  EXPECT_EQ(c.top_k(), 64);
  EXPECT_FALSE(c.layer_pruned(0));
  EXPECT_TRUE(c.layer_pruned(1));
  EXPECT_FALSE(c.segment_pruned(3584, 100000));  // before the threshold
  EXPECT_TRUE(c.segment_pruned(4096, 4609));
  EXPECT_FALSE(c.segment_pruned(4096, 4608));  // the last segment, N a multiple of 512
  EXPECT_EQ(c.pruned_segments(4608), 0u);
  EXPECT_EQ(c.pruned_segments(5120), 1u);    // 4096 pruned, 4608 last
  EXPECT_EQ(c.pruned_segments(16384), 23u);  // 4096 .. 15360
  EXPECT_EQ(c.pool_blocks(16384), 496u);     // 31 segments * 16 blocks
  EXPECT_EQ(c.pool_blocks(16385), 512u);
  double dense = 0, kept = 0;
  cp::count_pairs(c, 2, 1, 4609, &dense, &kept);  // 10 segments, one pruned (4096)
  const double n = 4609;
  EXPECT_EQ(dense, 2 * n * (n + 1) / 2);
  // The pruned layer's segment at 4096 sees 2048 past keys + its causal own rows instead of 4096+.
  EXPECT_EQ(dense - kept, 512.0 * (4096 - 2048));
}

// ---------------------------------------------------------------------------------------------
// The method on the tiny family

class CritiPrefill : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new test::TempDir();
    const auto paths = make_synthetic_family("tiny", dir_->path().string(), 5, DType::F32);
    target_ = Model::load(paths[0]).release();
  }
  static void TearDownTestSuite() {
    delete target_;
    delete dir_;
  }
  static std::vector<int32_t> prompt(size_t n) {
    return synthetic_prompt(target_->config().n_vocab, 256, {257}, n, 9);
  }
  // A scaled-down configuration (spec defaults / 8): threshold >= budget as the spec requires.
  static nlohmann::json small_params() {
    return {{"segment", 64}, {"block", 8}, {"budget", 64}, {"threshold", 256}};
  }
  static cp::Config small_config() {
    return cp::config_from_params(resolve_params(method_, small_params()));
  }
  Outcome run(const Method& m, nlohmann::json params, size_t n, KVDType kv = KVDType::F32,
              size_t chunk = 64) {
    Engine e;
    e.target = target_;
    e.prefill_chunk = chunk;
    e.kv_dtype = kv;
    Request r;
    r.prompt = prompt(n);
    r.max_new_tokens = 8;
    r.keep_logits = 8;
    return m.run(e, r, resolve_params(m, params));
  }
  Outcome baseline(size_t n, KVDType kv = KVDType::F32) { return run(base_, {}, n, kv); }
  static void expect_identical(const Outcome& a, const Outcome& b) {
    EXPECT_EQ(a.tokens, b.tokens);
    ASSERT_EQ(a.logits.size(), b.logits.size());
    for (size_t i = 0; i < a.logits.size(); ++i)
      EXPECT_TRUE(test::bit_equal(a.logits[i], b.logits[i])) << "step " << i;
  }
  static inline test::TempDir* dir_ = nullptr;
  static inline Model* target_ = nullptr;
  static inline const CritiPrefillMethod method_{};
  static inline const BaselineMethod base_{};
};

TEST_F(CritiPrefill, DeclaresItsFallbackAndDefaults) {
  EXPECT_EQ(method_.fallback_reasons(), std::vector<std::string>{"below_threshold"});
  const nlohmann::json p = resolve_params(method_, {});
  EXPECT_EQ(p["segment"], 512);
  EXPECT_EQ(p["block"], 32);
  EXPECT_EQ(p["budget"], 2048);
  EXPECT_EQ(p["threshold"], 4096);
  EXPECT_EQ(p["layer_skip"], 1);
  EXPECT_EQ(p["layer_fusion"], true);
}

// Identity 1: no segment can be pruned (threshold >= N, or only the last segment after it): the
// declared fallback runs the baseline's prefill.
TEST_F(CritiPrefill, ThresholdAtLeastNReproducesBaselineBitForBit) {
  const size_t n = 1000;
  const Outcome base = baseline(n);
  for (int threshold : {1000, 1 << 20, 937}) {
    SCOPED_TRACE(threshold);
    nlohmann::json p = small_params();
    p["threshold"] = threshold;
    const Outcome o = run(method_, p, n);
    EXPECT_EQ(o.stats["fallback"], "below_threshold");
    expect_identical(o, base);
  }
  EXPECT_EQ(run(method_, {}, n).stats["fallback"], "below_threshold");  // defaults: 4096
}

// Identity 2: every layer dense (layer_skip = L) with segments that would be pruned: the sparse
// prefill's own path (segment batches, the attention hook declining every layer) gives the
// baseline's bits, for f32 and f16 caches.
TEST_F(CritiPrefill, EveryLayerDenseReproducesBaselineBitForBit) {
  for (KVDType kv : {KVDType::F32, KVDType::F16}) {
    SCOPED_TRACE(kv_dtype_name(kv));
    nlohmann::json p = small_params();
    p["layer_skip"] = target_->config().n_layer;
    const Outcome o = run(method_, p, 1000, kv);
    EXPECT_FALSE(o.stats.contains("fallback"));
    EXPECT_EQ(o.stats["pruned_layers"], 0);
    EXPECT_EQ(o.stats["attention_skipped"], 0.0);
    const Outcome base = baseline(1000, kv);
    expect_identical(o, base);
    EXPECT_DOUBLE_EQ(o.stats["ttft_flops"].get<double>(), base.stats["ttft_flops"].get<double>());
  }
}

// Identity 3 (stronger): the budget covers every eligible block, so each pruned segment's key list
// is all its past blocks in ascending order plus its own rows. The whole sparse path runs (block
// representatives, scores, fusion, top-k, the rows copy, the block-sparse kernel, the cache storing
// rows without attending) and must still give the baseline's bits, f32 and f16.
TEST_F(CritiPrefill, EveryPastBlockSelectedReproducesBaselineBitForBit) {
  for (KVDType kv : {KVDType::F32, KVDType::F16}) {
    SCOPED_TRACE(kv_dtype_name(kv));
    nlohmann::json p = small_params();
    p["budget"] = 1 << 20;
    const Outcome o = run(method_, p, 1000, kv);
    EXPECT_EQ(o.stats["pruned_segments"], 11);
    EXPECT_EQ(o.stats["pruned_layers"], 3);
    EXPECT_EQ(o.stats["attention_skipped"], 0.0);
    expect_identical(o, baseline(1000, kv));
  }
}

TEST_F(CritiPrefill, SparsePrefillSkipsAttentionAndDecodesDense) {
  const size_t n = 1000;
  const Outcome o = run(method_, small_params(), n);
  const Outcome base = baseline(n);
  EXPECT_FALSE(o.stats.contains("fallback"));
  EXPECT_EQ(o.stats["pruned_segments"], 11);  // segments starting at 256, 320, ..., 896
  EXPECT_EQ(o.stats["pruned_layers"], 3);     // layer 0 dense
  double dense = 0, kept = 0;
  cp::count_pairs(small_config(), 4, 4, n, &dense, &kept);
  EXPECT_EQ(o.stats["attention_pairs_dense"].get<double>(), 4 * 4 * 500500.0);
  EXPECT_EQ(o.stats["attention_pairs_kept"].get<double>(), kept);
  EXPECT_GT(o.stats["attention_skipped"].get<double>(), 0.5);
  // TTFT FLOPs: the baseline's with the skipped pairs' 4 x head_dim FLOPs each taken out.
  EXPECT_NEAR(o.stats["ttft_flops"].get<double>(),
              base.stats["ttft_flops"].get<double>() -
                  (4 * 4 * 500500.0 - kept) * 4 * target_->config().head_dim,
              1e-12 * base.stats["ttft_flops"].get<double>());
  // Sparse attention changes the logits (it is not a dense run in disguise) ...
  EXPECT_FALSE(test::bit_equal(o.logits[0], base.logits[0]));
  // ... while the cache holds every prompt row and decoding continues at the prompt length.
  EXPECT_EQ(o.kept_tokens, n);
  EXPECT_EQ(o.kv_bytes, (n + 7) * (4u * 2 * 64 * 4 + 4));  // 4 layers, K+V, kv_dim 64, position
  EXPECT_EQ(o.tokens.size(), 8u);
  std::vector<std::string> names;
  for (const auto& [name, s] : o.phases) names.push_back(name);
  EXPECT_EQ(names, (std::vector<std::string>{"prefill", "first_token", "decode"}));
}

// Batches of one segment, two segments or the whole prompt, and 1 or 2 threads: the same bits.
TEST_F(CritiPrefill, ChunkAndThreadsDoNotChangeTheBits) {
  const auto toks = prompt(1000);
  const cp::Config c = small_config();
  const int threads0 = num_threads();
  std::vector<float> first;
  for (auto [chunk, threads] : {std::pair{64, 2}, {128, 2}, {1000, 2}, {100, 1}}) {
    SCOPED_TRACE(::testing::Message() << "chunk " << chunk << " threads " << threads);
    set_num_threads(threads);
    KVCache cache = target_->make_cache();
    const std::vector<float> lg = cp::sparse_prefill(*target_, toks, cache, c, size_t(chunk));
    EXPECT_EQ(cache.size(), 1000u);
    if (first.empty())
      first = lg;
    else
      EXPECT_TRUE(test::bit_equal(lg, first));
  }
  set_num_threads(threads0);
}

// The selections the method makes during a sparse prefill of the tiny target equal the plain
// implementation's on the same layer's Q and K (those the forward pass produced in that run), and
// every pruned segment's attention equals a double reference over exactly its selected blocks
// plus its own rows.
TEST_F(CritiPrefill, SelectionsEqualPlainReferenceOnTheModelsQK) {
  const size_t n = 1000;
  const auto toks = prompt(n);
  const ModelConfig& mc = target_->config();
  const cp::Config c = small_config();
  const size_t qd = size_t(mc.q_dim()), kd = size_t(mc.kv_dim()), S = size_t(c.segment);
  const size_t B = size_t(c.block);
  const int G = mc.n_head / mc.n_head_kv, D = mc.head_dim;
  std::map<int, std::vector<float>> Q, K, V, OUT;  // (pruned layer) -> [n][width]
  std::map<std::pair<int, size_t>, std::vector<int32_t>> sel;
  cp::Observer obs;
  obs.on_layer = [&](int l, size_t row0, const AttendBatch& b, bool sparse) {
    for (auto* m : {&Q, &OUT}) (*m)[l].resize(n * qd, NAN);
    for (auto* m : {&K, &V}) (*m)[l].resize(n * kd, NAN);
    for (size_t t = 0; t < b.n; ++t) {
      std::copy_n(b.q + t * b.ldq, qd, &Q[l][(row0 + t) * qd]);
      std::copy_n(b.k_new + t * b.ld_new, kd, &K[l][(row0 + t) * kd]);
      std::copy_n(b.v_new + t * b.ld_new, kd, &V[l][(row0 + t) * kd]);
      if (sparse) std::copy_n(b.out + t * b.ldo, qd, &OUT[l][(row0 + t) * qd]);
    }
  };
  obs.on_selection = [&](int l, size_t s, const std::vector<int32_t>& blocks) {
    sel[{l, s}] = blocks;
  };
  KVCache cache = target_->make_cache();
  cp::sparse_prefill(*target_, toks, cache, c, 128, nullptr, &obs);  // two segments per batch

  RefLayerState st;
  size_t compared = 0;
  for (int l = 0; l < mc.n_layer; ++l) {
    if (!c.layer_pruned(l)) {
      EXPECT_EQ(Q.count(l), 0u) << "layer " << l << " is dense";
      continue;
    }
    const auto ref = reference_selection(Q[l].data(), qd, K[l].data(), kd, n, mc.n_head,
                                         mc.n_head_kv, D, c, l, st);
    for (size_t s = 0; s * S < n; ++s) {
      const bool pruned = c.segment_pruned(s * S, n);
      ASSERT_EQ(sel.count({l, s}), pruned ? 1u : 0u) << "layer " << l << " segment " << s;
      if (!pruned) continue;
      const std::vector<int32_t>& blocks = sel[{l, s}];
      for (int g = 0; g < mc.n_head_kv; ++g) {
        SCOPED_TRACE(::testing::Message() << "layer " << l << " segment " << s << " kv head " << g);
        const std::vector<int32_t> list = head_list(blocks, mc.n_head_kv, g);
        ASSERT_EQ(list, ref[size_t(g)][s]);
        ASSERT_EQ(list.size(), size_t(c.top_k()));
        ++compared;
        // The kv head's keys: the selected blocks, then the segment's own rows.
        std::vector<size_t> keys;
        for (int32_t b : list)
          for (size_t t = 0; t < B; ++t) keys.push_back(size_t(b) * B + t);
        for (size_t j = s * S; j < (s + 1) * S; ++j) keys.push_back(j);
        std::vector<float> k, v;
        std::vector<int32_t> kpos;
        double max_v = 0;
        for (size_t j : keys) {
          k.insert(k.end(), &K[l][j * kd + size_t(g) * D], &K[l][j * kd + size_t(g) * D] + D);
          v.insert(v.end(), &V[l][j * kd + size_t(g) * D], &V[l][j * kd + size_t(g) * D] + D);
          kpos.push_back(int32_t(j));
        }
        for (float x : v) max_v = std::max(max_v, double(std::fabs(x)));
        for (int h = g * G; h < (g + 1) * G; ++h) {
          std::vector<float> q, got;
          std::vector<int32_t> qpos;
          for (size_t i = s * S; i < (s + 1) * S; ++i) {
            q.insert(q.end(), &Q[l][i * qd + size_t(h) * D], &Q[l][i * qd + size_t(h) * D] + D);
            got.insert(got.end(), &OUT[l][i * qd + size_t(h) * D],
                       &OUT[l][i * qd + size_t(h) * D] + D);
            qpos.push_back(int32_t(i));
          }
          std::vector<double> want(got.size());
          attention_reference({1, 1, D, attention_scale(mc)}, q.data(), size_t(D), qpos.data(), S,
                              k.data(), v.data(), size_t(D), kpos.data(), keys.size(), want.data(),
                              size_t(D));
          // The kernel's own error bound is checked in tests/kernels; 1e-4 * max|v| is far above
          // it and far below what a wrong block (one of ~70 visible key sets) would move.
          EXPECT_TRUE(test::near_all(got, want, 1e-4 * max_v, 0)) << "head " << h;
        }
      }
    }
  }
  EXPECT_EQ(compared, 11u * 3 * size_t(mc.n_head_kv));
}

TEST_F(CritiPrefill, RejectsInconsistentParametersAndQuantizedCaches) {
  nlohmann::json p = small_params();
  p["segment"] = 60;  // not a multiple of block 8
  try {
    run(method_, p, 1000);
    ADD_FAILURE() << "no throw";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("'segment'"), std::string::npos) << e.what();
  }
  try {
    run(method_, small_params(), 1000, KVDType::Int4);
    ADD_FAILURE() << "no throw";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("int4"), std::string::npos) << e.what();
  }
  EXPECT_THROW(resolve_params(method_, {{"keep", 0.5}}), std::invalid_argument);
}

}  // namespace
}  // namespace accel

namespace accel {
namespace {

// Sliding-window models: only full-attention layers are pruned (tiny-gemma3's target slides on
// layers 0, 1 and 3, and layer 0 is skipped anyway, so layer 2 alone is pruned), the sliding
// layers' pairs are their windows' (min(p + 1, 32) per query), every layer dense reproduces the
// baseline bit for bit, and attention sinks (gpt-oss) are refused by name.
TEST(CritiPrefillSliding, PrunesOnlyFullLayersAndRefusesSinks) {
  test::TempDir dir;
  const auto g3 = make_synthetic_family("tiny-gemma3", dir.file("g3"), 5, DType::F32);
  const auto go = make_synthetic_family("tiny-gpt-oss", dir.file("go"), 5, DType::F32);
  const auto gemma = Model::load(g3[0]), oss = Model::load(go[0]);
  const CritiPrefillMethod method;
  const BaselineMethod base;
  auto run = [](const Method& m, const Model& target, nlohmann::json params) {
    Engine e;
    e.target = &target;
    e.prefill_chunk = 64;
    Request r;
    r.prompt = synthetic_prompt(target.config().n_vocab, 256, {257}, 600, 9);
    r.max_new_tokens = 6;
    r.keep_logits = 6;
    return m.run(e, r, resolve_params(m, params));
  };
  const nlohmann::json small = {{"segment", 64}, {"block", 8}, {"budget", 64}, {"threshold", 256}};
  const Outcome o = run(method, *gemma, small);
  EXPECT_EQ(o.stats["pruned_layers"], 1);
  double dense = 0, kept = 0;
  const std::vector<int> windows = {32, 32, 0, 32};
  cp::count_pairs(cp::config_from_params(resolve_params(method, small)), windows, 4, 600, &dense,
                  &kept);
  // Sliding: 32 * 33 / 2 + (600 - 32) * 32 pairs per head; full: 600 * 601 / 2.
  EXPECT_EQ(dense, 4 * (3 * (528.0 + 568 * 32) + 180300.0));
  EXPECT_EQ(o.stats["attention_pairs_dense"].get<double>(), dense);
  EXPECT_EQ(o.stats["attention_pairs_kept"].get<double>(), kept);
  EXPECT_LT(kept, dense);
  nlohmann::json all_dense = small;
  all_dense["layer_skip"] = 4;
  const Outcome d = run(method, *gemma, all_dense), b = run(base, *gemma, {});
  EXPECT_EQ(d.tokens, b.tokens);
  for (size_t i = 0; i < d.logits.size(); ++i)
    EXPECT_TRUE(test::bit_equal(d.logits[i], b.logits[i])) << "step " << i;
  try {
    run(method, *oss, small);
    ADD_FAILURE() << "gpt-oss (sinks) was not refused";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("attention sinks"), std::string::npos) << e.what();
  }
}

// A hybrid (tiny-nemotron-h: attention only in blocks 3 and 6 of 8): only the attention layers
// are pruned and count pairs (each 600 * 601 / 2 per head, 4 heads); the Mamba-2 and FFN-only
// blocks run as in the baseline. Every layer dense, and every past block selected (the whole
// sparse path), reproduce the baseline bit for bit.
TEST(CritiPrefillHybrid, PrunesOnlyAttentionLayersOnTinyNemotronH) {
  test::TempDir dir;
  const auto m =
      Model::load(make_synthetic_family("tiny-nemotron-h", dir.path().string(), 5, DType::F32)[0]);
  const CritiPrefillMethod method;
  const BaselineMethod base;
  auto run = [&](const Method& meth, nlohmann::json params) {
    Engine e;
    e.target = m.get();
    e.prefill_chunk = 64;
    Request r;
    r.prompt = synthetic_prompt(m->config().n_vocab, 256, {257}, 600, 9);
    r.max_new_tokens = 6;
    r.keep_logits = 6;
    return meth.run(e, r, resolve_params(meth, params));
  };
  const nlohmann::json small = {{"segment", 64}, {"block", 8}, {"budget", 64}, {"threshold", 256}};
  const Outcome o = run(method, small);
  EXPECT_EQ(o.stats["pruned_layers"], 2);
  EXPECT_EQ(o.stats["attention_pairs_dense"].get<double>(), 2 * 4 * 180300.0);
  EXPECT_LT(o.stats["attention_pairs_kept"].get<double>(), 2 * 4 * 180300.0);
  const Outcome b = run(base, {});
  nlohmann::json all_dense = small, all_blocks = small;
  all_dense["layer_skip"] = 8;
  all_blocks["budget"] = 1 << 20;
  for (const auto& p : {all_dense, all_blocks}) {
    const Outcome d = run(method, p);
    EXPECT_EQ(d.tokens, b.tokens) << p.dump();
    for (size_t i = 0; i < d.logits.size(); ++i)
      EXPECT_TRUE(test::bit_equal(d.logits[i], b.logits[i])) << p.dump() << " step " << i;
  }
}

}  // namespace
}  // namespace accel
