// Text helpers of LongBench's metrics.py, over code points with Python's semantics: str.split,
// lstrip, `in`, re.findall(r"\d+"), normalize_answer / normalize_zh_answer, eval.py's first-line
// rule, and an approximation of `jieba.cut` (see jieba_cut below: exact outside runs of Han
// characters, one token per Han character inside them).
#pragma once
#include <string_view>
#include <vector>

#include "suites/longbench_unicode.h"

namespace accel::longbench {

// str.split(): runs of str.isspace() characters separate; no empty pieces.
std::vector<U32> py_split_whitespace(std::u32string_view s);
// str.split(sep) with a non-empty separator: every occurrence separates; empty pieces kept.
std::vector<U32> py_split(std::u32string_view s, std::u32string_view sep);
// str.lstrip(c) for one character.
std::u32string_view py_lstrip(std::u32string_view s, char32_t c);
// `needle in hay` (an empty needle is in everything).
bool py_contains(std::u32string_view hay, std::u32string_view needle);
// re.findall(r"\d+", s): maximal runs of decimal digits (any script, category Nd).
std::vector<U32> findall_digits(std::u32string_view s);
// eval.py's rule for trec, triviaqa, samsum, lsht: s.lstrip('\n').split('\n')[0].
U32 first_line(std::u32string_view s);

// metrics.py normalize_answer: lower(); drop ASCII string.punctuation; r"\b(a|an|the)\b" -> " "
// (Unicode word boundaries); " ".join(split()).
U32 normalize_answer(std::u32string_view s);
// metrics.py normalize_zh_answer: lower(); drop string.punctuation and its list of Chinese
// punctuation; "".join(split()) (all whitespace removed).
U32 normalize_zh_answer(std::u32string_view s);

// jieba 0.42.1 `jieba.cut(s, cut_all=False)` (precise mode, HMM on) with its dictionary and HMM
// replaced: the block structure is jieba's own (runs of [\u4E00-\u9FD5a-zA-Z0-9+#&._%-] are cut
// as by __cut_DAG with no dictionary word found, i.e. through finalseg.cut, which keeps
// [a-zA-Z0-9]+(\.\d+)?%? together and yields the text between such runs whole; whitespace and
// "\r\n" are tokens of their own; other characters are single tokens), but every run of Han
// characters [\u4E00-\u9FD5] is cut into single characters where jieba would use its dictionary
// (DAG + max-probability route) and its HMM (Viterbi). Chinese scores are therefore
// character-level, not jieba-word-level: an approximation, recorded in the suite's version.
std::vector<U32> jieba_cut(std::u32string_view s);

}  // namespace accel::longbench
