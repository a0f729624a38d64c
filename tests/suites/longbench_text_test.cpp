// Python string semantics and LongBench's normalisations on hand-worked cases. Expected values
// follow the reference definitions (metrics.py, CPython 3.11's str methods and re); the jieba
// cases on text without Han characters were produced by jieba 0.42.1 at development time and
// pasted here as constants.
#include "suites/longbench_text.h"

#include <gtest/gtest.h>

namespace accel::longbench {
namespace {

std::string s8(const U32& s) {
  return utf8_encode(s);
}
std::vector<std::string> s8(const std::vector<U32>& v) {
  std::vector<std::string> out;
  for (const U32& x : v) out.push_back(s8(x));
  return out;
}
using SV = std::vector<std::string>;

TEST(LongBenchText, SplitStripContainsDigits) {
  EXPECT_EQ(s8(py_split_whitespace(U"  a\u3000b\n\tc  ")), (SV{"a", "b", "c"}));
  EXPECT_TRUE(py_split_whitespace(U" \n ").empty());
  EXPECT_EQ(s8(py_split(U"a..b.", U".")), (SV{"a", "", "b", ""}));
  EXPECT_EQ(s8(py_split(U"", U".")), (SV{""}));
  EXPECT_EQ(s8(U32(py_lstrip(U"\n\nx\n", U'\n'))), "x\n");
  EXPECT_TRUE(py_contains(U"abc", U""));
  EXPECT_EQ(s8(findall_digits(U"a12b3 ٣٤ x０")), (SV{"12", "3", "٣٤", "０"}));
  EXPECT_EQ(s8(first_line(U"\n\nfirst\nsecond")), "first");
  EXPECT_EQ(s8(first_line(U"")), "");
  EXPECT_EQ(s8(first_line(U"\n \nx")), " ");
}

TEST(LongBenchText, NormalizeAnswerAsMetricsPy) {
  // lower, ASCII punctuation removed, articles (whole words only) replaced, whitespace joined.
  EXPECT_EQ(s8(normalize_answer(U"The  Wiki-103 corpus!")), "wiki103 corpus");
  EXPECT_EQ(s8(normalize_answer(U"An apple, a day; THE end")), "apple day end");
  EXPECT_EQ(s8(normalize_answer(U"theater another atheist")), "theater another atheist");
  // Punctuation goes before articles: "a-b" becomes "ab", and "the." becomes an article.
  EXPECT_EQ(s8(normalize_answer(U"a-b the.")), "ab");
  // Unicode punctuation is not in string.punctuation and stays.
  EXPECT_EQ(s8(normalize_answer(U"“Paris” — «Lyon»")), "“paris” — «lyon»");
  // Word boundaries are Unicode: the 'a' of "éa" is inside a word. '_' is punctuation, so "a_"
  // becomes the article "a".
  EXPECT_EQ(s8(normalize_answer(U"éa a_ a")), "éa");
  EXPECT_EQ(s8(normalize_answer(U"")), "");
}

TEST(LongBenchText, NormalizeZhAnswerAsMetricsPy) {
  EXPECT_EQ(s8(normalize_zh_answer(U"北京，清华！")), "北京清华");
  EXPECT_EQ(s8(normalize_zh_answer(U" A B\u3000《书》")), "ab《书");  // 《 is not in the list
  EXPECT_EQ(s8(normalize_zh_answer(U"“引号”…—–.")), "引号");
  EXPECT_EQ(s8(normalize_zh_answer(U"ＡＢ")), "ａｂ");
}

TEST(LongBenchText, CharCutMatchesJiebaOutsideHanRuns) {
  // jieba 0.42.1 jieba.cut(s) on these strings gives exactly these tokens.
  EXPECT_EQ(s8(char_cut(U"hello world3.5% v1.2.3")),
            (SV{"hello", " ", "world3.5%", " ", "v1.2", ".", "3"}));
  EXPECT_EQ(s8(char_cut(U"GPT-4o, A&B_c #1!")),
            (SV{"GPT", "-", "4o", ",", " ", "A", "&", "B", "_", "c", " ", "#", "1", "!"}));
  EXPECT_EQ(s8(char_cut(U"x\r\ny\tz  w")), (SV{"x", "\r\n", "y", "\t", "z", " ", " ", "w"}));
  EXPECT_EQ(s8(char_cut(U"Ünïcode café 12.5%ok")),
            (SV{"Ü", "n", "ï", "code", " ", "caf", "é", " ", "12.5%", "ok"}));
  EXPECT_EQ(s8(char_cut(U"3.14.15 a.b")), (SV{"3.14", ".", "15", " ", "a", ".", "b"}));
  EXPECT_TRUE(char_cut(U"").empty());
}

TEST(LongBenchText, CharCutIsPerCharacterOnHanRuns) {
  // Where jieba uses its dictionary and HMM ("我/来到/北京/清华大学",
  // "他/说/：/“/你好/！/”/2023/年"), this cut has one token per Han character: the approximation
  // that segmenter=char selects.
  EXPECT_EQ(s8(char_cut(U"我来到北京")), (SV{"我", "来", "到", "北", "京"}));
  EXPECT_EQ(s8(char_cut(U"他说：“你好！”2023年")),
            (SV{"他", "说", "：", "“", "你", "好", "！", "”", "2023", "年"}));
  EXPECT_EQ(s8(char_cut(U"段落12")), (SV{"段", "落", "12"}));
}

}  // namespace
}  // namespace accel::longbench
