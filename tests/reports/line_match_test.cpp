// The report tests' matchers on hand-worked cases: accel::test::Pattern (PCRE2: whole-subject,
// first, anchored-at-offset and all matches, capture groups, compile errors) and lines_match's
// placeholders (%f, %d, %*), literal metacharacters and in-order matching.
#include <gtest/gtest.h>

#include <stdexcept>

#include "tests/reports/line_match.h"
#include "tests/support/pattern.h"

namespace accel::test {
namespace {

TEST(Pattern, FullMatchNeedsTheWholeSubject) {
  const Pattern p("[0-9]+");
  EXPECT_TRUE(p.full_match("123"));
  EXPECT_FALSE(p.full_match("123a"));
  EXPECT_FALSE(p.full_match("a123"));
  EXPECT_FALSE(p.full_match(""));
}

TEST(Pattern, SearchReturnsOffsetsAndGroups) {
  const auto m = Pattern("id=(\\d+)(x)?").search("key id=42 end");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->begin, 4u);
  EXPECT_EQ(m->end, 9u);
  ASSERT_EQ(m->groups.size(), 2u);
  EXPECT_EQ(m->groups[0], "42");
  EXPECT_EQ(m->groups[1], "");  // did not participate
  EXPECT_FALSE(Pattern("id=(\\d+)").search("no ids here"));
}

TEST(Pattern, MatchAtIsAnchoredAtTheOffset) {
  const Pattern p("&(amp|lt);");
  EXPECT_TRUE(p.match_at("a &amp; b", 2));
  EXPECT_FALSE(p.match_at("a &amp; b", 1));  // a match later on does not count
  EXPECT_FALSE(p.match_at("a &quot;", 2));
  EXPECT_FALSE(p.match_at("abc", 4));  // past the end
}

TEST(Pattern, FindAllReturnsEveryMatchInOrder) {
  const auto all = Pattern("v=(\\d)").find_all("v=1 v=2 w=3 v=4");
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[0].groups[0], "1");
  EXPECT_EQ(all[1].groups[0], "2");
  EXPECT_EQ(all[2].groups[0], "4");
  EXPECT_EQ(all[2].begin, 12u);
  // Empty matches advance: "x*" on "ab" matches empty at 0, 1 and 2.
  EXPECT_EQ(Pattern("x*").find_all("ab").size(), 3u);
}

TEST(Pattern, ABadPatternThrowsNamingIt) {
  try {
    Pattern p("a(b");
    FAIL() << "no exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("'a(b'"), std::string::npos) << e.what();
  }
}

TEST(LineMatch, PlaceholdersMatchNumbersAndAnything) {
  EXPECT_TRUE(lines_match("speedup 1.25x over 3 runs", {"speedup %fx over %d runs"}));
  EXPECT_TRUE(lines_match("t = -2.5e-03 s", {"t = %f s"}));
  EXPECT_FALSE(lines_match("speedup fast", {"speedup %f"}));
  EXPECT_FALSE(lines_match("n = 1.5", {"n = %d"}));
  EXPECT_TRUE(lines_match("model: anything (at all)", {"model: %*"}));
}

TEST(LineMatch, MetacharactersInExpectedLinesAreLiteral) {
  EXPECT_TRUE(lines_match("a (b) [c] 1+1=2 $x^", {"a (b) [c] 1+1=2 $x^"}));
  EXPECT_FALSE(lines_match("a b", {"a.b"}));
}

TEST(LineMatch, LinesMustMatchWholeAndInOrder) {
  const std::string out = "first\nsecond 2\nthird\n";
  EXPECT_TRUE(lines_match(out, {"first", "third"}));
  EXPECT_FALSE(lines_match(out, {"third", "first"}));
  EXPECT_FALSE(lines_match(out, {"second"}));  // a prefix of a line is not a match
  EXPECT_TRUE(lines_match(out, {"second %d"}));
}

}  // namespace
}  // namespace accel::test
