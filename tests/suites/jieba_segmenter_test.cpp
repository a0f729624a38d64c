// jieba's default cut on hand-worked sentences. The expected tokens and scores were produced by
// jieba 0.42.1 under CPython 3.11.2 (Debian 12's python3-jieba), e.g.
//   /usr/bin/python3 -c 'import jieba; print(list(jieba.cut("他来到了网易杭研大厦")))'
// and, for the scores, THUDM/LongBench 2e00731f LongBench/metrics.py with pltrdy rouge c1b90a78;
// they are pasted here as constants. A tiny hand-made dictionary checks the DAG, route and
// buffering rules without the real data.
#include "suites/jieba_segmenter.h"

#include <gtest/gtest.h>

#include "suites/jieba_data.h"
#include "suites/longbench_metrics.h"
#include "tests/support/jieba_data.h"

namespace accel::jieba {
namespace {

using SV = std::vector<std::string>;

SV cut8(const Segmenter& seg, std::string_view s) {
  SV out;
  for (const auto& t : seg.cut(longbench::utf8_decode_lossy(s)))
    out.push_back(longbench::utf8_encode(t));
  return out;
}

TEST(JiebaSegmenter, HandWorkedSentencesEqualPythonJieba) {
  ACCEL_REQUIRE(test::missing_jieba_data());
  const Segmenter& seg = *shared_segmenter();
  // Dictionary words, including the longest-route choice over shorter words.
  EXPECT_EQ(cut8(seg, "我来到北京清华大学"), (SV{"我", "来到", "北京", "清华大学"}));
  EXPECT_EQ(cut8(seg, "结过婚的和尚未结过婚的"),
            (SV{"结过婚", "的", "和", "尚未", "结过婚", "的"}));
  EXPECT_EQ(cut8(seg, "小明硕士毕业于中国科学院计算所，后在日本京都大学深造"),
            (SV{"小明", "硕士", "毕业", "于", "中国科学院", "计算所", "，", "后", "在",
                "日本京都大学", "深造"}));
  // "杭研" is not a word: the buffered single characters go through the HMM.
  EXPECT_EQ(cut8(seg, "他来到了网易杭研大厦"), (SV{"他", "来到", "了", "网易", "杭研", "大厦"}));
  // ASCII inside a Han block: finalseg's re_skip keeps 4o and 95.5% together.
  EXPECT_EQ(
      cut8(seg, "GPT-4o在2023年发布，准确率达到95.5%！"),
      (SV{"GPT", "-", "4o", "在", "2023", "年", "发布", "，", "准确率", "达到", "95.5%", "！"}));
  // Whitespace: "\r\n" is one token, every other character outside blocks is its own.
  EXPECT_EQ(cut8(seg, "x\r\ny\u3000z\u00a0w"),
            (SV{"x", "\r\n", "y", "\u3000", "z", "\u00a0", "w"}));
  // Non-BMP characters are single code points, never part of a block.
  EXPECT_EQ(cut8(seg, "𠀀𠀁中文😀abc"), (SV{"𠀀", "𠀁", "中文", "😀", "abc"}));
  // Rare characters: missing from the HMM's emissions, so MIN_FLOAT ties decide (all S).
  EXPECT_EQ(cut8(seg, "鋆鍂鎏龘龘"), (SV{"鋆", "鍂", "鎏", "龘", "龘"}));
  EXPECT_TRUE(seg.cut(U"").empty());
}

TEST(JiebaSegmenter, ChineseMetricsWithJiebaEqualMetricsPy) {
  ACCEL_REQUIRE(test::missing_jieba_data());
  using longbench::qa_f1_zh_score;
  using longbench::rouge_zh_score;
  EXPECT_EQ(qa_f1_zh_score(U"北京", U"北京清华大学"), 0.6666666666666666);
  EXPECT_EQ(qa_f1_zh_score(U"他来到了网易杭研大厦", U"网易杭研大厦"), 0.6666666666666666);
  EXPECT_EQ(qa_f1_zh_score(U"准确率达到95.5%！", U"准确率为95.5%"), 0.6666666666666666);
  EXPECT_EQ(qa_f1_zh_score(U"我来到北京清华大学", U"他来到了北京"), 0.5);
  EXPECT_EQ(rouge_zh_score(U"北京", U"北京清华大学"), 0.6666666622222223);
  EXPECT_EQ(rouge_zh_score(U"准确率达到95.5%！", U"准确率为95.5%"), 0.6666666617283951);
  EXPECT_EQ(rouge_zh_score(U"我来到北京清华大学", U"他来到了北京"), 0.4999999950000001);
  EXPECT_EQ(rouge_zh_score(U"北京大学", U"北京清华大学"), 0.0);  // 北京大学 is one word
  // The character cut, asked for by name, gives the old approximation: 1/1 vs 2/6.
  const longbench::ZhSegmenter chars{longbench::ZhSegmenter::Kind::Char, ""};
  EXPECT_EQ(qa_f1_zh_score(U"北京", U"北京清华大学", chars), 0.5);
}

// Hand-made data: B/M/E/S emissions only for 甲乙, so Viterbi reads 甲乙 as one word (B then E).
const char* kStart = "P={'B': -0.5, 'E': -3.14e+100, 'M': -3.14e+100, 'S': -1.0}\n";
const char* kTrans =
    "P={'B': {'E': -0.5, 'M': -0.9}, 'E': {'B': -0.6, 'S': -0.8},\n"
    " 'M': {'E': -0.3, 'M': -1.3}, 'S': {'B': -0.7, 'S': -0.7}}\n";
const char* kEmit =
    "from __future__ import unicode_literals\n"
    "P={'B': {'\\u7532': -1.0}, 'E': {'\\u4e59': -1.0}, 'M': {}, 'S': {'\\u4e19': -1.0}}\n";

Segmenter tiny(const std::string& dict) {
  return Segmenter(Dictionary::parse(dict, "dict.txt"),
                   HmmTables::parse(kStart, kTrans, kEmit, "finalseg"));
}

TEST(JiebaSegmenter, RouteBufferAndHmmOnAHandMadeDictionary) {
  // total 100; 北京 (30) beats 北 + 京 (10 * 10 / 100 < 30); 大学 is only a prefix of 大学生.
  const Segmenter seg = tiny("北京 30\n北 10\n京 10\n大学生 40\n丙 10\n");
  EXPECT_EQ(cut8(seg, "北京"), (SV{"北京"}));
  // 大学 is in FREQ with 0: each character is its own route step; the buffer 大学 is not a word,
  // so the HMM cuts it (no emissions for either: MIN_FLOAT ties, S wins).
  EXPECT_EQ(cut8(seg, "大学生北京"), (SV{"大学生", "北京"}));
  EXPECT_EQ(cut8(seg, "大学北京"), (SV{"大", "学", "北京"}));
  // 甲乙 is buffered (unknown characters) and the HMM joins it; 丙 alone is a word.
  EXPECT_EQ(cut8(seg, "甲乙北京丙"), (SV{"甲乙", "北京", "丙"}));
  // One buffered character is yielded as it is; ASCII in the buffer goes through re_skip.
  EXPECT_EQ(cut8(seg, "甲北京ab1.5%c-d"), (SV{"甲", "北京", "ab1.5%", "c", "-", "d"}));
}

TEST(JiebaSegmenter, ABufferThatIsAWordIsYieldedCharacterByCharacter) {
  // 北京 (freq 1) loses to 北 + 京 (50 * 50 / 101 > 1): the buffer 北京 is then a dictionary
  // word, so jieba yields its characters one by one instead of running the HMM.
  const Segmenter seg = tiny("北京 1\n北 50\n京 50\n");
  EXPECT_EQ(cut8(seg, "北京"), (SV{"北", "京"}));
}

}  // namespace
}  // namespace accel::jieba
