// Python string semantics over UTF-8 (ruler_text.h). str.lower() comes from tables generated
// from CPython (ruler_lower_table.h); the decoder follows the Unicode "maximal subpart" rule that
// CPython's UTF-8 decoder applies with errors="replace".
#include "suites/ruler_text.h"

#include <algorithm>
#include <stdexcept>

namespace accel::ruler {

namespace {

struct LowerRun {
  uint32_t first, last;
  int stride, delta;
};
struct MultiLower {
  uint32_t cp;
  uint32_t lower[3];
};
struct CpRange {
  uint32_t first, last;
};

#include "suites/ruler_lower_table.h"

template <size_t N>
bool in_ranges(const CpRange (&r)[N], uint32_t cp) {
  const auto* it = std::upper_bound(std::begin(r), std::end(r), cp,
                                    [](uint32_t c, const CpRange& x) { return c < x.first; });
  return it != std::begin(r) && cp <= (it - 1)->last;
}

// Returns the lowercase of a code point other than U+03A3; `extra` receives a second code point
// for the one-to-many mappings (0 when none).
uint32_t lower_cp(uint32_t cp, uint32_t& extra) {
  extra = 0;
  if (cp < 0x80) return (cp >= 'A' && cp <= 'Z') ? cp + 32 : cp;
  for (const MultiLower& m : kMultiLower)
    if (m.cp == cp) {
      extra = m.lower[1];
      return m.lower[0];
    }
  const auto* it = std::upper_bound(std::begin(kLowerRuns), std::end(kLowerRuns), cp,
                                    [](uint32_t c, const LowerRun& r) { return c < r.first; });
  if (it == std::begin(kLowerRuns)) return cp;
  const LowerRun& r = *(it - 1);
  if (cp > r.last || (cp - r.first) % uint32_t(r.stride) != 0) return cp;
  return uint32_t(int64_t(cp) + r.delta);
}

}  // namespace

size_t utf8_next(std::string_view s, size_t i, uint32_t& cp) {
  const auto b = [&](size_t k) { return uint8_t(s[i + k]); };
  const size_t n = s.size() - i;
  const uint8_t c = b(0);
  if (c < 0x80) return cp = c, 1;
  size_t len;
  uint8_t lo = 0x80, hi = 0xbf;
  if (c >= 0xc2 && c <= 0xdf) {
    len = 2, cp = c & 0x1f;
  } else if (c >= 0xe0 && c <= 0xef) {
    len = 3, cp = c & 0x0f;
    if (c == 0xe0) lo = 0xa0;
    if (c == 0xed) hi = 0x9f;
  } else if (c >= 0xf0 && c <= 0xf4) {
    len = 4, cp = c & 0x07;
    if (c == 0xf0) lo = 0x90;
    if (c == 0xf4) hi = 0x8f;
  } else {
    return 0;
  }
  if (n < len) return 0;
  for (size_t k = 1; k < len; ++k) {
    const uint8_t x = b(k);
    if (x < (k == 1 ? lo : 0x80) || x > (k == 1 ? hi : 0xbf)) return 0;
    cp = (cp << 6) | (x & 0x3f);
  }
  return len;
}

void utf8_append(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out += char(cp);
  } else if (cp < 0x800) {
    out += char(0xc0 | (cp >> 6));
    out += char(0x80 | (cp & 0x3f));
  } else if (cp < 0x10000) {
    out += char(0xe0 | (cp >> 12));
    out += char(0x80 | ((cp >> 6) & 0x3f));
    out += char(0x80 | (cp & 0x3f));
  } else {
    out += char(0xf0 | (cp >> 18));
    out += char(0x80 | ((cp >> 12) & 0x3f));
    out += char(0x80 | ((cp >> 6) & 0x3f));
    out += char(0x80 | (cp & 0x3f));
  }
}

size_t utf8_invalid_at(std::string_view s) {
  uint32_t cp;
  for (size_t i = 0; i < s.size();) {
    const size_t n = utf8_next(s, i, cp);
    if (n == 0) return i;
    i += n;
  }
  return std::string_view::npos;
}

std::string utf8_replace_invalid(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  uint32_t cp;
  for (size_t i = 0; i < s.size();) {
    const size_t n = utf8_next(s, i, cp);
    if (n) {
      out.append(s.substr(i, n));
      i += n;
      continue;
    }
    // The maximal subpart: a valid lead byte and the continuation bytes that still fit it.
    const uint8_t c = uint8_t(s[i]);
    size_t want = c >= 0xc2 && c <= 0xdf   ? 2
                  : c >= 0xe0 && c <= 0xef ? 3
                  : c >= 0xf0 && c <= 0xf4 ? 4
                                           : 1;
    size_t k = 1;
    for (; k < want && i + k < s.size(); ++k) {
      const uint8_t x = uint8_t(s[i + k]);
      uint8_t lo = 0x80, hi = 0xbf;
      if (k == 1 && c == 0xe0) lo = 0xa0;
      if (k == 1 && c == 0xed) hi = 0x9f;
      if (k == 1 && c == 0xf0) lo = 0x90;
      if (k == 1 && c == 0xf4) hi = 0x8f;
      if (x < lo || x > hi) break;
    }
    out += "\xef\xbf\xbd";
    i += k;
  }
  return out;
}

size_t utf8_code_points(std::string_view s) {
  size_t n = 0;
  for (char c : s) n += (uint8_t(c) & 0xc0) != 0x80;
  return n;
}

bool py_isspace(uint32_t cp) {
  return (cp >= 0x09 && cp <= 0x0d) || (cp >= 0x1c && cp <= 0x20) || cp == 0x85 || cp == 0xa0 ||
         cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200a) || cp == 0x2028 || cp == 0x2029 ||
         cp == 0x202f || cp == 0x205f || cp == 0x3000;
}

size_t space_len(std::string_view s, size_t i) {
  const uint8_t c = uint8_t(s[i]);
  if (c < 0x80) return py_isspace(c) ? 1 : 0;
  if (c != 0xc2 && c != 0xe1 && c != 0xe2 && c != 0xe3) return 0;  // lead bytes of the set
  uint32_t cp;
  const size_t n = utf8_next(s, i, cp);
  return n && py_isspace(cp) ? n : 0;
}

std::string_view py_strip(std::string_view s) {
  size_t b = 0;
  while (b < s.size()) {
    const size_t n = space_len(s, b);
    if (!n) break;
    b += n;
  }
  size_t e = s.size();
  while (e > b) {
    size_t k = e - 1;  // start of the last code point
    while (k > b && (uint8_t(s[k]) & 0xc0) == 0x80) --k;
    if (space_len(s, k) != e - k) break;
    e = k;
  }
  return s.substr(b, e - b);
}

std::string py_lower(std::string_view s) {
  std::vector<uint32_t> cps;
  cps.reserve(s.size());
  uint32_t cp;
  for (size_t i = 0; i < s.size();) {
    const size_t n = utf8_next(s, i, cp);
    cps.push_back(n ? cp : 0xfffd);
    i += n ? n : 1;
  }
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < cps.size(); ++i) {
    if (cps[i] == 0x3a3) {
      // CPython handle_capital_sigma: final when a cased letter precedes (skipping
      // case-ignorables) and none follows.
      size_t j = i;
      while (j > 0 && in_ranges(kCaseIgnorable, cps[j - 1])) --j;
      bool final_sigma = j > 0 && in_ranges(kCasedNotIgnorable, cps[j - 1]);
      if (final_sigma) {
        size_t k = i + 1;
        while (k < cps.size() && in_ranges(kCaseIgnorable, cps[k])) ++k;
        final_sigma = k == cps.size() || !in_ranges(kCasedNotIgnorable, cps[k]);
      }
      utf8_append(out, final_sigma ? 0x3c2 : 0x3c3);
      continue;
    }
    uint32_t extra;
    utf8_append(out, lower_cp(cps[i], extra));
    if (extra) utf8_append(out, extra);
  }
  return out;
}

std::vector<std::string> py_collapse_split(std::string_view s) {
  std::vector<std::string> words(1);
  for (size_t i = 0; i < s.size();) {
    size_t n = space_len(s, i);
    if (n) {
      while (i < s.size() && (n = space_len(s, i))) i += n;
      words.emplace_back();
      continue;
    }
    words.back() += s[i++];
  }
  return words;
}

std::vector<std::string_view> py_split(std::string_view s) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < s.size()) {
    size_t n;
    while (i < s.size() && (n = space_len(s, i))) i += n;
    if (i >= s.size()) break;
    const size_t b = i;
    while (i < s.size() && !space_len(s, i)) ++i;
    out.push_back(s.substr(b, i - b));
  }
  return out;
}

std::string py_replace(std::string_view s, std::string_view from, std::string_view to) {
  if (from.empty()) throw std::logic_error("py_replace: empty pattern");
  std::string out;
  size_t i = 0;
  for (size_t at; (at = s.find(from, i)) != std::string_view::npos; i = at + from.size()) {
    out.append(s.substr(i, at - i));
    out.append(to);
  }
  out.append(s.substr(i));
  return out;
}

std::string py_format(std::string_view t, const std::map<std::string, std::string>& kw) {
  std::string out;
  for (size_t i = 0; i < t.size(); ++i) {
    const char c = t[i];
    if ((c == '{' || c == '}') && i + 1 < t.size() && t[i + 1] == c) {
      out += c;
      ++i;
    } else if (c == '{') {
      const size_t e = t.find('}', i);
      if (e == std::string_view::npos) throw std::logic_error("py_format: unclosed '{'");
      const std::string name(t.substr(i + 1, e - i - 1));
      const auto it = kw.find(name);
      if (it == kw.end()) throw std::logic_error("py_format: no value for field '" + name + "'");
      out += it->second;
      i = e;
    } else if (c == '}') {
      throw std::logic_error("py_format: single '}'");
    } else {
      out += c;
    }
  }
  return out;
}

std::string join(const std::vector<std::string>& parts, std::string_view sep) {
  return join(parts, sep, 0, parts.size());
}

std::string join(const std::vector<std::string>& parts, std::string_view sep, size_t begin,
                 size_t end) {
  end = std::min(end, parts.size());
  std::string out;
  size_t n = 0;
  for (size_t i = begin; i < end; ++i) n += parts[i].size() + sep.size();
  out.reserve(n);
  for (size_t i = begin; i < end; ++i) {
    if (i > begin) out.append(sep);
    out.append(parts[i]);
  }
  return out;
}

}  // namespace accel::ruler
