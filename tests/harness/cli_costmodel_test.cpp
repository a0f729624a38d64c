// `accelbench costmodel rank` end to end: drafts ranked from their GGUF headers, and bad
// parameters refused by flag name.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "tests/support/test_support.h"

namespace accel {
namespace {

TEST(CostModelCli, RanksDraftsFromTheirHeaders) {
  test::TempDir dir;
  std::string out;
  ASSERT_EQ(test::run_cli("models make --family tiny --out " + dir.file("m"), &out), 0) << out;
  const std::string t = dir.file("m/target.gguf"), d = dir.file("m/draft.gguf");
  // The target as its own "draft" costs more than the real draft: it must rank second.
  ASSERT_EQ(test::run_cli("costmodel rank --target " + t + " --draft " + t + " --draft " + d +
                              " --context 512 --context 2048 --keep 0.2",
                          &out),
            0)
      << out;
  const size_t first = out.find("| 1 | " + d), second = out.find("| 2 | " + t);
  EXPECT_NE(first, std::string::npos) << out;
  EXPECT_NE(second, std::string::npos) << out;
  EXPECT_NE(test::run_cli("costmodel rank --target " + t + " --draft " + d + " --keep 1.5", &out),
            0);
  EXPECT_NE(out.find("--keep"), std::string::npos) << out;
  EXPECT_NE(
      test::run_cli("costmodel rank --target " + dir.file("missing.gguf") + " --draft " + d, &out),
      0);
  EXPECT_NE(out.find("missing.gguf"), std::string::npos) << out;
}

// eps fitted from a store: a small measured run, then the ranking uses its fit.
TEST(CostModelCli, FitsEpsFromAStore) {
  test::TempDir dir;
  const std::string plan = dir.file("plan.json"), db = dir.file("r.sqlite");
  std::ofstream(plan) << nlohmann::json{
      {"name", "eps-fit"},
      {"models", {{{"name", "tiny"}, {"family", "tiny"}}}},
      {"methods",
       {{{"name", "baseline"}}, {{"name", "specprefill"}, {"params", {{"threshold", 0}}}}}},
      {"context_lengths", {256, 512}},
      {"warmup", 0},
      {"trials", 1},
      {"decode_tokens", 2},
      {"agreement_steps", 0},
      {"threads", 1}}.dump();
  std::string out;
  ASSERT_EQ(
      test::run_cli(
          "run " + plan + " --no-report --db " + db + " --models-dir " + dir.file("models"), &out),
      0)
      << out;
  const std::string t = dir.file("models/tiny-f32-s0/target.gguf"),
                    d = dir.file("models/tiny-f32-s0/draft.gguf");
  ASSERT_EQ(test::run_cli(
                "costmodel rank --target " + t + " --draft " + d + " --db " + db + " --format json",
                &out),
            0)
      << out;
  const auto j = nlohmann::json::parse(out);
  const std::string note = j["footnotes"][0];
  EXPECT_EQ(note.find("eps = 0. "), std::string::npos) << "eps must come from the store: " << note;
  EXPECT_NE(
      test::run_cli("costmodel rank --target " + t + " --draft " + d + " --db " + db + " --eps 0.1",
                    &out),
      0);
  // The linear + quadratic model: baseline prefills at 256 and 512 and sparse ones of the kept
  // tokens give four sizes, enough for its three constants; it needs a store.
  ASSERT_EQ(test::run_cli("costmodel rank --model linquad --target " + t + " --draft " + d +
                              " --db " + db + " --format json",
                          &out),
            0)
      << out;
  const auto lq = nlohmann::json::parse(out);
  EXPECT_NE(lq["title"].get<std::string>().find("linear + quadratic"), std::string::npos);
  EXPECT_EQ(lq["rows"].size(), 1u);
  EXPECT_NE(test::run_cli("costmodel rank --model linquad --target " + t + " --draft " + d, &out),
            0);
  EXPECT_NE(out.find("needs --db"), std::string::npos) << out;
}

}  // namespace
}  // namespace accel
