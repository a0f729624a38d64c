// jieba's default cut (suites/jieba_segmenter.h): throughput in bytes of UTF-8 input per second
// on a long seeded mixed text (dictionary words, rare Han characters, runs of single characters
// for the HMM, ASCII words and numbers, punctuation, whitespace, non-BMP characters), and the
// time to load the data (dict.txt and the HMM tables). Skips with a message when the data
// (python3-jieba) is absent.
#include <benchmark/benchmark.h>

#include <random>

#include "suites/jieba_data.h"
#include "suites/longbench_unicode.h"

namespace accel {
namespace {

// About `target_bytes` of mixed text, the same on every run.
std::u32string mixed_text(size_t target_bytes) {
  const char32_t* pieces[] = {U"我来到北京清华大学",
                              U"他来到了网易杭研大厦",
                              U"小明硕士毕业于中国科学院计算所",
                              U"结过婚的和尚未结过婚的",
                              U"，",
                              U"。",
                              U"！",
                              U"“",
                              U"”",
                              U"、",
                              U" ",
                              U"\r\n",
                              U"\u3000",
                              U"GPT-4o",
                              U"2023年",
                              U"95.5%",
                              U"v1.2.3",
                              U"hello world",
                              U"😀",
                              U"𠀀",
                              U"鋆鍂鎏",
                              U"会议在哪里举行",
                              U"共有三百人参加",
                              U"准确率达到",
                              U"本次会议"};
  std::mt19937_64 rng(29);
  std::u32string out;
  size_t bytes = 0;
  while (bytes < target_bytes) {
    const std::u32string_view p = pieces[rng() % std::size(pieces)];
    out += p;
    bytes += longbench::utf8_encode(p).size();
  }
  return out;
}

void BM_JiebaCut(benchmark::State& state) {
  std::shared_ptr<const jieba::Segmenter> seg;
  try {
    seg = jieba::shared_segmenter();
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
    return;
  }
  const std::u32string text = mixed_text(size_t(state.range(0)));
  const size_t bytes = longbench::utf8_encode(text).size();
  size_t tokens = 0;
  for (auto _ : state) {
    const auto out = seg->cut(text);
    tokens = out.size();
    benchmark::DoNotOptimize(out.data());
  }
  state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(bytes));
  state.counters["tokens"] = double(tokens);
  state.counters["chars"] = double(text.size());
}
BENCHMARK(BM_JiebaCut)->Arg(1 << 20)->Unit(benchmark::kMillisecond);

void BM_JiebaLoad(benchmark::State& state) {
  const std::string dir = jieba::locate_data().dir;
  for (auto _ : state) {
    try {
      const jieba::Segmenter seg = jieba::Segmenter::load(dir);
      benchmark::DoNotOptimize(&seg);
    } catch (const std::exception& e) {
      state.SkipWithError(e.what());
      return;
    }
  }
}
BENCHMARK(BM_JiebaLoad)->Unit(benchmark::kMillisecond)->Iterations(3);

}  // namespace
}  // namespace accel

BENCHMARK_MAIN();
