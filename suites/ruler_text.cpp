// Python string semantics over UTF-8 (ruler_text.h), built on python_text.h's decoder and
// character classes.
#include "suites/ruler_text.h"

#include <algorithm>
#include <stdexcept>

#include "suites/python_text.h"

namespace accel::ruler {

size_t utf8_code_points(std::string_view s) {
  size_t n = 0;
  for (char c : s) n += (uint8_t(c) & 0xc0) != 0x80;
  return n;
}

size_t space_len(std::string_view s, size_t i) {
  const uint8_t c = uint8_t(s[i]);
  if (c < 0x80) return pytext::py_isspace(c) ? 1 : 0;
  if (c != 0xc2 && c != 0xe1 && c != 0xe2 && c != 0xe3) return 0;  // lead bytes of the set
  const pytext::Utf8Step st = pytext::utf8_step(s, i);
  return st.valid && pytext::py_isspace(st.cp) ? st.len : 0;
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
