// KV Prediction's TTFT against the baseline's on the `small` family at 4K-16K prompt tokens, with
// the analytic TTFT FLOP ratio beside the measured TTFT ratio (the bound: measured within
// 1.3x of the FLOP ratio). Each iteration runs the baseline and kvpred on the same prompt, one
// after the other, so the ratio is taken within one iteration on a shared machine.
// Auxiliaries: the family's 4 x 256 draft (KVP-C map) and layer-pruned targets keeping 0.25 and
// 0.50 of the blocks (KVP-LP), made on first use under <source>/models-cache/small/kvpred/.
// Timing does not depend on the maps' values, so the predictors are fixed, not fitted: W = [I; 0]
// (identity padded or truncated to the widths), b = 0.
// Counters: ttft_base_s, ttft_kvpred_s, ratio_measured = ttft_kvpred / ttft_base, ratio_flops
// (kvpred_ttft_flops), measured_over_flops; the same with process CPU time (ratio_cpu,
// cpu_over_flops); aux_prefill_s, predict_s, base_step_s. Run with --benchmark_repetitions=N.
#include <benchmark/benchmark.h>

#include <time.h>

#include <filesystem>

#include "kernels/threading.h"
#include "methods/kvpred.h"
#include "methods/kvpred_aux.h"
#include "methods/kvpred_predictor.h"
#include "models/synthetic.h"
#include "suites/synthetic_prompt.h"
#include "tests/support/small_family.h"

namespace accel {
namespace {

struct AuxSetup {
  std::unique_ptr<Model> aux;
  std::string predictor;
};

const std::string& bench_dir() {
  static const std::string d = [] {
    test::small_family_target();  // makes the family when missing
    const std::string dir = std::string(ACCELBENCH_SOURCE_DIR) + "/models-cache/small/kvpred";
    std::filesystem::create_directories(dir);
    return dir;
  }();
  return d;
}

// kind 0: the draft (KVP-C); 1: 0.25l; 2: 0.50l.
const AuxSetup& aux_setup(int kind) {
  static std::map<int, AuxSetup> cache;
  auto it = cache.find(kind);
  if (it != cache.end()) return it->second;
  const Model& t = test::small_family_target();
  const std::string src = std::string(ACCELBENCH_SOURCE_DIR) + "/models-cache/small/";
  std::string aux_path;
  std::vector<int> map;
  if (kind == 0) {
    aux_path = src + "draft.gguf";
  } else {
    const char* frac = kind == 1 ? "0.25l" : "0.50l";
    aux_path = bench_dir() + "/aux-" + frac + ".gguf";
    if (!std::filesystem::exists(aux_path))
      kvpred::make_layer_pruned_aux(src + "target.gguf",
                                    kvpred::parse_layer_list(frac, t.config().n_layer), aux_path);
  }
  AuxSetup s;
  s.aux = Model::load(aux_path);
  const ModelConfig &tc = t.config(), &ac = s.aux->config();
  if (kind == 0)
    map = kvpred::canonical_layer_map(tc.n_layer, ac.n_layer);
  else
    map = kvpred::pruned_layer_map(tc.n_layer,
                                   kvpred::pruned_kept_layers(tc.n_layer, kind == 1 ? 0.25 : 0.5));
  kvpred::Predictor p;
  p.n_base = tc.n_layer;
  p.n_aux = ac.n_layer;
  p.base_kv_dim = tc.kv_dim();
  p.aux_kv_dim = ac.kv_dim();
  p.layer_map = map;
  kvpred::LinearMap m{ac.kv_dim(), tc.kv_dim(),
                      std::vector<float>(size_t(ac.kv_dim()) * size_t(tc.kv_dim()), 0.f),
                      std::vector<float>(size_t(tc.kv_dim()), 0.f)};
  for (int r = 0; r < std::min(ac.kv_dim(), tc.kv_dim()); ++r)
    m.w[size_t(r) * size_t(ac.kv_dim()) + size_t(r)] = 1.f;
  p.k.assign(size_t(tc.n_layer), m);
  p.v.assign(size_t(tc.n_layer), m);
  s.predictor = bench_dir() + "/pred-" + std::to_string(kind) + ".gguf";
  kvpred::write_predictor(p, s.predictor);
  return cache.emplace(kind, std::move(s)).first->second;
}

// Process CPU seconds (all threads): on a shared machine, wall time depends on what else runs,
// CPU time much less so; both ratios are reported.
double cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
}

double phase(const Outcome& o, const std::string& name) {
  for (const auto& [n, s] : o.phases)
    if (n == name) return s;
  return 0;
}

void BM_TTFT(benchmark::State& st) {
  set_num_threads(int(st.range(2)));
  const Model& t = test::small_family_target();
  const AuxSetup& a = aux_setup(int(st.range(1)));
  const size_t n = size_t(st.range(0));
  const Method& base = find_method("baseline");
  const KVPredMethod kvp;
  Engine e;
  e.target = &t;
  e.models["aux"] = a.aux.get();
  e.files["predictor"] = a.predictor;
  e.prefill_chunk = 512;
  Request r;
  r.prompt = synthetic_prompt(t.config().n_vocab, 256, {257}, n, 1);
  r.max_new_tokens = 1;
  double tb = 0, tk = 0, ta = 0, tp = 0, ts = 0, cb = 0, ck = 0;
  for (auto _ : st) {
    const double c0 = cpu_seconds();
    const Outcome ob = base.run(e, r, resolve_params(base, {}));
    const double c1 = cpu_seconds();
    const Outcome ok = kvp.run(e, r, resolve_params(kvp, {}));
    cb += c1 - c0;
    ck += cpu_seconds() - c1;
    tb += ob.ttft_s;
    tk += ok.ttft_s;
    ta += phase(ok, "aux_prefill");
    tp += phase(ok, "predict");
    ts += phase(ok, "base_step");
    st.SetIterationTime(ob.ttft_s + ok.ttft_s);
  }
  const double it = double(st.iterations());
  const double flops = kvpred_ttft_flops(t.config(), a.aux->config(), n).ratio();
  st.counters["ttft_base_s"] = tb / it;
  st.counters["ttft_kvpred_s"] = tk / it;
  st.counters["aux_prefill_s"] = ta / it;
  st.counters["predict_s"] = tp / it;
  st.counters["base_step_s"] = ts / it;
  st.counters["ratio_measured"] = tk / tb;
  st.counters["ratio_flops"] = flops;
  st.counters["measured_over_flops"] = (tk / tb) / flops;
  // CPU-time ratio over the whole runs (one decode-free token each), not only TTFT.
  st.counters["ratio_cpu"] = ck / cb;
  st.counters["cpu_over_flops"] = (ck / cb) / flops;
  st.SetLabel(st.range(1) == 0   ? "aux=draft (KVP-C)"
              : st.range(1) == 1 ? "aux=target 0.25l"
                                 : "aux=target 0.50l");
}

// Args: prompt tokens, aux kind (0 draft, 1 0.25l, 2 0.50l), threads.
BENCHMARK(BM_TTFT)
    ->ArgsProduct({{4096, 8192, 16384, 32768}, {0, 1, 2}, {2}})
    ->Iterations(1)
    ->UseManualTime()
    ->Unit(benchmark::kSecond);

}  // namespace
}  // namespace accel

BENCHMARK_MAIN();
