// The sentence rule of ruler_sentences.h.
#include "suites/ruler_sentences.h"

#include <algorithm>
#include <array>
#include <string>

#include "suites/ruler_text.h"

namespace accel::ruler {

namespace {

// Lowercase, without the final period. Punkt's English model knows many more; these are the ones
// that occur in edited English prose.
constexpr std::string_view kAbbreviations[] = {
    "a.m", "al",   "approx", "apr",  "aug", "ca",  "capt", "cf",  "co",   "col", "corp",
    "dec", "dept", "dr",     "e.g",  "ed",  "eds", "esp",  "est", "etc",  "feb", "fig",
    "gen", "gov",  "i.e",    "inc",  "jan", "jr",  "jul",  "jun", "lt",   "ltd", "mar",
    "mr",  "mrs",  "ms",     "mt",   "no",  "nov", "oct",  "p.m", "ph.d", "pp",  "prof",
    "rev", "sen",  "sep",    "sept", "sr",  "st",  "u.k",  "u.s"};

bool closing(char c) {
  return c == '"' || c == '\'' || c == ')' || c == ']' || c == '}';
}

// The token without trailing closing quotes/brackets (ASCII and the curly ’ ” »).
std::string_view strip_closers(std::string_view t) {
  for (;;) {
    if (!t.empty() && closing(t.back())) {
      t.remove_suffix(1);
    } else if (t.size() >= 3 && (t.substr(t.size() - 3) == "\xe2\x80\x99" ||
                                 t.substr(t.size() - 3) == "\xe2\x80\x9d")) {
      t.remove_suffix(3);
    } else if (t.size() >= 2 && t.substr(t.size() - 2) == "\xc2\xbb") {
      t.remove_suffix(2);
    } else {
      return t;
    }
  }
}

bool starts_lowercase(std::string_view t) {
  // Skip opening quotes/brackets, as Punkt's first-letter test does on the word type.
  size_t i = 0;
  while (i < t.size() && (t[i] == '"' || t[i] == '\'' || t[i] == '(' || t[i] == '[')) ++i;
  return i < t.size() && t[i] >= 'a' && t[i] <= 'z';
}

bool is_number(std::string_view w) {
  bool digit = false;
  for (char c : w) {
    if (c >= '0' && c <= '9') {
      digit = true;
    } else if (c != ',' && c != '.' && c != '-') {
      return false;
    }
  }
  return digit;
}

bool ends_sentence(std::string_view tok, std::string_view next) {
  const std::string_view core = strip_closers(tok);
  if (core.empty()) return false;
  const char end = core.back();
  if (end == '?' || end == '!') return true;
  if (end != '.') return false;
  std::string_view word = core.substr(0, core.size() - 1);
  while (!word.empty() && (word.front() == '"' || word.front() == '\'' || word.front() == '(' ||
                           word.front() == '['))
    word.remove_prefix(1);
  if (!word.empty() && word.back() == '.') return !starts_lowercase(next);  // ellipsis
  if (is_number(word)) return !starts_lowercase(next);
  std::string lower;
  for (char c : word) lower += (c >= 'A' && c <= 'Z') ? char(c + 32) : c;
  if (std::find(std::begin(kAbbreviations), std::end(kAbbreviations), lower) !=
      std::end(kAbbreviations))
    return false;
  const auto alpha = [](char c) { return (c >= 'a' && c <= 'z'); };
  if (lower.size() == 1 && alpha(lower[0])) return false;  // an initial
  // Dotted letters: a.m, u.s.a
  bool dotted = lower.size() >= 3;
  for (size_t i = 0; i < lower.size() && dotted; ++i)
    dotted = (i % 2 == 0) ? alpha(lower[i]) : lower[i] == '.';
  return !dotted;
}

}  // namespace

std::vector<std::string_view> split_sentences(std::string_view text) {
  // Tokens as [begin, end) byte ranges.
  std::vector<std::pair<size_t, size_t>> toks;
  for (size_t i = 0; i < text.size();) {
    size_t n;
    while (i < text.size() && (n = space_len(text, i))) i += n;
    if (i >= text.size()) break;
    const size_t b = i;
    while (i < text.size() && !space_len(text, i)) ++i;
    toks.emplace_back(b, i);
  }
  std::vector<std::string_view> out;
  size_t start = 0;  // first token of the current sentence
  for (size_t t = 0; t < toks.size(); ++t) {
    const bool last = t + 1 == toks.size();
    const auto tok = text.substr(toks[t].first, toks[t].second - toks[t].first);
    if (last || ends_sentence(
                    tok, text.substr(toks[t + 1].first, toks[t + 1].second - toks[t + 1].first))) {
      out.push_back(text.substr(toks[start].first, toks[t].second - toks[start].first));
      start = t + 1;
    }
  }
  return out;
}

}  // namespace accel::ruler
