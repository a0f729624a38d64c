// Python str semantics over code points (python_text.h). The character data is generated
// (python_text_tables.inc); this file only looks it up and applies CPython's rules around it.
#include "suites/python_text.h"

#include <algorithm>
#include <cstdint>
#include <iterator>

namespace accel::pytext {

namespace {

struct Range {
  char32_t lo, hi;
};
struct LowerRun {
  char32_t first, last;
  int stride, delta;
};
struct MultiLower {
  char32_t from;
  char32_t to[3];
};

#include "suites/python_text_tables.inc"

template <size_t N>
bool in_ranges(const Range (&t)[N], char32_t c) {
  const Range* it = std::upper_bound(std::begin(t), std::end(t), c,
                                     [](char32_t v, const Range& r) { return v < r.lo; });
  return it != std::begin(t) && c <= (it - 1)->hi;
}

// CPython's handle_capital_sigma: U+03A3 at i is final when a cased letter precedes it (skipping
// case-ignorable ones) and none follows it (likewise).
bool final_sigma(std::u32string_view s, size_t i) {
  size_t j = i;
  while (j > 0 && in_ranges(kCaseIgnorable, s[j - 1])) --j;
  if (j == 0 || !in_ranges(kCasedNotIgnorable, s[j - 1])) return false;
  size_t k = i + 1;
  while (k < s.size() && in_ranges(kCaseIgnorable, s[k])) ++k;
  return k == s.size() || !in_ranges(kCasedNotIgnorable, s[k]);
}

// Appends the lowercase of `c` (any code point but U+03A3).
void append_lower(U32& out, char32_t c) {
  if (c < 0x80) {
    out.push_back(c >= 'A' && c <= 'Z' ? c + 32 : c);
    return;
  }
  for (const MultiLower& m : kMultiLower) {
    if (m.from != c) continue;
    for (char32_t t : m.to)
      if (t) out.push_back(t);
    return;
  }
  const LowerRun* it = std::upper_bound(std::begin(kLowerRuns), std::end(kLowerRuns), c,
                                        [](char32_t v, const LowerRun& r) { return v < r.first; });
  if (it != std::begin(kLowerRuns)) {
    const LowerRun& r = *(it - 1);
    if (c <= r.last && (c - r.first) % char32_t(r.stride) == 0) {
      out.push_back(char32_t(int64_t(c) + r.delta));
      return;
    }
  }
  out.push_back(c);
}

}  // namespace

Utf8Step utf8_step(std::string_view s, size_t i) {
  const auto byte = [&](size_t k) { return uint8_t(s[i + k]); };
  const uint8_t c0 = byte(0);
  if (c0 < 0x80) return {c0, 1, true};
  size_t need = 0;
  char32_t cp = 0;
  uint8_t lo = 0x80, hi = 0xBF;  // the range allowed for the second byte
  if (c0 >= 0xC2 && c0 <= 0xDF) {
    need = 1, cp = c0 & 0x1F;
  } else if (c0 >= 0xE0 && c0 <= 0xEF) {
    need = 2, cp = c0 & 0x0F;
    if (c0 == 0xE0) lo = 0xA0;  // no overlongs
    if (c0 == 0xED) hi = 0x9F;  // no surrogates
  } else if (c0 >= 0xF0 && c0 <= 0xF4) {
    need = 3, cp = c0 & 0x07;
    if (c0 == 0xF0) lo = 0x90;  // no overlongs
    if (c0 == 0xF4) hi = 0x8F;  // nothing above U+10FFFF
  } else {
    return {0, 1, false};
  }
  for (size_t k = 1; k <= need; ++k) {
    if (i + k >= s.size()) return {0, k, false};
    const uint8_t ck = byte(k);
    if (ck < (k == 1 ? lo : 0x80) || ck > (k == 1 ? hi : 0xBF)) return {0, k, false};
    cp = (cp << 6) | (ck & 0x3F);
  }
  return {cp, need + 1, true};
}

U32 utf8_decode_lossy(std::string_view s) {
  U32 out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    const Utf8Step st = utf8_step(s, i);
    out.push_back(st.valid ? st.cp : U'\uFFFD');
    i += st.len;
  }
  return out;
}

size_t utf8_invalid_at(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    const Utf8Step st = utf8_step(s, i);
    if (!st.valid) return i;
    i += st.len;
  }
  return std::string_view::npos;
}

void utf8_append(std::string& out, char32_t c) {
  if (c < 0x80) {
    out.push_back(char(c));
  } else if (c < 0x800) {
    out.push_back(char(0xC0 | (c >> 6)));
    out.push_back(char(0x80 | (c & 0x3F)));
  } else if (c < 0x10000) {
    out.push_back(char(0xE0 | (c >> 12)));
    out.push_back(char(0x80 | ((c >> 6) & 0x3F)));
    out.push_back(char(0x80 | (c & 0x3F)));
  } else {
    out.push_back(char(0xF0 | (c >> 18)));
    out.push_back(char(0x80 | ((c >> 12) & 0x3F)));
    out.push_back(char(0x80 | ((c >> 6) & 0x3F)));
    out.push_back(char(0x80 | (c & 0x3F)));
  }
}

std::string utf8_encode(std::u32string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char32_t c : s) utf8_append(out, c);
  return out;
}

std::string utf8_sanitize(std::string_view s) {
  return utf8_invalid_at(s) == std::string_view::npos ? std::string(s)
                                                      : utf8_encode(utf8_decode_lossy(s));
}

bool py_isspace(char32_t c) {
  if (c < 0x80) return c == ' ' || (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x1F);
  return in_ranges(kSpace, c);
}

bool py_isdecimal(char32_t c) {
  if (c < 0x80) return c >= '0' && c <= '9';
  return in_ranges(kDecimal, c);
}

bool py_isword(char32_t c) {
  if (c < 0x80)
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
  return in_ranges(kWord, c);
}

U32 py_lower(std::u32string_view s) {
  U32 out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == 0x3A3)
      out.push_back(final_sigma(s, i) ? 0x3C2 : 0x3C3);
    else
      append_lower(out, s[i]);
  }
  return out;
}

std::string py_lower(std::string_view utf8) {
  return utf8_encode(py_lower(utf8_decode_lossy(utf8)));
}

}  // namespace accel::pytext
