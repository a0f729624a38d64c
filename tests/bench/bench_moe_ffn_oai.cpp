// Google Benchmark of GPT-OSS's MoE FFN (models/moe_ffn_oai.h) at gpt-oss-20b's expert shape
// scaled down in count (n_embd 2880, n_ff 2880, 8 experts, 4 used; 20b has 32): decode (T = 1),
// verify (T = 16) and prefill (T = 256), experts in mxfp4 (as shipped) and q8_0, 1 or 2 threads.
// Reports tokens/s and the GB/s of expert bytes a token touches. Measures only; correctness lives
// in tests/models/moe_ffn_oai_test.cpp.
#include <benchmark/benchmark.h>

#include <chrono>
#include <map>
#include <string>
#include <vector>

#include "kernels/quant.h"
#include "kernels/threading.h"
#include "models/moe_ffn_oai.h"
#include "tests/support/moe_ffn_oai_reference.h"
#include "tests/support/test_support.h"

namespace {

using accel::DType;

constexpr DType kTypes[] = {DType::MXFP4, DType::Q8_0};
constexpr int kEmbd = 2880, kFF = 2880, kExperts = 8, kUsed = 4;

const accel::MoeFfnOai& unit(int ti) {
  static std::map<int, accel::MoeFfnOai> cache;
  auto it = cache.find(ti);
  if (it != cache.end()) return it->second;
  const accel::test::MoeOaiLayer l = accel::test::random_moe_oai_layer(
      kTypes[ti], kEmbd, kFF, kExperts, kUsed, 1, {0.02f, 0.02f, 0.02f, 0.1f});
  return cache[ti] = accel::MoeFfnOai::pack(l.src);  // packing copies what it needs
}

// Args: type index, T, threads.
void BM_MoeFfnOai(benchmark::State& state) {
  const int ti = int(state.range(0)), threads = int(state.range(2));
  const size_t T = size_t(state.range(1));
  accel::set_num_threads(threads);
  const accel::MoeFfnOai& m = unit(ti);
  const std::vector<float> x = accel::test::random_normal(T * kEmbd, 99);
  std::vector<float> y(T * kEmbd);
  const auto t0 = std::chrono::steady_clock::now();
  for (auto _ : state) {
    m.forward(x.data(), T, kEmbd, y.data(), kEmbd);
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const double per_call = secs / double(state.iterations());
  state.counters["tokens/s"] = double(T) / per_call;
  // one token reads k of the n_expert experts' bytes (plus the small router)
  state.counters["expert_GB/s_T1"] =
      T == 1 ? double(m.bytes()) * kUsed / kExperts / per_call * 1e-9 : 0.0;
  state.SetLabel(std::string(accel::dtype_name(kTypes[ti])) + " T=" + std::to_string(T) +
                 " t=" + std::to_string(threads));
  accel::set_num_threads(accel::default_num_threads());
}

BENCHMARK(BM_MoeFfnOai)
    ->ArgNames({"type", "T", "threads"})
    ->ArgsProduct({{0, 1}, {1, 16, 256}, {1, 2}})
    ->UseRealTime()
    ->MinTime(0.3)
    ->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
