// Text helpers of LongBench's metrics.py, over code points with Python's semantics: str.split,
// lstrip, `in`, re.findall(r"\d+"), normalize_answer / normalize_zh_answer, eval.py's first-line
// rule, and the character-level stand-in for `jieba.cut` that segmenter=char selects (char_cut
// below; the reference cut is jieba_segmenter.h's).
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

// An approximation of jieba 0.42.1's `jieba.cut(s, cut_all=False)`, used only when the LongBench
// parameter segmenter=char asks for it: jieba's block structure (runs of
// [\u4E00-\u9FD5a-zA-Z0-9+#&._%-] cut as by __cut_DAG with no dictionary word found, i.e. through
// finalseg.cut, which keeps [a-zA-Z0-9]+(\.\d+)?%? together and yields the text between such runs
// whole; "\r\n" is one token; other characters are single tokens), but every run of Han
// characters [\u4E00-\u9FD5] is cut into single characters where jieba uses its dictionary and
// HMM. Scores with it are character-level, not the reference's.
std::vector<U32> char_cut(std::u32string_view s);

}  // namespace accel::longbench
