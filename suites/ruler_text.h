// Python string semantics the RULER generators and metrics rely on, over UTF-8 bytes: whitespace
// as str.isspace() and re's \s see it, str.strip/lower/split/replace/format, and UTF-8 checks.
// Byte offsets are used throughout; code-point offsets only where RULER stores one.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace accel::ruler {

// Length (1..4) of the valid UTF-8 sequence at s[i] and its code point, or 0 when invalid.
size_t utf8_next(std::string_view s, size_t i, uint32_t& cp);
void utf8_append(std::string& out, uint32_t cp);
// Byte offset of the first invalid sequence, or std::string_view::npos.
size_t utf8_invalid_at(std::string_view s);
// bytes.decode("utf-8", "replace"): each maximal invalid subpart becomes one U+FFFD.
std::string utf8_replace_invalid(std::string_view s);
size_t utf8_code_points(std::string_view s);

// str.isspace() for one code point (the set re's \s matches in str patterns).
bool py_isspace(uint32_t cp);
// Length of the whitespace character at s[i] (0 when s[i] does not start one). Valid UTF-8.
size_t space_len(std::string_view s, size_t i);

std::string_view py_strip(std::string_view s);  // str.strip()
std::string py_lower(std::string_view s);       // str.lower(), Final_Sigma included
// re.sub(r"\s+", " ", s).split(" "): empty first/last words when s starts/ends with whitespace.
std::vector<std::string> py_collapse_split(std::string_view s);
std::vector<std::string_view> py_split(std::string_view s);  // str.split()
std::string py_replace(std::string_view s, std::string_view from, std::string_view to);
// str.format with keyword fields only ("{name}"; "{{" and "}}" are braces). Fields absent from
// `kw` throw std::logic_error (Python's KeyError); unused keywords are ignored, as in Python.
std::string py_format(std::string_view tmpl, const std::map<std::string, std::string>& kw);

// " ".join(words[begin:end]) and friends.
std::string join(const std::vector<std::string>& parts, std::string_view sep);
std::string join(const std::vector<std::string>& parts, std::string_view sep, size_t begin,
                 size_t end);

}  // namespace accel::ruler
