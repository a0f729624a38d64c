// Python string semantics and the normalisations of LongBench's metrics.py (longbench_text.h).
#include "suites/longbench_text.h"

#include <algorithm>

namespace accel::longbench {

namespace {

bool ascii_punct(char32_t c) {  // string.punctuation: !"#$%&'()*+,-./:;<=>?@[\]^_`{|}~
  return (c >= 0x21 && c <= 0x2F) || (c >= 0x3A && c <= 0x40) || (c >= 0x5B && c <= 0x60) ||
         (c >= 0x7B && c <= 0x7E);
}

// metrics.py normalize_zh_answer's cn_punctuation, code point by code point (75 characters).
constexpr char32_t kZhPunct[] = {
    0xFF01, 0xFF1F, 0xFF61, 0x3002, 0xFF02, 0xFF03, 0xFF04, 0xFF05, 0xFF06, 0xFF07, 0xFF08,
    0xFF09, 0xFF0A, 0xFF0B, 0xFF0C, 0xFF0D, 0xFF0F, 0xFF1A, 0xFF1B, 0xFF1C, 0xFF1D, 0xFF1E,
    0xFF20, 0xFF3B, 0xFF3C, 0xFF3D, 0xFF3E, 0xFF3F, 0xFF40, 0xFF5B, 0xFF5C, 0xFF5D, 0xFF5E,
    0xFF5F, 0xFF60, 0xFF62, 0xFF63, 0xFF64, 0x3001, 0x3003, 0x300B, 0x300C, 0x300D, 0x300E,
    0x300F, 0x3010, 0x3011, 0x3014, 0x3015, 0x3016, 0x3017, 0x3018, 0x3019, 0x301A, 0x301B,
    0x301C, 0x301D, 0x301E, 0x301F, 0x3030, 0x303E, 0x303F, 0x2013, 0x2014, 0x2018, 0x2019,
    0x201B, 0x201C, 0x201D, 0x201E, 0x201F, 0x2026, 0x2027, 0xFE4F, 0x2E};

bool zh_punct(char32_t c) {
  return ascii_punct(c) ||
         std::find(std::begin(kZhPunct), std::end(kZhPunct), c) != std::end(kZhPunct);
}

bool is_han(char32_t c) {
  return c >= 0x4E00 && c <= 0x9FD5;
}
bool ascii_alnum(char32_t c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}
// jieba's re_han_default: [\u4E00-\u9FD5a-zA-Z0-9+#&\._%\-]
bool han_default(char32_t c) {
  return is_han(c) || ascii_alnum(c) || c == '+' || c == '#' || c == '&' || c == '.' || c == '_' ||
         c == '%' || c == '-';
}

// finalseg's re_skip [a-zA-Z0-9]+(?:\.\d+)?%? matched at s[i] (s[i] is ASCII alphanumeric):
// the end of the match (all quantifiers greedy; no backtracking can lengthen it).
size_t skip_match_end(std::u32string_view s, size_t i) {
  while (i < s.size() && ascii_alnum(s[i])) ++i;
  if (i + 1 < s.size() && s[i] == '.' && py_isdecimal(s[i + 1])) {
    ++i;
    while (i < s.size() && py_isdecimal(s[i])) ++i;
  }
  if (i < s.size() && s[i] == '%') ++i;
  return i;
}

// finalseg.cut on a block of han_default characters: Han runs (approximated: one token per
// character where the HMM would run Viterbi), re_skip matches whole, and the non-empty text
// between matches whole.
void finalseg_cut(std::u32string_view s, std::vector<U32>& out) {
  size_t i = 0;
  while (i < s.size()) {
    if (is_han(s[i])) {
      for (; i < s.size() && is_han(s[i]); ++i) out.emplace_back(1, s[i]);
      continue;
    }
    size_t j = i;
    while (j < s.size() && !is_han(s[j])) ++j;  // a non-Han block [i, j): re_skip.split
    size_t k = i, text_start = i;
    while (k < j) {
      if (ascii_alnum(s[k])) {
        if (k > text_start) out.emplace_back(s.substr(text_start, k - text_start));
        const size_t e = std::min(skip_match_end(s, k), j);
        out.emplace_back(s.substr(k, e - k));
        k = text_start = e;
      } else {
        ++k;
      }
    }
    if (j > text_start) out.emplace_back(s.substr(text_start, j - text_start));
    i = j;
  }
}

}  // namespace

std::vector<U32> py_split_whitespace(std::u32string_view s) {
  std::vector<U32> out;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && py_isspace(s[i])) ++i;
    const size_t b = i;
    while (i < s.size() && !py_isspace(s[i])) ++i;
    if (i > b) out.emplace_back(s.substr(b, i - b));
  }
  return out;
}

std::vector<U32> py_split(std::u32string_view s, std::u32string_view sep) {
  std::vector<U32> out;
  size_t b = 0;
  for (size_t p = s.find(sep); p != std::u32string_view::npos; p = s.find(sep, b)) {
    out.emplace_back(s.substr(b, p - b));
    b = p + sep.size();
  }
  out.emplace_back(s.substr(b));
  return out;
}

std::u32string_view py_lstrip(std::u32string_view s, char32_t c) {
  size_t i = 0;
  while (i < s.size() && s[i] == c) ++i;
  return s.substr(i);
}

bool py_contains(std::u32string_view hay, std::u32string_view needle) {
  return hay.find(needle) != std::u32string_view::npos;
}

std::vector<U32> findall_digits(std::u32string_view s) {
  std::vector<U32> out;
  size_t i = 0;
  while (i < s.size()) {
    if (!py_isdecimal(s[i])) {
      ++i;
      continue;
    }
    const size_t b = i;
    while (i < s.size() && py_isdecimal(s[i])) ++i;
    out.emplace_back(s.substr(b, i - b));
  }
  return out;
}

U32 first_line(std::u32string_view s) {
  const std::u32string_view t = py_lstrip(s, U'\n');
  return U32(t.substr(0, t.find(U'\n')));
}

U32 normalize_answer(std::u32string_view s) {
  const U32 lower = py_lower(s);
  U32 nopunct;
  for (char32_t c : lower)
    if (!ascii_punct(c)) nopunct.push_back(c);
  // \b(a|an|the)\b: a match is exactly a maximal run of word characters equal to an article.
  U32 noart;
  size_t i = 0;
  while (i < nopunct.size()) {
    if (!py_isword(nopunct[i])) {
      noart.push_back(nopunct[i++]);
      continue;
    }
    const size_t b = i;
    while (i < nopunct.size() && py_isword(nopunct[i])) ++i;
    const std::u32string_view run(nopunct.data() + b, i - b);
    if (run == U"a" || run == U"an" || run == U"the")
      noart.push_back(U' ');
    else
      noart.append(run);
  }
  U32 out;
  for (const U32& w : py_split_whitespace(noart)) {
    if (!out.empty()) out.push_back(U' ');
    out += w;
  }
  return out;
}

U32 normalize_zh_answer(std::u32string_view s) {
  U32 out;
  for (char32_t c : py_lower(s))
    if (!zh_punct(c) && !py_isspace(c)) out.push_back(c);
  return out;
}

std::vector<U32> char_cut(std::u32string_view s) {
  std::vector<U32> out;
  size_t i = 0;
  while (i < s.size()) {
    if (han_default(s[i])) {  // a re_han_default block: __cut_DAG with no dictionary word
      const size_t b = i;
      while (i < s.size() && han_default(s[i])) ++i;
      finalseg_cut(s.substr(b, i - b), out);
      continue;
    }
    // Other text: re_skip_default "(\r\n|\s)" pieces are tokens; everything else one character
    // at a time.
    if (s[i] == U'\r' && i + 1 < s.size() && s[i + 1] == U'\n') {
      out.emplace_back(U"\r\n");
      i += 2;
    } else {
      out.emplace_back(1, s[i]);
      ++i;
    }
  }
  return out;
}

}  // namespace accel::longbench
