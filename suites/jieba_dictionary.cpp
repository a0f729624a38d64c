// jieba's prefix dictionary (jieba_dictionary.h): dict.txt parsed into a trie whose children live
// in one open-addressing table keyed by (node, code point).
#include "suites/jieba_dictionary.h"

#include <bit>
#include <cmath>
#include <fstream>
#include <sstream>

#include "suites/longbench_unicode.h"

namespace accel::jieba {

namespace {

constexpr uint64_t kEmpty = ~uint64_t(0);
constexpr int64_t kMaxFreq = int64_t(1) << 50;  // far above jieba's largest (under 10^7)

uint64_t key_of(Dictionary::Node n, char32_t c) {
  return (uint64_t(n) << 21) | uint64_t(c);  // code points are below 2^21
}

size_t slot_of(uint64_t key, size_t capacity) {  // Fibonacci hashing; capacity a power of two
  const int bits = std::countr_zero(capacity);
  return size_t((key * 0x9E3779B97F4A7C15ull) >> (64 - bits));
}

// bytes.strip()'s whitespace: what gen_pfdict removes before decoding a line.
bool ascii_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == 0x0B || c == 0x0C;
}

[[noreturn]] void fail(const std::string& name, size_t line, const std::string& what) {
  throw DataError("[jieba] " + name + ":" + std::to_string(line) + ": " + what);
}

std::string excerpt(std::string_view s) {  // at most 60 bytes, cut at a character boundary
  if (s.size() <= 60) return std::string(s);
  size_t n = 60;
  while (n > 0 && (uint8_t(s[n]) & 0xC0) == 0x80) --n;
  return std::string(s.substr(0, n)) + "...";
}

// The code point at s[k] of well-formed UTF-8; advances k past it.
char32_t decode_valid(std::string_view s, size_t& k) {
  const auto byte = [&](size_t i) { return char32_t(uint8_t(s[i])); };
  const char32_t c = byte(k);
  if (c < 0x80) {
    k += 1;
    return c;
  }
  if (c < 0xE0) {
    k += 2;
    return ((c & 0x1F) << 6) | (byte(k - 1) & 0x3F);
  }
  if (c < 0xF0) {
    k += 3;
    return ((c & 0x0F) << 12) | ((byte(k - 2) & 0x3F) << 6) | (byte(k - 1) & 0x3F);
  }
  k += 4;
  return ((c & 0x07) << 18) | ((byte(k - 3) & 0x3F) << 12) | ((byte(k - 2) & 0x3F) << 6) |
         (byte(k - 1) & 0x3F);
}

size_t line_of_offset(std::string_view text, size_t offset) {
  size_t line = 1;
  for (size_t i = 0; i < offset && i < text.size(); ++i) line += text[i] == '\n' ? 1 : 0;
  return line;
}

}  // namespace

Dictionary::Node Dictionary::child(Node node, char32_t c) const {
  if (slots_.empty() || c > 0x10FFFF) return kNone;  // keys hold 21-bit code points
  const uint64_t key = key_of(node, c);
  const size_t mask = slots_.size() - 1;
  for (size_t s = slot_of(key, slots_.size());; s = (s + 1) & mask) {
    if (slots_[s].key == key) return slots_[s].child;
    if (slots_[s].key == kEmpty) return kNone;
  }
}

Dictionary::Node Dictionary::find(std::u32string_view word) const {
  Node n = kRoot;
  for (char32_t c : word) {
    n = child(n, c);
    if (n == kNone) return kNone;
  }
  return n;
}

void Dictionary::grow_table() {
  const size_t capacity = slots_.empty() ? size_t(1) << 16 : slots_.size() * 2;
  std::vector<Slot> grown(capacity, Slot{kEmpty, kNone});
  for (const Slot& old : slots_) {
    if (old.key == kEmpty) continue;
    size_t s = slot_of(old.key, capacity);
    while (grown[s].key != kEmpty) s = (s + 1) & (capacity - 1);
    grown[s] = old;
  }
  slots_ = std::move(grown);
}

Dictionary::Node Dictionary::add_child(Node node, char32_t c) {
  if (2 * (used_slots_ + 1) > slots_.size()) grow_table();  // load factor <= 1/2
  const uint64_t key = key_of(node, c);
  const size_t mask = slots_.size() - 1;
  size_t s = slot_of(key, slots_.size());
  for (; slots_[s].key != kEmpty; s = (s + 1) & mask)
    if (slots_[s].key == key) return slots_[s].child;
  if (freq_.size() >= size_t(kNone)) throw DataError("[jieba] dictionary: too many prefixes");
  const Node created = Node(freq_.size());
  freq_.push_back(0);  // gen_pfdict: a prefix not yet in FREQ enters with 0
  slots_[s] = Slot{key, created};
  ++used_slots_;
  return created;
}

Dictionary Dictionary::parse(std::string_view bytes, const std::string& name) {
  // gen_pfdict decodes each line strictly; checking the whole file once is the same (the bytes
  // strip() removes are ASCII) and lets the loop below decode without checks.
  if (const size_t bad = pytext::utf8_invalid_at(bytes); bad != std::string_view::npos)
    fail(name, line_of_offset(bytes, bad),
         "not valid UTF-8 (byte offset " + std::to_string(bad) + ")");
  Dictionary d;
  d.freq_.push_back(0);  // the root
  std::u32string cps, prev;
  std::vector<Node> path = {kRoot};
  size_t begin = 0;
  while (begin < bytes.size()) {  // lines end at '\n' (the last one may not)
    size_t end = bytes.find('\n', begin);
    if (end == std::string_view::npos) end = bytes.size();
    const size_t line_no = ++d.lines_;
    std::string_view line = bytes.substr(begin, end - begin);
    begin = end + 1;
    while (!line.empty() && ascii_space(line.front())) line.remove_prefix(1);
    while (!line.empty() && ascii_space(line.back())) line.remove_suffix(1);
    const size_t space = line.find(' ');  // line.split(' ')[:2]
    if (space == std::string_view::npos)
      fail(name, line_no, "expected 'word frequency [tag]', got '" + excerpt(line) + "'");
    const std::string_view word = line.substr(0, space);
    const std::string_view field = line.substr(space + 1, line.find(' ', space + 1) - space - 1);
    int64_t freq = 0;
    for (char c : field) {
      if (c < '0' || c > '9' || freq > kMaxFreq)
        fail(name, line_no,
             "frequency '" + excerpt(field) + "' is not an integer from 0 to 2^50 (word '" +
                 excerpt(word) + "')");
      freq = freq * 10 + int64_t(c - '0');
    }
    if (field.empty() || freq > kMaxFreq)
      fail(name, line_no, "missing or too large frequency for word '" + excerpt(word) + "'");
    // dict.txt is sorted, so a word mostly shares a prefix with the previous one: its trie
    // path is reused and only the rest is looked up.
    cps.clear();
    for (size_t k = 0; k < word.size();) cps.push_back(decode_valid(word, k));
    size_t shared = 0;
    while (shared < cps.size() && shared < prev.size() && cps[shared] == prev[shared]) ++shared;
    path.resize(shared + 1);  // path[i]: the node of the first i code points
    for (size_t i = shared; i < cps.size(); ++i) path.push_back(d.add_child(path[i], cps[i]));
    prev.swap(cps);
    const Node n = path.back();
    d.freq_[n] = freq;  // a repeated word: the last frequency wins, both are in the total
    d.total_ += freq;   // below 2^62 + 2^50: cannot overflow before this check
    if (d.total_ > (int64_t(1) << 62)) fail(name, line_no, "the total frequency exceeds 2^62");
  }
  if (d.total_ <= 0)
    throw DataError("[jieba] " + name +
                    ": the total frequency is 0 (jieba would fail on log(0) at the first cut)");
  // calc: log(FREQ.get(w) or 1) - logtotal, with Python's math.log (the C library's log).
  const double log_total = std::log(double(d.total_));
  d.unknown_weight_ = std::log(1.0) - log_total;
  d.log_weight_.resize(d.freq_.size());
  for (size_t i = 0; i < d.freq_.size(); ++i)
    d.log_weight_[i] = std::log(double(d.freq_[i] > 0 ? d.freq_[i] : 1)) - log_total;
  return d;
}

Dictionary Dictionary::load(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw DataError("[jieba] " + path + ": cannot open the dictionary");
  std::ostringstream ss;
  ss << f.rdbuf();
  if (f.bad()) throw DataError("[jieba] " + path + ": read error");
  return parse(ss.str(), path);
}

}  // namespace accel::jieba
