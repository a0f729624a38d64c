// finalseg.cut (jieba_finalseg.h): Viterbi with Python's tie rules, the B/E/S reading of the
// path, and re_skip's split of the text between Han runs.
#include "suites/jieba_finalseg.h"

#include <array>

namespace accel::jieba {

namespace {

bool is_han(char32_t c) {  // finalseg's re_han
  return c >= HmmTables::kFirstHan && c <= HmmTables::kLastHan;
}
bool ascii_alnum(char32_t c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}
bool ascii_digit(char32_t c) {
  return c >= '0' && c <= '9';
}

// finalseg.PrevStatus: the states each state may follow.
constexpr std::array<std::array<State, 2>, 4> kPrev = {{
    {kE, kS},  // B
    {kB, kM},  // E
    {kM, kB},  // M
    {kS, kE},  // S
}};

// The end of re_skip's match starting at s[i] (an ASCII letter or digit). Each quantifier is
// greedy and the rest of the pattern is optional, so the greedy reading is the match. Python's
// \d would also match non-ASCII decimals, but cut() only hands this Han and ASCII text (the blocks
// of re_han_default), so ASCII digits are the whole of \d here.
size_t skip_match_end(std::u32string_view s, size_t i) {
  while (i < s.size() && ascii_alnum(s[i])) ++i;
  if (i + 1 < s.size() && s[i] == U'.' && ascii_digit(s[i + 1])) {
    i += 2;
    while (i < s.size() && ascii_digit(s[i])) ++i;
  }
  if (i < s.size() && s[i] == U'%') ++i;
  return i;
}

// re_skip.split(blk), keeping the non-empty pieces: the matches and the text between them.
void skip_split(std::u32string_view blk, std::vector<std::u32string>& out) {
  size_t text_start = 0, k = 0;
  while (k < blk.size()) {
    if (!ascii_alnum(blk[k])) {
      ++k;
      continue;
    }
    if (k > text_start) out.emplace_back(blk.substr(text_start, k - text_start));
    const size_t e = skip_match_end(blk, k);
    out.emplace_back(blk.substr(k, e - k));
    k = text_start = e;
  }
  if (blk.size() > text_start) out.emplace_back(blk.substr(text_start));
}

// finalseg.__cut: B opens a word, E closes it, S is a word alone, M continues; text after the
// last E or S is one word.
void hmm_cut(const HmmTables& hmm, std::u32string_view run, std::vector<std::u32string>& out) {
  const std::vector<State> path = viterbi_path(hmm, run);
  size_t begin = 0, next = 0;
  for (size_t i = 0; i < run.size(); ++i) {
    if (path[i] == kB) {
      begin = i;
    } else if (path[i] == kE) {
      out.emplace_back(run.substr(begin, i + 1 - begin));
      next = i + 1;
    } else if (path[i] == kS) {
      out.emplace_back(1, run[i]);
      next = i + 1;
    }
  }
  if (next < run.size()) out.emplace_back(run.substr(next));
}

}  // namespace

std::vector<State> viterbi_path(const HmmTables& hmm, std::u32string_view obs) {
  const size_t n = obs.size();
  std::vector<std::array<State, 4>> back(n);  // back[t][y]: the best state before y at t
  std::array<double, 4> v{};
  for (size_t y = 0; y < 4; ++y) v[y] = hmm.start[y] + hmm.emission(State(y), obs[0]);
  for (size_t t = 1; t < n; ++t) {
    std::array<double, 4> next{};
    for (size_t y = 0; y < 4; ++y) {
      const double em = hmm.emission(State(y), obs[t]);
      // max((V[t-1][y0] + trans_p[y0].get(y, MIN_FLOAT) + em_p, y0) for y0 in PrevStatus[y]):
      // the larger sum, and on equal sums (common once MIN_FLOAT absorbs the small terms) the
      // later state letter.
      State best_state = kPrev[y][0];
      double best = v[best_state] + hmm.trans[best_state][y] + em;
      const State other = kPrev[y][1];
      const double p = v[other] + hmm.trans[other][y] + em;
      if (p > best || (p == best && other > best_state)) {
        best = p;
        best_state = other;
      }
      next[y] = best;
      back[t][y] = best_state;
    }
    v = next;
  }
  // max((V[-1][y], y) for y in 'ES'): 'S' on a tie.
  State s = v[kS] >= v[kE] ? kS : kE;
  std::vector<State> path(n);
  for (size_t t = n; t-- > 0;) {
    path[t] = s;
    if (t > 0) s = back[t][s];
  }
  return path;
}

void finalseg_cut(const HmmTables& hmm, std::u32string_view s, std::vector<std::u32string>& out) {
  // re_han.split(s): Han runs go to Viterbi, the pieces between them to re_skip.
  size_t i = 0;
  while (i < s.size()) {
    const bool han = is_han(s[i]);
    size_t j = i;
    while (j < s.size() && is_han(s[j]) == han) ++j;
    if (han)
      hmm_cut(hmm, s.substr(i, j - i), out);
    else
      skip_split(s.substr(i, j - i), out);
    i = j;
  }
}

}  // namespace accel::jieba
