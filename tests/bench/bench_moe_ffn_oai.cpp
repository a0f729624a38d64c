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
#include "tests/support/test_support.h"

namespace {

using accel::DType;

constexpr DType kTypes[] = {DType::MXFP4, DType::Q8_0};
constexpr int kEmbd = 2880, kFF = 2880, kExperts = 8, kUsed = 4;

struct Owned {
  std::vector<uint8_t> router, gate, up, down;
  std::vector<float> rb, gb, ub, db;
  accel::MoeFfnOai unit;
};

std::vector<uint8_t> raw(DType t, size_t rows, size_t cols, uint64_t seed) {
  const std::vector<float> w = accel::test::random_normal(rows * cols, seed, 0.02f);
  std::vector<uint8_t> r(rows * accel::dtype_row_bytes(t, cols));
  accel::quantize_row(t, w.data(), r.data(), rows * cols);
  return r;
}

const accel::MoeFfnOai& unit(int ti) {
  static std::map<int, Owned> cache;
  auto it = cache.find(ti);
  if (it != cache.end()) return it->second.unit;
  Owned& o = cache[ti];
  const DType t = kTypes[ti];
  o.router = raw(DType::F32, kExperts, kEmbd, 1);
  o.gate = raw(t, size_t(kExperts) * kFF, kEmbd, 2);
  o.up = raw(t, size_t(kExperts) * kFF, kEmbd, 3);
  o.down = raw(t, size_t(kExperts) * kEmbd, kFF, 4);
  o.rb = accel::test::random_normal(kExperts, 5);
  o.gb = accel::test::random_normal(size_t(kExperts) * kFF, 6, 0.1f);
  o.ub = accel::test::random_normal(size_t(kExperts) * kFF, 7, 0.1f);
  o.db = accel::test::random_normal(size_t(kExperts) * kEmbd, 8, 0.1f);
  accel::MoeOaiSource s;
  s.n_embd = kEmbd;
  s.n_ff = kFF;
  s.n_expert = kExperts;
  s.n_expert_used = kUsed;
  s.router = o.router.data();
  s.router_bias = o.rb.data();
  s.expert_type = t;
  s.gate = o.gate.data();
  s.up = o.up.data();
  s.down = o.down.data();
  s.gate_bias = o.gb.data();
  s.up_bias = o.ub.data();
  s.down_bias = o.db.data();
  o.unit = accel::MoeFfnOai::pack(s);
  return o.unit;
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
