// The perplexity suite: token NLL on hand-worked rows, the sample layout (BOS + prompt, then the
// continuation, exact lengths, windows that differ by index), and scoring against a reference
// (identical logits give delta 0, KL 0, top-1 1; a hand-built pair gives the hand-worked figures).
#include "suites/perplexity.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

#include "models/tokenizer.h"
#include "tests/support/essay_fixture.h"
#include "tests/support/test_support.h"

namespace accel {
namespace {

TEST(TokenNll, EqualsLogSumExpMinusTheTargetLogitOnHandWorkedRows) {
  const std::vector<float> two{0.f, 0.f};
  EXPECT_NEAR(token_nll(two, 0), std::log(2.0), 1e-15);
  const std::vector<float> three{1.f, 2.f, 3.f};
  const double lse = std::log(std::exp(1.0) + std::exp(2.0) + std::exp(3.0));
  EXPECT_NEAR(token_nll(three, 2), lse - 3.0, 1e-14);  // double log-sum-exp: rounding only
  EXPECT_NEAR(token_nll(three, 0), lse - 1.0, 1e-14);
  EXPECT_THROW(token_nll(three, 3), std::out_of_range);
  EXPECT_THROW(token_nll(three, -1), std::out_of_range);
}

struct Perplexity : ::testing::Test {
  test::TempDir dir;
  std::string text_file = dir.file("text.txt");
  const Suite& s = find_suite("perplexity");
  std::unique_ptr<Tokenizer> tok = Tokenizer::create(byte_level_tokenizer_spec());
  SuiteContext ctx{258, 256, 257, tok.get()};
  void SetUp() override {
    std::ofstream f(text_file);
    f << test::fixture_essays();
  }
  nlohmann::json params(int continuation) const {
    return resolve_suite_params(s, {{"data", text_file}, {"continuation", continuation}});
  }
};

TEST_F(Perplexity, SampleIsBosPromptThenContinuationFillingTheContextLength) {
  const Sample a = s.make_sample(200, 0, 7, ctx, params(32));
  ASSERT_EQ(a.prompt.size(), 168u);
  EXPECT_EQ(a.prompt[0], 256);
  EXPECT_EQ(a.continuation.size(), 32u);
  EXPECT_EQ(a.max_new_tokens, 32);
  // The continuation is the text right after the prompt's (byte-level: one token per byte).
  const std::string prompt_text = tok->decode(std::span(a.prompt).subspan(1));
  const std::string cont_text = tok->decode(a.continuation);
  std::ifstream f(text_file);
  const std::string all((std::istreambuf_iterator<char>(f)), {});
  EXPECT_NE(all.find(prompt_text + cont_text), std::string::npos);
  EXPECT_EQ(s.reference_need(params(32)).kind, ReferenceNeed::Kind::ForcedContinuation);
  EXPECT_EQ(s.reference_need(params(32)).steps, 32);
  // Other indices read other windows; the same arguments give the same sample.
  EXPECT_NE(s.make_sample(200, 1, 7, ctx, params(32)).prompt, a.prompt);
  EXPECT_EQ(s.make_sample(200, 0, 7, ctx, params(32)).continuation, a.continuation);
}

TEST_F(Perplexity, RejectsAContextWithNoRoomBeforeTheContinuation) {
  EXPECT_THROW(s.make_sample(33, 0, 7, ctx, params(32)), std::invalid_argument);
  SuiteContext no_tok{258, 256, 257, nullptr};
  EXPECT_THROW(s.make_sample(200, 0, 7, no_tok, params(32)), std::invalid_argument);
}

TEST_F(Perplexity, ScoresNllAgainstTheReferenceOnHandBuiltLogits) {
  Sample smp;
  smp.id = "hand";
  smp.continuation = {'a', 'b'};
  Generation out, ref;
  std::vector<float> row(258, 0.f);
  row['a'] = 2.f;  // method: confident in 'a' at both steps
  out.logits = {row, row};
  ref.logits = {row, row};
  ref.logits[1]['b'] = 4.f;  // reference: prefers 'b' at step 1
  const Scores self = s.score(smp, out, nullptr, ctx, params(2));
  const double nll_a = token_nll(row, 'a'), nll_b = token_nll(row, 'b');
  EXPECT_NEAR(self.at("ppl.nll_mean"), (nll_a + nll_b) / 2, 1e-14);
  EXPECT_NEAR(self.at("ppl.perplexity"), std::exp((nll_a + nll_b) / 2), 1e-12);
  EXPECT_NEAR(self.at("ppl.bits_per_byte"), (nll_a + nll_b) / std::log(2.0) / 2, 1e-14);
  EXPECT_FALSE(self.count("ppl.kl_mean"));  // the reference itself: no comparison

  const Scores same = s.score(smp, out, &out, ctx, params(2));
  EXPECT_EQ(same.at("ppl.delta_nll"), 0.0);
  EXPECT_EQ(same.at("ppl.kl_mean"), 0.0);
  EXPECT_EQ(same.at("ppl.top1"), 1.0);

  const Scores cmp = s.score(smp, out, &ref, ctx, params(2));
  const double ref_nll = (nll_a + token_nll(ref.logits[1], 'b')) / 2;
  EXPECT_NEAR(cmp.at("ppl.ref_nll_mean"), ref_nll, 1e-14);
  EXPECT_NEAR(cmp.at("ppl.delta_nll"), (nll_a + nll_b) / 2 - ref_nll, 1e-14);
  EXPECT_EQ(cmp.at("ppl.top1"), 0.5);  // step 1's argmaxes differ ('a' vs 'b')
  EXPECT_GT(cmp.at("ppl.kl_mean"), 0.0);
}

TEST_F(Perplexity, RejectsLogitRowsThatDoNotMatchTheContinuation) {
  Sample smp;
  smp.id = "short";
  smp.continuation = {'a', 'b'};
  Generation out;
  out.logits = {std::vector<float>(258, 0.f)};
  EXPECT_THROW(s.score(smp, out, nullptr, ctx, params(2)), std::logic_error);
}

}  // namespace
}  // namespace accel
