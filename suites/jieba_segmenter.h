// jieba 0.42.1's default cut, jieba.cut(sentence) = cut(sentence, cut_all=False, HMM=True), over
// code points as Python's str: the split into re_han_default blocks and the rest, the prefix-
// dictionary DAG, the maximum log-probability route, and the HMM for runs of single characters.
// Owns the algorithm; the data comes from jieba_dictionary.h and jieba_hmm.h, located and cached
// by jieba_data.h.
#pragma once
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "suites/jieba_dictionary.h"
#include "suites/jieba_hmm.h"

namespace accel::jieba {

class Segmenter {
 public:
  Segmenter(Dictionary dictionary, HmmTables hmm)
      : dict_(std::move(dictionary)), hmm_(std::move(hmm)) {}
  // `dir`/dict.txt and `dir`/finalseg/prob_{start,trans,emit}.py (jieba's package layout).
  static Segmenter load(const std::string& dir);

  // list(jieba.cut(sentence)), bit for bit.
  std::vector<std::u32string> cut(std::u32string_view sentence) const;

  const Dictionary& dictionary() const { return dict_; }

 private:
  // Tokenizer.__cut_DAG on one block of re_han_default characters.
  void cut_block(std::u32string_view block, std::vector<std::u32string>& out) const;
  // The single characters __cut_DAG buffered: one alone, or a known word character by
  // character, or else finalseg.cut.
  void flush_singles(std::u32string_view buf, std::vector<std::u32string>& out) const;

  Dictionary dict_;
  HmmTables hmm_;
};

}  // namespace accel::jieba
