// The strict Python dict-literal reader (py_dict_literal.h): a recursive-descent parser over code
// points that counts lines as it goes.
#include "suites/py_dict_literal.h"

#include <cmath>
#include <cstdlib>
#include <unordered_set>

#include "suites/longbench_unicode.h"

namespace accel::jieba {

namespace {

constexpr int kMaxDepth = 4;

bool is_digit(char32_t c) {
  return c >= '0' && c <= '9';
}
bool is_ident_start(char32_t c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
bool is_ident(char32_t c) {
  return is_ident_start(c) || is_digit(c);
}
int hex_value(char32_t c) {
  if (is_digit(c)) return int(c - '0');
  if (c >= 'a' && c <= 'f') return int(c - 'a' + 10);
  if (c >= 'A' && c <= 'F') return int(c - 'A' + 10);
  return -1;
}

class Parser {
 public:
  Parser(std::u32string text, const std::string& name) : s_(std::move(text)), name_(name) {}

  PyLiteral module(std::string_view variable) {
    skip_space();
    while (ident_ahead() == U"from") future_import();
    const std::u32string target = identifier();
    if (longbench::utf8_encode(target) != variable)
      fail("expected the assignment '" + std::string(variable) + " = {...}'");
    skip_space();
    expect(U'=');
    skip_space();
    if (peek() != U'{') fail("expected a dict literal after '='");
    PyLiteral value = dict(0);
    skip_space();
    if (pos_ < s_.size()) fail("unexpected text after the dict literal");
    return value;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw DataError("[jieba] " + name_ + ":" + std::to_string(line_) + ": " + what);
  }
  char32_t peek() const { return pos_ < s_.size() ? s_[pos_] : U'\0'; }
  bool at_end() const { return pos_ >= s_.size(); }
  void advance() {
    if (s_[pos_] == U'\n') ++line_;
    ++pos_;
  }
  void skip_space() {  // spaces, tabs, line ends (inside brackets Python allows any of them)
    while (!at_end() && (peek() == U' ' || peek() == U'\t' || peek() == U'\n' || peek() == U'\r'))
      advance();
  }
  void expect(char32_t c) {
    if (peek() != c || at_end())
      fail("expected '" + longbench::utf8_encode(std::u32string(1, c)) + "'");
    advance();
  }
  std::u32string ident_ahead() const {
    size_t e = pos_;
    while (e < s_.size() && is_ident(s_[e])) ++e;
    return s_.substr(pos_, e - pos_);
  }
  std::u32string identifier() {
    if (!is_ident_start(peek()) || at_end()) fail("expected a name");
    const std::u32string id = ident_ahead();
    for (size_t i = 0; i < id.size(); ++i) advance();
    return id;
  }
  void inline_space() {
    while (!at_end() && (peek() == U' ' || peek() == U'\t')) advance();
  }
  // from __future__ import a, b  (one line)
  void future_import() {
    identifier();
    inline_space();
    if (identifier() != U"__future__") fail("only 'from __future__ import ...' lines may precede");
    inline_space();
    if (identifier() != U"import") fail("expected 'import'");
    while (true) {
      inline_space();
      identifier();
      inline_space();
      if (peek() != U',') break;
      advance();
    }
    if (peek() == U'\r') advance();
    if (!at_end() && peek() != U'\n') fail("unexpected text in a __future__ import");
    skip_space();
  }

  PyLiteral dict(int depth) {
    if (depth >= kMaxDepth) fail("dicts nested deeper than " + std::to_string(kMaxDepth));
    PyLiteral d;
    d.is_dict = true;
    d.line = line_;
    expect(U'{');
    skip_space();
    std::unordered_set<std::u32string> keys;
    while (peek() != U'}' || at_end()) {
      if (at_end()) fail("unterminated dict literal");
      const size_t key_line = line_;
      std::u32string key = string_literal();
      skip_space();
      expect(U':');
      skip_space();
      PyLiteral v = peek() == U'{' ? dict(depth + 1) : number();
      if (!keys.insert(key).second) {
        line_ = key_line;
        fail("key '" + longbench::utf8_encode(key) + "' appears twice in one dict");
      }
      d.items.push_back(PyItem{std::move(key), std::move(v)});
      skip_space();
      if (peek() == U',') {
        advance();
        skip_space();
      } else if (peek() != U'}') {
        fail("expected ',' or '}' in a dict");
      }
    }
    advance();  // '}'
    return d;
  }

  std::u32string string_literal() {
    const char32_t quote = peek();
    if (at_end() || (quote != U'\'' && quote != U'"')) fail("expected a quoted string key");
    advance();
    std::u32string out;
    while (true) {
      if (at_end() || peek() == U'\n') fail("unterminated string literal");
      const char32_t c = peek();
      advance();
      if (c == quote) return out;
      if (c != U'\\') {
        out.push_back(c);
        continue;
      }
      out.push_back(escape());
    }
  }
  char32_t escape() {
    if (at_end()) fail("unterminated string literal");
    const char32_t c = peek();
    advance();
    switch (c) {
      case U'\\':
      case U'\'':
      case U'"':
        return c;
      case U'n':
        return U'\n';
      case U'r':
        return U'\r';
      case U't':
        return U'\t';
      case U'x':
        return hex_digits(2);
      case U'u':
        return hex_digits(4);
      case U'U':
        return hex_digits(8);
      default:
        fail("unsupported escape '\\" + longbench::utf8_encode(std::u32string(1, c)) + "'");
    }
  }
  char32_t hex_digits(int n) {
    uint32_t v = 0;
    for (int i = 0; i < n; ++i) {
      const int h = at_end() ? -1 : hex_value(peek());
      if (h < 0) fail("truncated \\x, \\u or \\U escape");
      v = v * 16 + uint32_t(h);
      advance();
    }
    if (v > 0x10FFFF) fail("escape beyond U+10FFFF");
    return char32_t(v);
  }

  // [+-] (digits [. digits] | . digits) [(e|E) [+-] digits]: an int or float literal with an
  // optional unary sign, converted by strtod (correctly rounded, as Python's float parser).
  PyLiteral number() {
    PyLiteral v;
    v.line = line_;
    std::string text;
    const auto take = [&] {
      text.push_back(char(peek()));
      advance();
    };
    const auto digits = [&] {
      size_t n = 0;
      for (; !at_end() && is_digit(peek()); ++n) take();
      return n;
    };
    if (peek() == U'-' || peek() == U'+') take();
    size_t n = digits();
    if (peek() == U'.') {
      take();
      n += digits();
    }
    if (n == 0) fail("expected a number or a dict as the value");
    if (peek() == U'e' || peek() == U'E') {
      take();
      if (peek() == U'-' || peek() == U'+') take();
      if (digits() == 0) fail("malformed exponent in '" + text + "'");
    }
    if (is_ident(peek()) || peek() == U'.') fail("malformed number '" + text + "'");
    v.number = std::strtod(text.c_str(), nullptr);
    if (!std::isfinite(v.number)) fail("number '" + text + "' is out of range");
    return v;
  }

  std::u32string s_;
  std::string name_;
  size_t pos_ = 0, line_ = 1;
};

}  // namespace

PyLiteral parse_py_dict_assignment(std::string_view text, const std::string& name,
                                   std::string_view variable) {
  if (const size_t bad = pytext::utf8_invalid_at(text); bad != std::string_view::npos)
    throw DataError("[jieba] " + name + ": not valid UTF-8 (byte offset " + std::to_string(bad) +
                    ")");
  Parser p(longbench::utf8_decode_lossy(text), name);
  return p.module(variable);
}

}  // namespace accel::jieba
