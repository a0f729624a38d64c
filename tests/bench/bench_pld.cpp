// Prompt Lookup Decoding costs: the drafter's per-step cost (one draft + one committed token
// appended) at 1K/8K/32K tokens of context for each preset, against one decode step of the
// `small` target at 8K context (the bound: under 1% of it); and PLD's decode tokens/s
// against the baseline's on a prompt that repeats, with acceptance and the ceiling that acceptance
// allows (baseline step time x tokens per verify step / verify step time).
// The family is made on first use under <source>/models-cache/small (seed 0, f32).
#include <benchmark/benchmark.h>

#include <chrono>
#include <filesystem>
#include <random>

#include "kernels/threading.h"
#include "methods/method.h"
#include "methods/pld_drafter.h"
#include "models/generation.h"
#include "models/model.h"
#include "models/synthetic.h"
#include "tests/support/small_family.h"
#include "tests/support/test_support.h"

namespace accel {
namespace {

const Model& small_target() {
  return test::small_family_target();
}

// Text-like ids: random tokens with copied earlier segments (the drafter's index then holds long
// chains of repeated n-grams, its costly case), over the byte-level vocabulary of the families.
std::vector<int32_t> text_like(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<int32_t> t;
  while (t.size() < n) {
    if (t.size() > 64 && rng() % 8 == 0) {
      const size_t from = rng() % t.size(), len = 8 + rng() % 120;
      for (size_t j = 0; j < len && t.size() < n; ++j) t.push_back(t[from + j % (t.size() - from)]);
    } else {
      t.push_back(int32_t(rng() % 256));
    }
  }
  return t;
}

double g_decode_step_8k_s = 0;  // set by BM_DecodeStep, read by the drafter benchmarks

void BM_DecodeStep(benchmark::State& st) {
  set_num_threads(int(st.range(1)));
  const Model& m = small_target();
  const size_t n = size_t(st.range(0));
  const auto toks = text_like(n, 1);
  KVCache cache = m.make_cache();
  cache.reserve(n + 1);
  const int32_t tok = argmax(prefill(m, toks, iota_positions(0, n), cache, 2048));
  const int32_t pos = int32_t(n), row = 0;
  const auto t0 = std::chrono::steady_clock::now();
  for (auto _ : st) {
    benchmark::DoNotOptimize(m.forward({&tok, 1}, {&pos, 1}, cache, {&row, 1}));
    cache.trim(1);
  }
  const double per_step =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() /
      double(st.iterations());
  if (n == 8192) g_decode_step_8k_s = per_step;
  st.counters["ms/step"] = per_step * 1e3;
}

// One decode step's drafter work: draft from the context, then append one committed token.
// The context is rebuilt (untimed) whenever it has grown by 1024 tokens, so it stays near n.
void BM_DrafterStep(benchmark::State& st) {
  const std::string preset = pld_preset_names()[size_t(st.range(1))];
  const size_t n = size_t(st.range(0));
  const auto toks = text_like(n + 1024, 2);
  std::unique_ptr<PldDrafter> d;
  size_t next = n, drafted = 0;
  std::vector<int32_t> draft;
  double busy_s = 0;  // own clock: the per-step time is compared with a decode step below
  for (auto _ : st) {
    if (!d || next == toks.size()) {
      st.PauseTiming();
      d = std::make_unique<PldDrafter>(pld_preset(preset));
      d->append(std::span(toks).first(n));
      next = n;
      st.ResumeTiming();
    }
    const auto t0 = std::chrono::steady_clock::now();
    d->draft(draft);
    drafted += !draft.empty();
    d->append(toks[next++]);
    busy_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  const double iters = double(std::max<benchmark::IterationCount>(st.iterations(), 1));
  st.counters["drafted_frac"] = double(drafted) / iters;
  st.counters["us/step"] = busy_s / iters * 1e6;
  // Share of one decode step of the small target at 8K (when BM_DecodeStep ran first).
  if (g_decode_step_8k_s > 0) st.counters["of_decode_8k"] = busy_s / iters / g_decode_step_8k_s;
  st.SetLabel(preset);
}

// Indexing a prompt once per request (counted in the method's drafter_s).
void BM_DrafterIndexPrompt(benchmark::State& st) {
  const std::string preset = pld_preset_names()[size_t(st.range(1))];
  const auto toks = text_like(size_t(st.range(0)), 3);
  for (auto _ : st) {
    PldDrafter d(pld_preset(preset));
    d.append(toks);
    benchmark::DoNotOptimize(d.tokens().data());
  }
  st.SetItemsProcessed(int64_t(st.iterations()) * st.range(0));
  st.SetLabel(preset);
}

// A prompt that repeats what the model then says: a seed prompt plus the target's own greedy
// continuation of it (random-weight targets fall into loops), so the decode continues the loop
// and n-gram drafts are accepted.
std::vector<int32_t> looping_prompt(const Model& m, size_t seed_len, int continue_tokens) {
  const Method& base = find_method("baseline");
  Engine e;
  e.target = &m;
  Request r;
  r.prompt = text_like(seed_len, 4);
  r.max_new_tokens = continue_tokens;
  const Outcome o = base.run(e, r, resolve_params(base, {}));
  r.prompt.insert(r.prompt.end(), o.tokens.begin(), o.tokens.end());
  return r.prompt;
}

// Decode tokens/s of `pld` (preset by index) or the baseline (index -1) with manual time = the
// decode phase; PLD runs report acceptance, tokens per verify step and the ceiling.
void BM_DecodeRepeatingPrompt(benchmark::State& st) {
  set_num_threads(int(st.range(1)));
  const Model& m = small_target();
  static const std::vector<int32_t> prompt = looping_prompt(m, 192, 320);
  const int preset_ix = int(st.range(0));
  Engine e;
  e.target = &m;
  Request r;
  r.prompt = prompt;
  r.max_new_tokens = 64;
  const Method& base = find_method("baseline");
  const Method& pld = find_method("pld");
  const double base_step = [&] {  // untimed reference for the ceiling
    const Outcome o = base.run(e, r, resolve_params(base, {}));
    return o.decode_s / double(o.tokens.size() - 1);
  }();
  double decode_s = 0, drafted = 0, accepted = 0, steps = 0, verify_s = 0, drafter_s = 0;
  size_t tokens = 0;
  for (auto _ : st) {
    const Outcome o =
        preset_ix < 0
            ? base.run(e, r, resolve_params(base, {}))
            : pld.run(e, r,
                      resolve_params(pld, {{"preset", pld_preset_names()[size_t(preset_ix)]}}));
    st.SetIterationTime(o.decode_s);
    decode_s += o.decode_s;
    tokens += o.tokens.size() - 1;
    if (preset_ix >= 0) {
      drafted += o.stats["drafted_tokens"].get<double>();
      accepted += o.stats["accepted_tokens"].get<double>();
      steps += o.stats["verify_steps"].get<double>();
      verify_s += o.stats["verify_s"].get<double>();
      drafter_s += o.stats["drafter_s"].get<double>();
    }
  }
  const double tok_s = double(tokens) / decode_s;
  st.counters["decode_tok/s"] = tok_s;
  st.counters["speedup"] = tok_s * base_step;
  if (preset_ix < 0) {
    st.SetLabel("baseline");
    return;
  }
  const double per_step = double(tokens) / steps, verify_step = verify_s / steps;
  const double ceiling = base_step * per_step / verify_step;
  st.counters["acceptance"] = drafted > 0 ? accepted / drafted : 0;
  st.counters["tokens/step"] = per_step;
  st.counters["ceiling"] = ceiling;
  st.counters["of_ceiling"] = tok_s * base_step / ceiling;
  st.counters["drafter_share"] = drafter_s / decode_s;
  st.SetLabel(pld_preset_names()[size_t(preset_ix)]);
}

void drafter_args(benchmark::internal::Benchmark* b) {
  for (long n : {1024, 8192, 32768})
    for (long p = 0; p < long(pld_preset_names().size()); ++p) b->Args({n, p});
  b->ArgNames({"context", "preset"});
}

BENCHMARK(BM_DecodeStep)
    ->Args({8192, 2})
    ->ArgNames({"context", "threads"})
    ->MinTime(2.0)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_DrafterStep)->Apply(drafter_args)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_DrafterIndexPrompt)->Apply(drafter_args)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_DecodeRepeatingPrompt)
    ->ArgsProduct({{-1, 0, 1, 2, 3, 4}, {2}})
    ->ArgNames({"preset", "threads"})
    ->UseManualTime()
    ->Iterations(3)
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace accel

BENCHMARK_MAIN();
