// Google Benchmark of the hybrid forward passes on the tiny-qwen35 and tiny-nemotron-h targets
// (made in a scratch directory, f32; BM_Hybrid* and BM_NemotronH*; their MoE variants' prefill in
// BM_HybridMoePrefill and BM_NemotronHMoePrefill): prefill tokens/s, a decode step
// after a prompt, and PLD's verify step with the cache's rollback of the recurrent layers
// (checkpoint + replay of the kept tokens) against the same verify without rollback. Measures only;
// correctness lives in tests/models.
#include <benchmark/benchmark.h>

#include <map>
#include <memory>
#include <string>

#include "kernels/threading.h"
#include "models/generation.h"
#include "models/model.h"
#include "models/synthetic.h"
#include "tests/support/test_support.h"

namespace accel {
namespace {

const Model& hybrid_target(const std::string& family) {
  static test::TempDir dir;
  static std::map<std::string, std::unique_ptr<Model>> models;
  std::unique_ptr<Model>& m = models[family];
  if (!m) m = Model::load(make_synthetic_family(family, dir.file(family), 0, DType::F32).at(0));
  return *m;
}

void hybrid_prefill(benchmark::State& st, const std::string& family) {
  set_num_threads(int(st.range(1)));
  const Model& m = hybrid_target(family);
  const size_t n = size_t(st.range(0));
  const auto toks = test::seeded_tokens(n, m.config().n_vocab, 1);
  for (auto _ : st) {
    KVCache cache = m.make_cache();
    benchmark::DoNotOptimize(prefill(m, toks, iota_positions(0, n), cache, 512));
  }
  st.counters["tok/s"] =
      benchmark::Counter(double(n) * double(st.iterations()), benchmark::Counter::kIsRate);
}

// One decode step after a 1024-token prompt (the step is trimmed away after timing it, which
// replays nothing: the trim drops the whole last batch).
void hybrid_decode(benchmark::State& st, const std::string& family) {
  set_num_threads(int(st.range(0)));
  const Model& m = hybrid_target(family);
  const size_t n = 1024;
  const auto toks = test::seeded_tokens(n + 1, m.config().n_vocab, 2);
  KVCache cache = m.make_cache();
  prefill(m, std::span(toks).first(n), iota_positions(0, n), cache, 512);
  const int32_t pos = int32_t(n), row = 0;
  for (auto _ : st) {
    benchmark::DoNotOptimize(m.forward({&toks[n], 1}, {&pos, 1}, cache, {&row, 1}));
    st.PauseTiming();
    cache.trim(1);
    st.ResumeTiming();
  }
  st.counters["tok/s"] = benchmark::Counter(double(st.iterations()), benchmark::Counter::kIsRate);
}

// A 9-token verify step after a 1024-token prompt, then trim(range(0)): 0 keeps every token (no
// rollback), 1..8 restore the checkpoint and replay 9 - range(0) tokens; 9 drops the batch.
void hybrid_verify_and_trim(benchmark::State& st, const std::string& family) {
  set_num_threads(1);
  const Model& m = hybrid_target(family);
  const size_t n = 1024, k = 9, drop = size_t(st.range(0));
  const auto toks = test::seeded_tokens(n + k, m.config().n_vocab, 3);
  KVCache cache = m.make_cache();
  prefill(m, std::span(toks).first(n), iota_positions(0, n), cache, 512);
  const auto pos = iota_positions(int32_t(n), k);
  std::vector<int32_t> rows(k);
  for (size_t i = 0; i < k; ++i) rows[i] = int32_t(i);
  for (auto _ : st) {
    benchmark::DoNotOptimize(m.forward(std::span(toks).subspan(n, k), pos, cache, rows));
    cache.trim(drop);
    st.PauseTiming();
    cache.trim(cache.size() - n);  // back to the prompt (within the last batch)
    st.ResumeTiming();
  }
}

void BM_HybridPrefill(benchmark::State& st) {
  hybrid_prefill(st, "tiny-qwen35");
}
void BM_HybridMoePrefill(benchmark::State& st) {
  hybrid_prefill(st, "tiny-qwen35-moe");
}
void BM_HybridDecode(benchmark::State& st) {
  hybrid_decode(st, "tiny-qwen35");
}
void BM_HybridVerifyAndTrim(benchmark::State& st) {
  hybrid_verify_and_trim(st, "tiny-qwen35");
}
void BM_NemotronHPrefill(benchmark::State& st) {
  hybrid_prefill(st, "tiny-nemotron-h");
}
void BM_NemotronHMoePrefill(benchmark::State& st) {
  hybrid_prefill(st, "tiny-nemotron-h-moe");
}
void BM_NemotronHDecode(benchmark::State& st) {
  hybrid_decode(st, "tiny-nemotron-h");
}
void BM_NemotronHVerifyAndTrim(benchmark::State& st) {
  hybrid_verify_and_trim(st, "tiny-nemotron-h");
}

BENCHMARK(BM_HybridPrefill)
    ->ArgsProduct({{512, 2048}, {1, 2}})
    ->ArgNames({"tokens", "threads"})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_HybridMoePrefill)
    ->ArgsProduct({{512, 2048}, {1, 2}})
    ->ArgNames({"tokens", "threads"})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_HybridDecode)->Arg(1)->Arg(2)->ArgName("threads")->UseRealTime();
BENCHMARK(BM_HybridVerifyAndTrim)->Arg(0)->Arg(4)->Arg(8)->ArgName("trim")->UseRealTime();
BENCHMARK(BM_NemotronHPrefill)
    ->ArgsProduct({{512, 2048}, {1, 2}})
    ->ArgNames({"tokens", "threads"})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_NemotronHMoePrefill)
    ->ArgsProduct({{512, 2048}, {1, 2}})
    ->ArgNames({"tokens", "threads"})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_NemotronHDecode)->Arg(1)->Arg(2)->ArgName("threads")->UseRealTime();
BENCHMARK(BM_NemotronHVerifyAndTrim)->Arg(0)->Arg(4)->Arg(8)->ArgName("trim")->UseRealTime();

}  // namespace
}  // namespace accel

BENCHMARK_MAIN();
