// Python string semantics the RULER generators and metrics rely on, over UTF-8 bytes:
// str.strip/split/replace/format with whitespace as str.isspace() and re's \s see it. Character
// data, decoding and str.lower() are python_text.h's. Byte offsets are used throughout;
// code-point offsets only where RULER stores one.
#pragma once
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace accel::ruler {

// Number of code points of valid UTF-8 (RULER stores some offsets in code points).
size_t utf8_code_points(std::string_view s);
// Length of the whitespace character (pytext::py_isspace) at s[i], 0 when s[i] does not start
// one. Valid UTF-8.
size_t space_len(std::string_view s, size_t i);

std::string_view py_strip(std::string_view s);  // str.strip()
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
