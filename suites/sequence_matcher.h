// A port of Python's difflib.SequenceMatcher (CPython 3.11 Lib/difflib.py) for isjunk=None, over
// any sequence of integer-like elements (code points here): the similarity behind fuzzywuzzy's
// fuzz.ratio when python-Levenshtein is absent (fuzz_ratio.h). Port, not approximation: the
// same b2j index, the same "popular element" autojunk heuristic (on when len(b) >= 200: an
// element occurring more than len(b) // 100 + 1 times in b is dropped from the index, but, as in
// difflib, is not junk, so a longest match may still be extended over it), the same
// find_longest_match tie-breaking (earliest in a, then earliest in b) and the same recursion of
// get_matching_blocks, hence the same ratio() bit for bit.
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace accel {

struct MatchBlock {
  size_t a = 0, b = 0, size = 0;
};

class SequenceMatcher {
 public:
  SequenceMatcher(std::u32string_view a, std::u32string_view b, bool autojunk = true);
  // The longest matching block of a[alo:ahi] and b[blo:bhi], as difflib finds it.
  MatchBlock find_longest_match(size_t alo, size_t ahi, size_t blo, size_t bhi) const;
  // difflib's get_matching_blocks(): sorted, adjacent blocks merged, ending with (la, lb, 0).
  std::vector<MatchBlock> matching_blocks() const;
  // 2 * matches / (len(a) + len(b)); 1.0 when both are empty.
  double ratio() const;
  // Elements dropped from the index by the autojunk heuristic (difflib's bpopular), sorted.
  std::vector<char32_t> popular() const;

 private:
  std::u32string a_, b_;
  // b2j: for each element of b still indexed, its positions in b (ascending). Sorted by element.
  std::vector<std::pair<char32_t, std::vector<size_t>>> b2j_;
  std::vector<char32_t> popular_;
  const std::vector<size_t>* positions(char32_t c) const;
};

}  // namespace accel
