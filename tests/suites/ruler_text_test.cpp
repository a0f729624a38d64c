// Python string semantics the RULER generators and metrics rely on (expected values printed by
// CPython 3.11; decoding and str.lower() are tested in python_text_test.cpp), and the sentence
// rule that stands in for nltk's Punkt.
#include "suites/ruler_text.h"

#include <gtest/gtest.h>

#include "suites/ruler_sentences.h"

namespace accel::ruler {
namespace {

TEST(RulerText, CodePointsAreCountedOnValidUtf8) {
  EXPECT_EQ(utf8_code_points("a\xc3\xa9\xe2\x82\xac"), 3u);
  EXPECT_EQ(utf8_code_points(""), 0u);
}

TEST(RulerText, WhitespaceStripSplitAndCollapseAreUnicodeAware) {
  EXPECT_EQ(py_strip("\xe3\x80\x80x\xc2\xa0 "), "x");  // '\u3000x\xa0 '.strip()
  EXPECT_EQ(py_strip(" \t\n"), "");
  EXPECT_EQ(py_collapse_split("  a\t b\xc2\x85\n"),
            (std::vector<std::string>{"", "a", "b", ""}));  // re.sub(r'\s+', ' ', s).split(' ')
  EXPECT_EQ(py_collapse_split("a"), (std::vector<std::string>{"a"}));
  const auto w = py_split("  VAR  ABC = 1 \n");
  EXPECT_EQ(std::vector<std::string>(w.begin(), w.end()),
            (std::vector<std::string>{"VAR", "ABC", "=", "1"}));
}

TEST(RulerText, FormatAndReplaceFollowPython) {
  EXPECT_EQ(py_format("{a} and {b} {{x}}", {{"a", "1"}, {"b", "{c}"}, {"unused", "z"}}),
            "1 and {c} {x}");
  EXPECT_THROW(py_format("{missing}", {}), std::logic_error);
  EXPECT_EQ(py_replace("are all are", "are", "is"), "is all is");
  EXPECT_EQ(py_replace("aaa", "aa", "b"), "ba");  // non-overlapping, left to right
}

std::vector<std::string> sents(const std::string& t) {
  const auto v = split_sentences(t);
  return {v.begin(), v.end()};
}

TEST(RulerSentences, SplitsAtSentenceEndsButNotAtAbbreviationsInitialsOrNumbers) {
  EXPECT_EQ(sents("Mr. Smith went home. He slept."),
            (std::vector<std::string>{"Mr. Smith went home.", "He slept."}));
  EXPECT_EQ(
      sents("I met J. R. Smith today. Then I left!  Why? Because."),
      (std::vector<std::string>{"I met J. R. Smith today.", "Then I left!", "Why?", "Because."}));
  // A period before closing quotes or brackets ends the sentence, before any next word.
  EXPECT_EQ(sents("He said \"stop.\" Then (quietly.) he left."),
            (std::vector<std::string>{"He said \"stop.\"", "Then (quietly.)", "he left."}));
  EXPECT_EQ(sents("Use tools, e.g. hammers. Fine."),
            (std::vector<std::string>{"Use tools, e.g. hammers.", "Fine."}));
  EXPECT_EQ(
      sents("It was 1999. and then... we went on... Later it rained."),
      (std::vector<std::string>{"It was 1999. and then... we went on...", "Later it rained."}));
  EXPECT_EQ(sents("at 5 p.m. We ate."), (std::vector<std::string>{"at 5 p.m. We ate."}));
  EXPECT_EQ(sents("  no end here  "), (std::vector<std::string>{"no end here"}));
  EXPECT_TRUE(sents("").empty());
  // Inner whitespace is kept, as in Punkt's spans.
  EXPECT_EQ(sents("A  bc.   C"), (std::vector<std::string>{"A  bc.", "C"}));
}

}  // namespace
}  // namespace accel::ruler
