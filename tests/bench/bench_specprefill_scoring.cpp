// Google Benchmark of specprefill::token_importance for a small draft (4 layers x 4 heads, 2 kv
// heads, head_dim 64, A = 8 lookahead queries) at N = 1K..16K prompt keys, reference aggregation
// (pool 13 first) and the pflash order, 1 and 2 threads. Reports score GFLOP/s (2 L H A N d) and
// keys/s. Then the two kernels it spends its time in (kernels/score_rows.h), one thread: dot_scores
// (one task's 32 query rows against N keys) and softmax_scaled (one row of N). Measures only;
// correctness lives in tests/methods/specprefill_scoring_test.cpp and tests/kernels/.
#include <benchmark/benchmark.h>

#include <vector>

#include "kernels/score_rows.h"
#include "kernels/threading.h"
#include "methods/specprefill_scoring.h"
#include "tests/support/test_support.h"

namespace {

namespace sp = accel::specprefill;

constexpr int kLayers = 4, kHeads = 4, kKvHeads = 2, kDim = 64, kLookahead = 8;

// Args: N, threads, order (0 = pool->max->mean, 1 = max->mean->pool).
void BM_TokenImportance(benchmark::State& state) {
  const size_t N = size_t(state.range(0));
  const int threads = int(state.range(1));
  const sp::ScoringOptions opt{
      13, accel::PoolEdge::ZeroPad,
      state.range(2) ? sp::AggregationOrder::MaxMeanPool : sp::AggregationOrder::PoolMaxMean};
  accel::set_num_threads(threads);
  // Keys laid out as KV-cache rows (kv_dim = 128 floats), queries as captured rows.
  std::vector<std::vector<float>> q, k;
  std::vector<sp::LayerQK> layers;
  for (int l = 0; l < kLayers; ++l) {
    q.push_back(accel::test::random_normal(size_t(kLookahead) * kHeads * kDim, 10 + l));
    k.push_back(accel::test::random_normal(N * kKvHeads * kDim, 20 + l));
    layers.push_back({q.back().data(), 0, k.back().data(), 0});
  }
  const sp::DraftShape shape{kHeads, kKvHeads, kDim, kLookahead, N};
  std::vector<float> imp(N);
  for (auto _ : state) {
    sp::token_importance(layers, shape, opt, imp.data());
    benchmark::DoNotOptimize(imp.data());
    benchmark::ClobberMemory();
  }
  const double flops = 2.0 * kLayers * kHeads * kLookahead * double(N) * kDim;
  state.counters["GFLOP/s"] =
      benchmark::Counter(flops * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  state.SetItemsProcessed(int64_t(state.iterations()) * int64_t(N));  // prompt keys scored
}

BENCHMARK(BM_TokenImportance)
    ->ArgNames({"N", "threads", "pool_last"})
    ->ArgsProduct({{1024, 4096, 8192, 16384}, {1, 2}, {0, 1}})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// Arg: N keys. 32 query rows of head_dim 64 against N keys laid out as KV-cache rows (stride 128).
void BM_DotScores(benchmark::State& state) {
  const size_t N = size_t(state.range(0));
  constexpr int kRows = 32;
  accel::set_num_threads(1);
  const std::vector<float> q = accel::test::random_normal(size_t(kRows) * kDim, 1);
  const std::vector<float> k = accel::test::random_normal(N * kKvHeads * kDim, 2);
  std::vector<const float*> qrow;
  for (int r = 0; r < kRows; ++r) qrow.push_back(q.data() + size_t(r) * kDim);
  const size_t ld = accel::dot_scores_row_stride(N);
  std::vector<float> s(size_t(kRows) * ld);
  for (auto _ : state) {
    accel::dot_scores(qrow.data(), kRows, k.data(), size_t(kKvHeads) * kDim, N, kDim, s.data(), ld);
    benchmark::DoNotOptimize(s.data());
    benchmark::ClobberMemory();
  }
  state.counters["GFLOP/s"] = benchmark::Counter(2.0 * kRows * double(N) * kDim * 1e-9,
                                                 benchmark::Counter::kIsIterationInvariantRate);
}

BENCHMARK(BM_DotScores)->ArgName("N")->Arg(1024)->Arg(8192)->Arg(16384)->UseRealTime();

// Arg: N. One score row of N entries, re-applied to its own output (the same work every call: the
// kernel has no data-dependent branch); items = entries.
void BM_SoftmaxScaled(benchmark::State& state) {
  const size_t N = size_t(state.range(0));
  std::vector<float> row = accel::test::random_normal(N, 3, 4.f);
  for (auto _ : state) {
    accel::softmax_scaled(row.data(), N, 0.125f);
    benchmark::DoNotOptimize(row.data());
  }
  state.SetItemsProcessed(int64_t(state.iterations()) * int64_t(N));
}

BENCHMARK(BM_SoftmaxScaled)->ArgName("N")->Arg(1024)->Arg(8192)->Arg(16384);

}  // namespace

BENCHMARK_MAIN();
