// The essay loader's "#bytes=START:END" suffix: the haystack and word lists come from exactly that
// byte range, and bad ranges fail naming the data parameter's value.
#include "suites/ruler_corpus.h"

#include <gtest/gtest.h>

#include <fstream>

#include "tests/support/essay_fixture.h"
#include "tests/support/test_support.h"

namespace accel {
namespace {

std::string error_of(const std::string& data) {
  try {
    ruler::load_essays(data, "ruler");
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(RulerCorpus, ByteRangeSuffixKeepsExactlyThoseBytesOfTheText) {
  test::TempDir dir;
  const std::string text = test::fixture_essays() + "Zebra\xc3\xa9 tail text with words.\n";
  std::ofstream(dir.file("e.txt"), std::ios::binary) << text;
  const auto whole = ruler::load_essays(dir.file("e.txt"), "ruler");
  EXPECT_EQ(whole->text, text);
  const auto part = ruler::load_essays(dir.file("e.txt") + "#bytes=100:5000", "ruler");
  EXPECT_EQ(part->text, text.substr(100, 4900));
  EXPECT_EQ(part->source, dir.file("e.txt") + "#bytes=100:5000");
  EXPECT_FALSE(part->words.nouns.empty());
}

TEST(RulerCorpus, BadByteRangesNameTheDataValue) {
  test::TempDir dir;
  const std::string text = test::fixture_essays() + "caf\xc3\xa9";
  std::ofstream(dir.file("e.txt"), std::ios::binary) << text;
  const std::string f = dir.file("e.txt");
  EXPECT_NE(error_of(f + "#bytes=5:5").find("empty byte range"), std::string::npos);
  EXPECT_NE(error_of(f + "#bytes=0:99999999").find("ends past the"), std::string::npos);
  EXPECT_NE(error_of(f + "#bytes=1-2").find("#bytes=START:END"), std::string::npos);
  EXPECT_NE(error_of(f + "#bytes=0:" + std::to_string(text.size() - 1)).find("cuts a UTF-8"),
            std::string::npos);
  EXPECT_NE(error_of(f + "#bytes=:9").find("'" + f + "#bytes=:9'"), std::string::npos);
}

}  // namespace
}  // namespace accel
