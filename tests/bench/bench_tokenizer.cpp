// Tokenizer encode throughput (MB/s of input text) on the NIAH haystack (Paul Graham's essays,
// 644 KB) for the llama-spm (SentencePiece) and gpt-2 (byte-level BPE) vocabularies, plus the
// byte-level tokenizer of the synthetic families. Skips with a message when a file is absent.
#include <benchmark/benchmark.h>

#include <fstream>
#include <map>
#include <optional>
#include <sstream>

#include "models/gguf.h"
#include "models/tokenizer.h"
#include "tests/support/test_support.h"

namespace accel {
namespace {

const std::string* corpus() {
  static const std::optional<std::string> text = []() -> std::optional<std::string> {
    const auto p = test::shared_data("niah/paul_graham_essays.txt");
    if (!p) return std::nullopt;
    std::ifstream f(*p, std::ios::binary);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
  }();
  return text ? &*text : nullptr;
}

void encode_bench(benchmark::State& state, const Tokenizer* tok, const std::string& why) {
  const std::string* text = corpus();
  if (!text) {
    state.SkipWithError("niah/paul_graham_essays.txt is not in shared data");
    return;
  }
  if (!tok) {
    state.SkipWithError(why.c_str());
    return;
  }
  size_t n_tokens = 0;
  for (auto _ : state) {
    const auto ids = tok->encode(*text, false, false);
    n_tokens = ids.size();
    benchmark::DoNotOptimize(ids.data());
  }
  state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(text->size()));
  state.counters["tokens"] = double(n_tokens);
  state.counters["bytes_per_token"] = n_tokens ? double(text->size()) / double(n_tokens) : 0;
}

void BM_EncodeVocab(benchmark::State& state, const char* name) {
  static std::map<std::string, std::unique_ptr<Tokenizer>> cache;
  std::string why;
  if (!cache.count(name)) {
    const auto p = test::shared_data(std::string("llama.cpp-vocab/ggml-vocab-") + name + ".gguf");
    cache[name] =
        p ? Tokenizer::create(TokenizerSpec::from_gguf(GgufFile::open(p->string()))) : nullptr;
  }
  encode_bench(state, cache[name].get(),
               std::string("llama.cpp-vocab/ggml-vocab-") + name + ".gguf is not in shared data");
}
BENCHMARK_CAPTURE(BM_EncodeVocab, llama_spm, "llama-spm")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_EncodeVocab, gpt_2, "gpt-2")->Unit(benchmark::kMillisecond);

void BM_EncodeByteLevel(benchmark::State& state) {
  static const auto tok = Tokenizer::create(byte_level_tokenizer_spec());
  encode_bench(state, tok.get(), "");
}
BENCHMARK(BM_EncodeByteLevel)->Unit(benchmark::kMillisecond);

void BM_DecodeVocab(benchmark::State& state, const char* name) {
  const std::string* text = corpus();
  const auto p = test::shared_data(std::string("llama.cpp-vocab/ggml-vocab-") + name + ".gguf");
  if (!text || !p) {
    state.SkipWithError("corpus or vocabulary not in shared data");
    return;
  }
  static std::map<std::string, std::unique_ptr<Tokenizer>> cache;
  if (!cache.count(name))
    cache[name] = Tokenizer::create(TokenizerSpec::from_gguf(GgufFile::open(p->string())));
  const auto ids = cache[name]->encode(*text, false, false);
  for (auto _ : state) benchmark::DoNotOptimize(cache[name]->decode(ids).size());
  state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(text->size()));
}
BENCHMARK_CAPTURE(BM_DecodeVocab, llama_spm, "llama-spm")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_DecodeVocab, gpt_2, "gpt-2")->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace accel

BENCHMARK_MAIN();
