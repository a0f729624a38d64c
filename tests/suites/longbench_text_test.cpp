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
U32 u(std::string_view s) {
  return utf8_decode_lossy(s);
}
std::vector<std::string> s8(const std::vector<U32>& v) {
  std::vector<std::string> out;
  for (const U32& x : v) out.push_back(s8(x));
  return out;
}
using SV = std::vector<std::string>;

TEST(LongBenchUnicode, LossyDecodingReplacesMaximalIllFormedSubsequences) {
  EXPECT_EQ(s8(u("a\xC3\xA9z")), "a\xC3\xA9z");
  // A truncated 3-byte sequence is one U+FFFD; a lone continuation byte is another.
  EXPECT_EQ(utf8_decode_lossy("\xE4\xB8x\x80"), (U32{0xFFFD, U'x', 0xFFFD}));
  // Overlong, surrogate and out-of-range encodings are ill-formed byte by byte.
  EXPECT_EQ(utf8_decode_lossy("\xC0\xAF"), (U32{0xFFFD, 0xFFFD}));
  EXPECT_EQ(utf8_decode_lossy("\xED\xA0\x80"), (U32{0xFFFD, 0xFFFD, 0xFFFD}));
  EXPECT_EQ(utf8_decode_lossy("\xF4\x90\x80\x80"), (U32{0xFFFD, 0xFFFD, 0xFFFD, 0xFFFD}));
  size_t bad = 0;
  EXPECT_FALSE(utf8_valid("ok\xFF", &bad));
  EXPECT_EQ(bad, 2u);
  EXPECT_TRUE(utf8_valid("中文 \xF0\x9F\x98\x80"));
  EXPECT_EQ(utf8_sanitize("a\xFF"), "a\xEF\xBF\xBD");
}

TEST(LongBenchUnicode, PythonCharacterClasses) {
  for (char32_t c :
       {U' ', U'\t', U'\n', U'\x0b', U'\x0c', U'\r', U'\x1c', U'\x1f', U'\x85', U'\xa0', U'\u1680',
        U'\u2000', U'\u200a', U'\u2028', U'\u2029', U'\u202f', U'\u205f', U'\u3000'})
    EXPECT_TRUE(py_isspace(c)) << uint32_t(c);
  for (char32_t c : {U'\u200b', U'\ufeff', U'x', U'\u180e'}) EXPECT_FALSE(py_isspace(c));
  EXPECT_TRUE(py_isdecimal(U'7'));
  EXPECT_TRUE(py_isdecimal(U'\u0663'));   // ARABIC-INDIC DIGIT THREE
  EXPECT_TRUE(py_isdecimal(U'\uff12'));   // FULLWIDTH DIGIT TWO
  EXPECT_FALSE(py_isdecimal(U'\u00b2'));  // superscript two: a digit, not decimal
  EXPECT_TRUE(py_isword(U'_'));
  EXPECT_TRUE(py_isword(U'é'));
  EXPECT_TRUE(py_isword(U'中'));
  EXPECT_TRUE(py_isword(U'\u00b2'));  // isnumeric
  EXPECT_FALSE(py_isword(U'-'));
  EXPECT_FALSE(py_isword(U'\u201c'));
}

TEST(LongBenchUnicode, LowerIsPythonsFullMappingWithFinalSigma) {
  EXPECT_EQ(s8(py_lower(U"ÀÉÎ Straße ǅ")), "àéî straße ǆ");
  EXPECT_EQ(py_lower(U"\u0130"), (U32{U'i', 0x307}));  // İ -> i + combining dot above
  EXPECT_EQ(s8(py_lower(U"ＡＢＣ")), "ａｂｃ");
  // Σ is final (ς) after a cased letter and not before one; case-ignorable characters between
  // are skipped.
  EXPECT_EQ(s8(py_lower(U"ΟΔΟΣ")), "οδος");
  EXPECT_EQ(s8(py_lower(U"ΣΑΣ ΑΣ. Σ")), "σας ας. σ");
  EXPECT_EQ(s8(py_lower(U"ΑΣ'Α")), "ασ'α");  // apostrophe is case-ignorable: not final
  EXPECT_EQ(s8(py_lower(U"ΑΣ'")), "ας'");
}

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
