// `accelbench costmodel rank` end to end: drafts ranked from their GGUF headers, and bad
// parameters refused by flag name.
#include <gtest/gtest.h>

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
  EXPECT_NE(test::run_cli("costmodel rank --target " + dir.file("missing.gguf") + " --draft " + d,
                          &out),
            0);
  EXPECT_NE(out.find("missing.gguf"), std::string::npos) << out;
}

}  // namespace
}  // namespace accel
