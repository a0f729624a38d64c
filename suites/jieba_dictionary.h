// jieba's prefix dictionary (jieba/dict.txt as jieba 0.42.1's Tokenizer.gen_pfdict reads it):
// each word's frequency, every prefix of a word present with frequency 0, and the total, held as
// a code-point trie. Owns parsing and lookup; it must not segment text (jieba_segmenter.h does).
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "suites/jieba_error.h"

namespace accel::jieba {

class Dictionary {
 public:
  using Node = uint32_t;
  static constexpr Node kRoot = 0;
  static constexpr Node kNone = UINT32_MAX;

  // Reads dict.txt: lines "word freq[ tag...]" (bytes stripped of ASCII whitespace, fields split
  // on single spaces, UTF-8). A later line for the same word replaces its frequency and both
  // count towards the total, as in gen_pfdict. Stricter than Python where Python would accept
  // odd input: the frequency must be ASCII digits, and the total must be positive. Throws
  // DataError naming the file and line.
  static Dictionary load(const std::string& path);
  // The same from text in memory; `name` is what errors call it.
  static Dictionary parse(std::string_view text, const std::string& name);

  // The trie node of `prefix` + c, or kNone when that string is not in FREQ.
  Node child(Node node, char32_t c) const;
  // The node of `word`, or kNone (kRoot for "", which is not a key of FREQ).
  Node find(std::u32string_view word) const;
  // FREQ[word] for the node's string: 0 for a prefix that is not a word (or a word given 0).
  int64_t freq(Node n) const { return freq_[n]; }
  // log(FREQ.get(w) or 1) - log(total), what calc adds for word w, computed in that order.
  double log_weight(Node n) const { return log_weight_[n]; }
  // -log(total): the weight of a character that is not a word (log(1) - log(total)).
  double unknown_weight() const { return unknown_weight_; }
  int64_t total() const { return total_; }
  size_t lines() const { return lines_; }
  size_t nodes() const { return freq_.size(); }

 private:
  Node add_child(Node node, char32_t c);
  void grow_table();

  struct Slot {
    uint64_t key;  // (parent node << 21) | code point; all ones when free
    Node child;
  };
  std::vector<int64_t> freq_;       // per node
  std::vector<double> log_weight_;  // per node, filled once the total is known
  std::vector<Slot> slots_;         // open addressing with linear probing, a power of two
  size_t used_slots_ = 0;
  int64_t total_ = 0;
  double unknown_weight_ = 0;
  size_t lines_ = 0;
};

}  // namespace accel::jieba
