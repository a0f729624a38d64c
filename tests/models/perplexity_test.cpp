// Perplexity: window arithmetic on a synthetic model (every token after the first scored once,
// stride-independent when windows cover everything), and the real stories260K model pinned to a
// low perplexity on TinyStories-style English and a high one on random text.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "models/llama2c_import.h"
#include "models/model.h"
#include "models/perplexity.h"
#include "models/synthetic.h"
#include "models/tokenizer.h"
#include "tests/support/test_support.h"

namespace accel {
namespace {

TEST(Perplexity, ScoresEveryTokenOnceAndFullWindowsAgree) {
  test::TempDir dir;
  auto m = Model::load(make_synthetic_family("tiny", dir.path().string(), 1, DType::F32)[0]);
  std::vector<int32_t> toks(300);
  for (size_t i = 0; i < toks.size(); ++i) toks[i] = int32_t((i * 37 + 11) % 256);
  const auto a = perplexity(*m, toks, 300, 300);
  EXPECT_EQ(a.n_scored, 299u);
  EXPECT_EQ(a.n_windows, 1u);
  const auto b = perplexity(*m, toks, 128, 64);
  EXPECT_EQ(b.n_scored, 299u);
  EXPECT_GT(b.n_windows, 1u);
  // Random weights: close to uniform over 258 tokens.
  EXPECT_GT(a.perplexity, 100.0);
  EXPECT_LT(a.perplexity, 1000.0);
  EXPECT_THROW(perplexity(*m, toks, 1, 1), std::invalid_argument);
  EXPECT_THROW(perplexity(*m, toks, 128, 129), std::invalid_argument);
  EXPECT_THROW(perplexity(*m, toks, 5000, 10), std::invalid_argument);
}

// The cache type reaches the windows: int4-uniform scores every token through the quantized cache
// (moving the NLL by a quantization-sized amount), seed-placement int4 with one chunk per window
// attends in full precision (the f32 result exactly), and with chunk 1 it is the uniform result.
TEST(Perplexity, KVDTypeQuantizesTheWindowsAsItsPlacementSays) {
  test::TempDir dir;
  auto m = Model::load(make_synthetic_family("tiny", dir.path().string(), 1, DType::F32)[0]);
  std::vector<int32_t> toks(200);
  for (size_t i = 0; i < toks.size(); ++i) toks[i] = int32_t((i * 37 + 11) % 256);
  const auto f32 = perplexity(*m, toks, 200, 200, 512, KVDType::F32);
  const auto seed_one_chunk = perplexity(*m, toks, 200, 200, 512, KVDType::Int4);
  const auto uniform = perplexity(*m, toks, 200, 200, 512, KVDType::Int4Uniform);
  const auto seed_token_by_token = perplexity(*m, toks, 200, 200, 1, KVDType::Int4);
  EXPECT_EQ(seed_one_chunk.mean_nll, f32.mean_nll);
  EXPECT_NE(uniform.mean_nll, f32.mean_nll);
  EXPECT_NEAR(uniform.mean_nll, f32.mean_nll, 0.05);  // int4 moves O(1) logits by O(1e-2)
  EXPECT_NEAR(seed_token_by_token.mean_nll, uniform.mean_nll, 1e-9);
}

// A hand-written paragraph in the style of the TinyStories corpus (not from it).
constexpr const char* kStory =
    "Once upon a time, there was a little boy named Tom. He liked to play with his red ball in "
    "the garden. One day, Tom saw a small cat under a tree. The cat was sad because it was lost. "
    "Tom said, \"Do not be sad, little cat. I will help you find your home.\" Tom and the cat "
    "walked to the park. They saw a big dog and a girl named Sue. Sue smiled and said, \"That is "
    "my cat! Thank you, Tom!\" Tom was very happy. He made a new friend that day.";

TEST(Perplexity, Stories260KLowOnStoriesHighOnRandomText) {
  const auto bin = test::shared_data("stories260K/stories260K.bin");
  const auto tok_file = test::shared_data("stories260K/tok512.bin");
  if (!bin || !tok_file)
    GTEST_SKIP() << test::missing_shared_data("stories260K/{stories260K.bin,tok512.bin}");
  test::TempDir dir;
  import_llama2c(bin->string(), tok_file->string(), dir.file("s.gguf"));
  auto m = Model::load(dir.file("s.gguf"));
  auto tok = Tokenizer::create(TokenizerSpec::from_gguf(m->file()));
  const auto story = tok->encode(kStory, true, false);
  std::mt19937_64 rng(7);
  std::string noise;
  const std::string letters = "abcdefghijklmnopqrstuvwxyz     .,";
  for (int i = 0; i < 600; ++i) noise += letters[rng() % letters.size()];
  const auto random = tok->encode(noise, true, false);
  const auto ps = perplexity(*m, story, 256, 128);
  const auto pr = perplexity(*m, random, 256, 128);
  // Measured: story 2.54 (184 tokens), random letters 8740 (535 tokens); the bounds leave
  // room for kernel changes while separating a working model from a broken one by far.
  EXPECT_LT(ps.perplexity, 12.0) << "story ppl";
  EXPECT_GT(pr.perplexity, 60.0) << "random ppl";
  std::printf("stories260K perplexity: story %.3f (%zu tokens), random %.3f (%zu tokens)\n",
              ps.perplexity, ps.n_scored, pr.perplexity, pr.n_scored);
}

}  // namespace
}  // namespace accel
