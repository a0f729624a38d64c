// jieba's dict.txt reader: gen_pfdict's semantics (prefixes with 0, last frequency wins, every
// line in the total, calc's weights in Python's order) on small hand-written files, hostile
// files rejected with the file and line, and the real dictionary's size and load time.
#include "suites/jieba_dictionary.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>

#include "suites/jieba_data.h"
#include "tests/support/jieba_data.h"

namespace accel::jieba {
namespace {

std::string error_of(std::string_view text) {
  try {
    Dictionary::parse(text, "d.txt");
  } catch (const DataError& e) {
    return e.what();
  }
  return "no error";
}

TEST(JiebaDictionary, PrefixesWordsAndTotalAsGenPfdict) {
  const Dictionary d =
      Dictionary::parse("北京大学 20 nt\n北京 5\r\n  大 3 a b c\n北京 7\n", "d.txt");
  EXPECT_EQ(d.total(), 35);  // 20 + 5 + 3 + 7: a repeated word counts twice
  EXPECT_EQ(d.lines(), 4u);
  EXPECT_EQ(d.freq(d.find(U"北京")), 7);    // the last line for a word wins
  EXPECT_EQ(d.freq(d.find(U"北京大")), 0);  // a prefix only
  EXPECT_EQ(d.freq(d.find(U"北")), 0);
  EXPECT_EQ(d.find(U"京"), Dictionary::kNone);  // not a prefix of any word
  EXPECT_EQ(d.freq(d.find(U"大")), 3);          // leading spaces and the \r are stripped
  // calc's terms: log(freq) - log(total), and log(1) - log(total) for a zero or unknown entry.
  EXPECT_EQ(d.log_weight(d.find(U"北京大学")), std::log(20.0) - std::log(35.0));
  EXPECT_EQ(d.log_weight(d.find(U"北")), 0.0 - std::log(35.0));
  EXPECT_EQ(d.unknown_weight(), -std::log(35.0));
  EXPECT_EQ(d.child(d.find(U"北京"), U'大'), d.find(U"北京大"));
  // No trailing newline: the last line still counts; a word of frequency 0 is only a prefix.
  const Dictionary z = Dictionary::parse("a 0\nab 2", "z.txt");
  EXPECT_EQ(z.freq(z.find(U"a")), 0);
  EXPECT_EQ(z.freq(z.find(U"ab")), 2);
}

TEST(JiebaDictionary, MalformedFilesNameTheFileAndLine) {
  EXPECT_NE(error_of("a 1\nb\n").find("[jieba] d.txt:2: expected 'word frequency [tag]'"),
            std::string::npos);
  EXPECT_NE(error_of("a 1\n\nb 2\n").find("d.txt:2:"), std::string::npos);  // an empty line
  EXPECT_NE(error_of("a 1x\n").find("d.txt:1: frequency '1x'"), std::string::npos);
  EXPECT_NE(error_of("a -1\n").find("d.txt:1: frequency '-1'"), std::string::npos);
  EXPECT_NE(error_of("a  1\n").find("d.txt:1: missing"), std::string::npos);  // two spaces
  EXPECT_NE(error_of("a 99999999999999999999\n").find("d.txt:1: frequency"), std::string::npos);
  EXPECT_NE(error_of("a 1\nb\xff 2\n").find("d.txt:2: not valid UTF-8"), std::string::npos);
  EXPECT_NE(error_of("a 0\n").find("total frequency is 0"), std::string::npos);
  EXPECT_NE(error_of("").find("total frequency is 0"), std::string::npos);
  try {
    Dictionary::load("/nonexistent/dict.txt");
    FAIL() << "no error";
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/dict.txt: cannot open"), std::string::npos);
  }
}

TEST(JiebaDictionary, TheRealDictionaryLoadsWhole) {
  ACCEL_REQUIRE(test::missing_jieba_data());
  const auto t0 = std::chrono::steady_clock::now();
  const Dictionary d = Dictionary::load(locate_data().dir + "/dict.txt");
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(d.lines(), 349046u);  // jieba 0.42.1's dict.txt
  EXPECT_GT(d.freq(d.find(U"清华大学")), 0);
  std::printf("[jieba] dict.txt: %zu lines, %zu trie nodes, total %lld, loaded in %.0f ms\n",
              d.lines(), d.nodes(), static_cast<long long>(d.total()), ms);
}

}  // namespace
}  // namespace accel::jieba
