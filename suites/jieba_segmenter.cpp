// jieba's default cut (jieba_segmenter.h): Tokenizer.cut, get_DAG, calc and __cut_DAG of jieba
// 0.42.1, with Python's tie rules and floating-point order.
#include "suites/jieba_segmenter.h"

#include <utility>

#include "suites/jieba_finalseg.h"

namespace accel::jieba {

namespace {

// re_han_default: [\u4E00-\u9FD5a-zA-Z0-9+#&\._%\-]
bool in_han_default(char32_t c) {
  return (c >= 0x4E00 && c <= 0x9FD5) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
         (c >= '0' && c <= '9') || c == '+' || c == '#' || c == '&' || c == '.' || c == '_' ||
         c == '%' || c == '-';
}

}  // namespace

Segmenter Segmenter::load(const std::string& dir) {
  return Segmenter(Dictionary::load(dir + "/dict.txt"), HmmTables::load(dir + "/finalseg"));
}

std::vector<std::u32string> Segmenter::cut(std::u32string_view s) const {
  std::vector<std::u32string> out;
  size_t i = 0;
  while (i < s.size()) {
    if (in_han_default(s[i])) {  // a re_han_default.split block that re_han.match accepts
      const size_t b = i;
      while (i < s.size() && in_han_default(s[i])) ++i;
      cut_block(s.substr(b, i - b), out);
      continue;
    }
    // Any other block is split by re_skip_default (\r\n|\s): each separator is yielded whole and
    // the text between separators character by character. A separator is "\r\n" or one
    // character, so whatever \s matches, every character is a token of its own except a "\r"
    // directly followed by "\n" (the alternation tries "\r\n" first).
    if (s[i] == U'\r' && i + 1 < s.size() && s[i + 1] == U'\n') {
      out.emplace_back(U"\r\n");
      i += 2;
    } else {
      out.emplace_back(1, s[i++]);
    }
  }
  return out;
}

void Segmenter::cut_block(std::u32string_view block, std::vector<std::u32string>& out) const {
  const size_t n = block.size();
  // calc: route[idx] = max((log(FREQ.get(block[idx:x+1]) or 1) - logtotal + route[x+1][0], x)
  // for x in DAG[idx]), right to left, where DAG[idx] holds the ends of the dictionary words
  // (frequency > 0) starting at idx, found by walking prefixes while they are in FREQ, or just
  // idx when there is none. On equal log-probabilities the tuple order picks the larger x.
  std::vector<std::pair<double, size_t>> route(n + 1);
  route[n] = {0.0, 0};
  for (size_t idx = n; idx-- > 0;) {
    bool found = false;
    double best = 0;
    size_t best_end = idx;
    Dictionary::Node node = Dictionary::kRoot;
    for (size_t x = idx; x < n; ++x) {
      node = dict_.child(node, block[x]);
      if (node == Dictionary::kNone) break;
      if (dict_.freq(node) == 0) continue;
      const double score = dict_.log_weight(node) + route[x + 1].first;
      if (!found || score >= best) {  // x only grows: >= is the tuple tie rule
        best = score;
        best_end = x;
        found = true;
      }
    }
    if (!found) best = dict_.unknown_weight() + route[idx + 1].first;
    route[idx] = {best, best_end};
  }
  // __cut_DAG: follow the route; one-character words are buffered and flushed before the next
  // longer word and at the end.
  size_t buf_begin = 0, buf_len = 0;
  for (size_t x = 0; x < n;) {
    const size_t y = route[x].second + 1;
    if (y - x == 1) {
      if (buf_len == 0) buf_begin = x;
      ++buf_len;
    } else {
      flush_singles(block.substr(buf_begin, buf_len), out);
      buf_len = 0;
      out.emplace_back(block.substr(x, y - x));
    }
    x = y;
  }
  flush_singles(block.substr(buf_begin, buf_len), out);
}

void Segmenter::flush_singles(std::u32string_view buf, std::vector<std::u32string>& out) const {
  if (buf.empty()) return;
  if (buf.size() == 1) {
    out.emplace_back(buf);
    return;
  }
  const Dictionary::Node node = dict_.find(buf);
  if (node == Dictionary::kNone || dict_.freq(node) == 0) {  // not self.FREQ.get(buf)
    finalseg_cut(hmm_, buf, out);
    return;
  }
  for (char32_t c : buf) out.emplace_back(1, c);
}

}  // namespace accel::jieba
