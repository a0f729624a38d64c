// Google Benchmark of CritiPrefill on the `small` family's shape and target (12 x 768, 12 heads,
// 4 KV heads, head_dim 64), spec defaults (segment 512, block 32, budget 2048, threshold 4096,
// layer 0 dense, fusion on):
//  - BM_SegmentAttention: one late query segment (512 rows at position ctx - 1024) attending to
//    its 64 selected 32-key blocks + its own rows (block-sparse kernel) or to every key before it
//    (the dense kernel), at ctx 16K and 32K; GFLOP/s over the pairs each visits.
//  - BM_Prefill: one full prefill of a random prompt at 16K and 32K tokens, baseline (chunked
//    prefill, chunk 512) and CritiPrefill timed in the same iteration. Counters: both times, the
//    baseline's attention time (ForwardProfile), the fraction of attention pairs (FLOPs) skipped,
//    the speedup those skipped FLOPs allow, t_base / (t_base - skipped * t_attn_base), and the
//    measured speedup t_base / t_criti. Run with --benchmark_filter; 32K takes minutes.
// Measures only; correctness lives in tests/kernels/block_sparse_attention_test.cpp and
// tests/methods/critiprefill_test.cpp.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <numeric>
#include <random>
#include <vector>

#include "kernels/attention.h"
#include "kernels/block_sparse_attention.h"
#include "kernels/threading.h"
#include "methods/critiprefill.h"
#include "methods/ttft_flops.h"
#include "models/generation.h"
#include "tests/support/small_family.h"
#include "tests/support/test_support.h"

namespace accel {
namespace {

constexpr int kHeads = 12, kKvHeads = 4, kDim = 64, kSeg = 512, kBlock = 32, kTopK = 64;

// Args: ctx, sparse (1: 64 blocks + own rows; 0: dense over every key before the segment's end).
void BM_SegmentAttention(benchmark::State& st) {
  const size_t ctx = size_t(st.range(0)), start = ctx - 2 * kSeg;
  const bool sparse = st.range(1) != 0;
  set_num_threads(2);
  const size_t ldq = size_t(kHeads) * kDim, ldkv = size_t(kKvHeads) * kDim;
  const size_t n_kv = start + kSeg;
  const std::vector<float> q = test::random_normal(size_t(kSeg) * ldq, 1);
  const std::vector<float> k = test::random_normal(n_kv * ldkv, 2);
  const std::vector<float> v = test::random_normal(n_kv * ldkv, 3);
  const std::vector<int32_t> pos = iota_positions(0, n_kv);
  std::vector<float> out(size_t(kSeg) * ldq);
  const AttentionShape s{kHeads, kKvHeads, kDim, 0.125f};
  std::vector<int32_t> blocks;
  std::mt19937_64 rng(4);
  for (int g = 0; g < kKvHeads; ++g) {
    std::vector<int32_t> all(start / kBlock);
    std::iota(all.begin(), all.end(), 0);
    std::shuffle(all.begin(), all.end(), rng);
    all.resize(kTopK);
    std::sort(all.begin(), all.end());
    blocks.insert(blocks.end(), all.begin(), all.end());
  }
  const std::vector<SparseSegment> segs{{0, kSeg, start, start + kSeg, blocks.data(), kTopK}};
  const KVRows kv{k.data(), v.data(), ldkv, KVFormat::F32};
  for (auto _ : st) {
    if (sparse)
      attention_block_sparse(s, kBlock, q.data(), ldq, pos.data() + start, kSeg, kv, pos.data(),
                             n_kv, segs, out.data(), ldq);
    else
      attention_causal(s, q.data(), ldq, pos.data() + start, kSeg, kv, pos.data(), n_kv, out.data(),
                       ldq);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  // Visible pairs per query head: listed or earlier keys plus the causal own rows.
  const double own = double(kSeg) * (kSeg + 1) / 2;
  const double pairs =
      (sparse ? double(kSeg) * kTopK * kBlock + own : double(kSeg) * start + own) * kHeads;
  st.counters["GFLOP/s"] =
      benchmark::Counter(pairs * 4 * kDim * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  st.counters["pairs_M"] = pairs * 1e-6;
}

BENCHMARK(BM_SegmentAttention)
    ->ArgNames({"ctx", "sparse"})
    ->ArgsProduct({{16384, 32768}, {0, 1}})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Arg: N prompt tokens. Each iteration: baseline prefill, then CritiPrefill's, same prompt; the
// benchmark's own time is CritiPrefill's (manual time).
void BM_Prefill(benchmark::State& st) {
  const size_t n = size_t(st.range(0));
  set_num_threads(2);
  const Model& m = test::small_family_target();
  const std::vector<int32_t> toks = test::seeded_tokens(n, m.config().n_vocab, 1234);
  const critiprefill::Config c;  // spec defaults
  double dense_pairs = 0, kept_pairs = 0;
  critiprefill::count_pairs(c, m.config().n_layer, m.config().n_head, n, &dense_pairs, &kept_pairs);
  const double skipped = 1 - kept_pairs / dense_pairs;
  double t_base = 0, t_attn = 0, t_criti = 0, t_criti_attn = 0, t_sel = 0;
  for (auto _ : st) {
    ForwardProfile bprof;
    ForwardHooks hooks;
    hooks.profile = &bprof;
    {
      KVCache cache = m.make_cache();
      cache.reserve(n + 1);
      const auto t0 = std::chrono::steady_clock::now();
      benchmark::DoNotOptimize(prefill(m, toks, iota_positions(0, n), cache, 512, nullptr, &hooks));
      t_base += seconds_since(t0);
      t_attn += bprof.attention_s;
    }
    ForwardProfile cprof;
    critiprefill::Observer obs;
    obs.profile = &cprof;
    critiprefill::PrefillStats ps;
    KVCache cache = m.make_cache();
    cache.reserve(n + 1);
    const auto t0 = std::chrono::steady_clock::now();
    benchmark::DoNotOptimize(critiprefill::sparse_prefill(m, toks, cache, c, 512, &ps, &obs));
    const double t = seconds_since(t0);
    st.SetIterationTime(t);
    t_criti += t;
    t_criti_attn += cprof.attention_s;
    t_sel += ps.select_s;
  }
  const double it = double(st.iterations());
  t_base /= it;
  t_attn /= it;
  t_criti /= it;
  t_criti_attn /= it;
  t_sel /= it;
  st.counters["base_s"] = t_base;
  st.counters["base_attn_s"] = t_attn;
  st.counters["criti_s"] = t_criti;
  st.counters["criti_attn_s"] = t_criti_attn;  // includes selection (inside the attention hook)
  st.counters["select_s"] = t_sel;
  st.counters["attn_flops_skipped"] = skipped;
  // Two predictions: by time (the baseline's measured attention time shrunk by the skipped share)
  // and by analytic FLOPs (the whole prefill's FLOPs with the skipped attention pairs taken out;
  // lower, since attention runs at fewer FLOP/s than the matrix products here).
  st.counters["speedup_allowed"] = t_base / (t_base - skipped * t_attn);
  const double f_all = forward_flops(m.config(), double(n), 0, 1);
  st.counters["speedup_allowed_flops"] =
      f_all / (f_all - (dense_pairs - kept_pairs) * attention_pair_flops(m.config()));
  st.counters["speedup"] = t_base / t_criti;
}

BENCHMARK(BM_Prefill)
    ->ArgName("N")
    ->Arg(16384)
    ->Arg(32768)
    ->Iterations(1)
    ->Unit(benchmark::kSecond)
    ->UseManualTime();

}  // namespace
}  // namespace accel

BENCHMARK_MAIN();
