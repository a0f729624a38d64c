// A port of Python's difflib.SequenceMatcher (CPython 3.11 Lib/difflib.py) for isjunk=None, over
// any sequence of integer-like elements (code points here), and fuzzywuzzy's fuzz.ratio on top
// of it, the similarity LongBench's code tasks are scored with. Port, not approximation: the
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

// fuzzywuzzy fuzz.ratio(s1, s2) with difflib's matcher (what fuzzywuzzy uses when
// python-Levenshtein is not installed, as in LongBench's requirements.txt): 100 when the strings
// are equal (two empty strings included), 0 when either is empty, else
// int(round(100 * SequenceMatcher(None, s1, s2).ratio())) with Python's round-half-even.
int fuzz_ratio(std::u32string_view s1, std::u32string_view s2);

// Python's round(x) for a float: nearest integer, ties to even.
double py_round(double x);

}  // namespace accel
