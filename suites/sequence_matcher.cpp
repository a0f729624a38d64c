// difflib.SequenceMatcher (isjunk=None) (sequence_matcher.h). Comments name the
// difflib statements each step reproduces.
#include "suites/sequence_matcher.h"

#include <algorithm>
#include <array>
#include <tuple>

namespace accel {

SequenceMatcher::SequenceMatcher(std::u32string_view a, std::u32string_view b, bool autojunk)
    : a_(a), b_(b) {
  // __chain_b: b2j[elt] = positions of elt in b, in order.
  std::vector<std::pair<char32_t, size_t>> pos;
  pos.reserve(b_.size());
  for (size_t i = 0; i < b_.size(); ++i) pos.emplace_back(b_[i], i);
  std::stable_sort(pos.begin(), pos.end(),
                   [](const auto& x, const auto& y) { return x.first < y.first; });
  for (size_t i = 0; i < pos.size();) {
    size_t j = i;
    std::vector<size_t> idx;
    for (; j < pos.size() && pos[j].first == pos[i].first; ++j) idx.push_back(pos[j].second);
    b2j_.emplace_back(pos[i].first, std::move(idx));
    i = j;
  }
  // Autojunk: "if self.autojunk and n >= 200: ntest = n // 100 + 1", drop elements with more
  // than ntest positions. They are not added to bjunk (which stays empty without isjunk).
  const size_t n = b_.size();
  if (autojunk && n >= 200) {
    const size_t ntest = n / 100 + 1;
    std::vector<std::pair<char32_t, std::vector<size_t>>> kept;
    for (auto& e : b2j_) {
      if (e.second.size() > ntest)
        popular_.push_back(e.first);
      else
        kept.push_back(std::move(e));
    }
    b2j_ = std::move(kept);
  }
}

const std::vector<size_t>* SequenceMatcher::positions(char32_t c) const {
  const auto it = std::lower_bound(b2j_.begin(), b2j_.end(), c,
                                   [](const auto& e, char32_t v) { return e.first < v; });
  return it != b2j_.end() && it->first == c ? &it->second : nullptr;
}

std::vector<char32_t> SequenceMatcher::popular() const {
  return popular_;
}

MatchBlock SequenceMatcher::find_longest_match(size_t alo, size_t ahi, size_t blo,
                                               size_t bhi) const {
  size_t besti = alo, bestj = blo, bestsize = 0;
  // j2len[j]: length of the match ending at a[i-1], b[j], for the previous i only. Stored as
  // len[j + 1] with a stamp saying which i wrote it, so "j2len.get(j - 1, 0)" is one lookup.
  std::vector<size_t> len_prev(b_.size() + 1, 0), len_cur(b_.size() + 1, 0);
  std::vector<size_t> stamp_prev(b_.size() + 1, size_t(-1)), stamp_cur(b_.size() + 1, size_t(-1));
  for (size_t i = alo; i < ahi; ++i) {
    const std::vector<size_t>* js = positions(a_[i]);
    if (js) {
      for (size_t j : *js) {
        if (j < blo) continue;
        if (j >= bhi) break;
        // k = newj2len[j] = j2lenget(j-1, 0) + 1
        const size_t prev = (j > 0 && stamp_prev[j] == i - 1 && i > alo) ? len_prev[j] : 0;
        const size_t k = prev + 1;
        len_cur[j + 1] = k;
        stamp_cur[j + 1] = i;
        if (k > bestsize) {
          besti = i + 1 - k;
          bestj = j + 1 - k;
          bestsize = k;
        }
      }
    }
    std::swap(len_prev, len_cur);  // j2len = newj2len
    std::swap(stamp_prev, stamp_cur);
  }
  // Extend by equal elements on both sides (nothing is junk without isjunk, popular elements
  // included); the two junk-extension loops of difflib then have nothing to do.
  while (besti > alo && bestj > blo && a_[besti - 1] == b_[bestj - 1]) {
    --besti;
    --bestj;
    ++bestsize;
  }
  while (besti + bestsize < ahi && bestj + bestsize < bhi &&
         a_[besti + bestsize] == b_[bestj + bestsize])
    ++bestsize;
  return {besti, bestj, bestsize};
}

std::vector<MatchBlock> SequenceMatcher::matching_blocks() const {
  const size_t la = a_.size(), lb = b_.size();
  std::vector<std::array<size_t, 4>> queue = {{0, la, 0, lb}};
  std::vector<MatchBlock> blocks;
  while (!queue.empty()) {
    const auto [alo, ahi, blo, bhi] = queue.back();
    queue.pop_back();
    const MatchBlock x = find_longest_match(alo, ahi, blo, bhi);
    if (x.size) {
      blocks.push_back(x);
      if (alo < x.a && blo < x.b) queue.push_back({alo, x.a, blo, x.b});
      if (x.a + x.size < ahi && x.b + x.size < bhi)
        queue.push_back({x.a + x.size, ahi, x.b + x.size, bhi});
    }
  }
  std::sort(blocks.begin(), blocks.end(), [](const MatchBlock& p, const MatchBlock& q) {
    return std::tie(p.a, p.b, p.size) < std::tie(q.a, q.b, q.size);
  });
  std::vector<MatchBlock> merged;
  for (const MatchBlock& m : blocks) {
    if (!merged.empty() && merged.back().a + merged.back().size == m.a &&
        merged.back().b + merged.back().size == m.b)
      merged.back().size += m.size;
    else
      merged.push_back(m);
  }
  merged.push_back({la, lb, 0});
  return merged;
}

double SequenceMatcher::ratio() const {
  size_t matches = 0;
  for (const MatchBlock& m : matching_blocks()) matches += m.size;
  const size_t length = a_.size() + b_.size();
  return length ? 2.0 * double(matches) / double(length) : 1.0;  // _calculate_ratio
}

}  // namespace accel
