// Google Benchmark of the recurrent-layer kernels against causal attention of the same width
// (d_inner = n_heads * head_dim = 1536), all in tokens/s: the layer core without its projections
// (Mamba-2: conv over xBC + scan; Gated DeltaNet: conv over qkv + L2 norm + gates + recurrence;
// attention: attention_causal over the prompt). Prefill at 1K-8K tokens and decode per step after
// a 4K prefill; the recurrent state's checkpoint and rollback. Measures only; correctness and the
// invariance contracts live in tests/kernels.
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "kernels/attention.h"
#include "kernels/causal_conv1d.h"
#include "kernels/gated_delta_rule.h"
#include "kernels/ssm_scan.h"
#include "kernels/threading.h"
#include "models/recurrent_state.h"
#include "tests/support/test_support.h"

namespace {

using accel::test::random_normal;

// Mamba-2 at small-nemotron-h's width: 24 heads of 64 (d_inner 1536), d_state 128, 8 groups,
// d_conv 4. The conv runs over x, B and C: 1536 + 2 * 8 * 128 = 3584 channels.
struct Mamba {
  accel::SsmScanShape s{24, 64, 128, 8};
  int channels = 3584;
  size_t n;
  std::vector<float> xbc_in, xbc, conv_w, conv_b, window, dt, dt_bias, A, D, state, y;
  explicit Mamba(size_t n_tokens) : n(n_tokens) {
    xbc_in = random_normal(n * channels, 1);
    xbc.resize(n * channels);
    conv_w = random_normal(size_t(channels) * 4, 2, 0.5f);
    conv_b = random_normal(channels, 3);
    window.assign(3 * size_t(channels), 0.f);
    dt = random_normal(n * s.n_heads, 4);
    dt_bias = random_normal(s.n_heads, 5);
    A = random_normal(s.n_heads, 6);
    for (float& a : A) a = -std::exp(a);
    D = random_normal(s.n_heads, 7);
    state.assign(accel::ssm_state_elements(s), 0.f);
    y.resize(n * 1536);
  }
  // Tokens [t0, t0 + m).
  void run(size_t t0, size_t m) {
    const size_t C = size_t(channels);
    accel::causal_conv1d({channels, 4}, xbc_in.data() + t0 * C, C, m, conv_w.data(), conv_b.data(),
                         true, window.data(), xbc.data() + t0 * C, C);
    accel::SsmScanInputs in;
    in.x = xbc.data() + t0 * C, in.ldx = C;
    in.B = in.x + 1536, in.ldb = C;
    in.C = in.x + 1536 + 1024, in.ldc = C;
    in.dt = dt.data() + t0 * s.n_heads, in.lddt = size_t(s.n_heads);
    in.dt_bias = dt_bias.data(), in.A = A.data(), in.D = D.data();
    accel::ssm_scan(s, in, m, state.data(), y.data() + t0 * 1536, 1536);
  }
};

// Gated DeltaNet at the same width: 12 value heads of 128 (d_inner 1536) reading 6 key heads of
// 128 (Qwen3.5's 2:1 ratio), d_conv 4 over q, k, v: 2 * 768 + 1536 = 3072 channels.
struct Delta {
  accel::GatedDeltaShape s{6, 12, 128, 128, accel::DeltaHeadMap::Tiled};
  int channels = 3072;
  size_t n;
  std::vector<float> qkv_in, qkv, conv_w, window, alpha, b, dt_bias, A, g, beta, state, o;
  explicit Delta(size_t n_tokens) : n(n_tokens) {
    qkv_in = random_normal(n * channels, 11);
    qkv.resize(n * channels);
    conv_w = random_normal(size_t(channels) * 4, 12, 0.5f);
    window.assign(3 * size_t(channels), 0.f);
    alpha = random_normal(n * 12, 13);
    b = random_normal(n * 12, 14);
    dt_bias = random_normal(12, 15);
    A = random_normal(12, 16);
    for (float& a : A) a = -std::exp(a);
    g.resize(n * 12), beta.resize(n * 12);
    state.assign(accel::gated_delta_state_elements(s), 0.f);
    o.resize(n * 1536);
  }
  void run(size_t t0, size_t m) {
    const size_t C = size_t(channels);
    float* row = qkv.data() + t0 * C;
    accel::causal_conv1d({channels, 4}, qkv_in.data() + t0 * C, C, m, conv_w.data(), nullptr, true,
                         window.data(), row, C);
    accel::l2_normalize_heads(row, m, C, 12, 128, 1e-6f);  // q and k heads
    accel::delta_net_gates(alpha.data() + t0 * 12, b.data() + t0 * 12, 12, m, 12, dt_bias.data(),
                           A.data(), g.data() + t0 * 12, beta.data() + t0 * 12);
    accel::GatedDeltaInputs in;
    in.q = row, in.ldq = C;
    in.k = row + 768, in.ldk = C;
    in.v = row + 1536, in.ldv = C;
    in.g = g.data() + t0 * 12, in.beta = beta.data() + t0 * 12, in.ldgate = 12;
    in.q_scale = float(1.0 / std::sqrt(128.0));
    accel::gated_delta_rule(s, in, m, state.data(), o.data() + t0 * 1536, 1536);
  }
};

// Causal attention at the same width: 24 query heads of 64 (or 12 of 128), 8 (4) kv heads.
struct Attention {
  accel::AttentionShape s;
  size_t n;
  std::vector<float> q, k, v, out;
  std::vector<int32_t> pos;
  Attention(size_t n_tokens, int head_dim) : n(n_tokens) {
    const int nh = 1536 / head_dim, nkv = nh / 3;
    s = {nh, nkv, head_dim, float(1.0 / std::sqrt(double(head_dim)))};
    q = random_normal(n * 1536, 21);
    k = random_normal(n * nkv * head_dim, 22);
    v = random_normal(n * nkv * head_dim, 23);
    out.resize(n * 1536);
    for (size_t i = 0; i < n; ++i) pos.push_back(int32_t(i));
  }
  // Queries [t0, t0 + m) over keys [0, t0 + m).
  void run(size_t t0, size_t m) {
    const size_t wk = size_t(s.n_kv_heads) * s.head_dim;
    accel::attention_causal(s, q.data() + t0 * 1536, 1536, pos.data() + t0, m, k.data(), v.data(),
                            wk, pos.data(), t0 + m, out.data() + t0 * 1536, 1536);
  }
};

template <class Layer>
void prefill(benchmark::State& state, Layer& layer, size_t n) {
  for (auto _ : state) {
    layer.run(0, n);
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(int64_t(state.iterations()) * int64_t(n));
}

// Decode: the step for token n - 1 after a prefill of n - 1 (the recurrent state is advanced by
// one token per iteration; its cost does not depend on the state's values).
template <class Layer>
void decode(benchmark::State& state, Layer& layer, size_t n) {
  layer.run(0, n - 1);
  for (auto _ : state) {
    layer.run(n - 1, 1);
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(int64_t(state.iterations()));
}

// Args: n tokens, threads.
void BM_MambaPrefill(benchmark::State& state) {
  accel::set_num_threads(int(state.range(1)));
  Mamba m(size_t(state.range(0)));
  prefill(state, m, m.n);
}
void BM_DeltaNetPrefill(benchmark::State& state) {
  accel::set_num_threads(int(state.range(1)));
  Delta d(size_t(state.range(0)));
  prefill(state, d, d.n);
}
// Args: n tokens, head_dim, threads.
void BM_AttentionPrefill(benchmark::State& state) {
  accel::set_num_threads(int(state.range(2)));
  Attention a(size_t(state.range(0)), int(state.range(1)));
  prefill(state, a, a.n);
}
void BM_MambaDecode(benchmark::State& state) {
  accel::set_num_threads(int(state.range(1)));
  Mamba m(size_t(state.range(0)));
  decode(state, m, m.n);
}
void BM_DeltaNetDecode(benchmark::State& state) {
  accel::set_num_threads(int(state.range(1)));
  Delta d(size_t(state.range(0)));
  decode(state, d, d.n);
}
void BM_AttentionDecode(benchmark::State& state) {
  accel::set_num_threads(int(state.range(2)));
  Attention a(size_t(state.range(0)), int(state.range(1)));
  decode(state, a, a.n);
}

// PLD's per-step cost of the rollback design (models/recurrent_state.h): one checkpoint per
// verify step, one rollback on a partial accept, for one Mamba-2 layer of the width above.
void BM_StateCheckpoint(benchmark::State& state) {
  accel::RecurrentState st({3584, 4, accel::ssm_state_elements(Mamba(1).s)});
  for (auto _ : state) {
    st.checkpoint();
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(st.bytes()));
}
void BM_StateRollback(benchmark::State& state) {
  accel::RecurrentState st({3584, 4, accel::ssm_state_elements(Mamba(1).s)});
  st.checkpoint();
  for (auto _ : state) {
    st.rollback();
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(st.bytes()));
}
BENCHMARK(BM_StateCheckpoint)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_StateRollback)->Unit(benchmark::kMicrosecond);

// Recurrent cores: prefill at 1K, 4K, 8K on 2 threads and 4K on 1; decode after 4K on 2 and 1.
void recurrent_prefill_args(benchmark::internal::Benchmark* b) {
  b->ArgNames({"n", "threads"})->Args({1024, 2})->Args({4096, 2})->Args({8192, 2})->Args({4096, 1});
  b->UseRealTime()->Unit(benchmark::kMillisecond);
}
void recurrent_decode_args(benchmark::internal::Benchmark* b) {
  b->ArgNames({"n", "threads"})->Args({4096, 2})->Args({4096, 1});
  b->UseRealTime()->Unit(benchmark::kMicrosecond);
}
BENCHMARK(BM_MambaPrefill)->Apply(recurrent_prefill_args);
BENCHMARK(BM_DeltaNetPrefill)->Apply(recurrent_prefill_args);
BENCHMARK(BM_AttentionPrefill)
    ->ArgNames({"n", "D", "threads"})
    ->Args({1024, 64, 2})
    ->Args({4096, 64, 2})
    ->Args({4096, 128, 2})
    ->Args({8192, 64, 2})
    ->Args({4096, 64, 1})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_MambaDecode)->Apply(recurrent_decode_args);
BENCHMARK(BM_DeltaNetDecode)->Apply(recurrent_decode_args);
BENCHMARK(BM_AttentionDecode)
    ->ArgNames({"n", "D", "threads"})
    ->Args({4096, 64, 2})
    ->Args({4096, 64, 1})
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
