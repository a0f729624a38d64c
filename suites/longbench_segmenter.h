// How LongBench's Chinese metrics split text where metrics.py calls jieba.cut(s, cut_all=False):
// jieba 0.42.1's own cut (the reference, jieba_segmenter.h), or only when asked for by name
// (the suite parameter segmenter=char) one token per Han character (char_cut, longbench_text.h).
// Owns that choice; the cuts themselves live in those files.
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "suites/longbench_unicode.h"

namespace accel::longbench {

struct ZhSegmenter {
  enum class Kind { Jieba, Char };
  Kind kind = Kind::Jieba;
  std::string jieba_dir;  // "" = jieba::locate_data's default (env var, then the package path)

  // The tokens of `s`. Jieba loads the data on first use and throws jieba::DataError when it
  // is missing or malformed; it never falls back to Char.
  std::vector<U32> cut(std::u32string_view s) const;
  // "jieba" or "char"; throws std::invalid_argument for anything else.
  static Kind parse_kind(const std::string& name);
};

}  // namespace accel::longbench
