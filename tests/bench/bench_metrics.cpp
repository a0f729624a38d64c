// Text-similarity metrics on code-like lines: python-Levenshtein's ratio (bit-parallel LCS) and
// difflib's SequenceMatcher ratio, for line pairs of 64 to 16384 code points (the upper sizes
// cross the LCS's 4096-code-point chunks). Bytes processed = code points of both lines x 4.
#include <benchmark/benchmark.h>

#include <random>
#include <string>

#include "suites/levenshtein.h"
#include "suites/sequence_matcher.h"

namespace accel {
namespace {

// A seeded line of code-like tokens, `n` code points long, and a near copy with ~10% edits.
std::pair<std::u32string, std::u32string> line_pair(size_t n) {
  static const std::u32string kTokens[] = {U"self.", U"value", U" = ", U"(",  U")",    U"return ",
                                           U"idx",   U" + ",   U"[i]", U"; ", U"名前", U"ctx"};
  std::mt19937_64 rng(n);
  std::u32string a;
  while (a.size() < n) a += kTokens[rng() % std::size(kTokens)];
  a.resize(n);
  std::u32string b = a;
  for (size_t k = 0; k < n / 10; ++k) b[rng() % n] = U"xyz_0é"[rng() % 6];
  return {a, b};
}

void set_bytes(benchmark::State& state, size_t n) {
  state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(2 * n * sizeof(char32_t)));
}

void BM_LevenshteinRatio(benchmark::State& state) {
  const size_t n = size_t(state.range(0));
  const auto [a, b] = line_pair(n);
  for (auto _ : state) benchmark::DoNotOptimize(levenshtein_ratio(a, b));
  set_bytes(state, n);
}
BENCHMARK(BM_LevenshteinRatio)->RangeMultiplier(4)->Range(64, 16384);

void BM_DifflibRatio(benchmark::State& state) {
  const size_t n = size_t(state.range(0));
  const auto [a, b] = line_pair(n);
  for (auto _ : state) benchmark::DoNotOptimize(SequenceMatcher(a, b).ratio());
  set_bytes(state, n);
}
BENCHMARK(BM_DifflibRatio)->RangeMultiplier(4)->Range(64, 16384);

}  // namespace
}  // namespace accel

BENCHMARK_MAIN();
