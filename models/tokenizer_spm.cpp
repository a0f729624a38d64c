// The SentencePiece-style `llama` tokenizer: spaces escaped to U+2581 with one added in front of
// each text run (add_space_prefix), score-driven pair merges as llama.cpp's llm_tokenizer_spm,
// and byte fallback to <0xNN> tokens. It must not know about byte-level BPE or pre-tokenizers.
#include <algorithm>
#include <array>
#include <queue>
#include <string_view>
#include <unordered_map>

#include "models/tokenizer.h"

namespace accel {

namespace {

using tokenizer_detail::Fragment;

constexpr std::string_view kEscapedSpace = "\xE2\x96\x81";  // U+2581

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

// "<0xNN>" -> NN, else -1.
int parse_byte_token(std::string_view s) {
  if (s.size() != 6 || s.substr(0, 3) != "<0x" || s[5] != '>') return -1;
  const int hi = hex_digit(s[3]), lo = hex_digit(s[4]);
  return hi < 0 || lo < 0 ? -1 : hi * 16 + lo;
}

class SpmTokenizer final : public Tokenizer {
 public:
  explicit SpmTokenizer(TokenizerSpec spec) : Tokenizer(std::move(spec)) {
    const size_t n = spec_.tokens.size();
    // Every token, control ones included, can be produced by a merge, as in llama.cpp. On
    // duplicate texts the later id wins, as there.
    ids_.reserve(n);
    for (size_t i = 0; i < n; ++i) ids_[spec_.tokens[i]] = int32_t(i);
    specials_ = tokenizer_detail::special_tokens_by_length(spec_);
    byte_token_.fill(-1);
    decoded_.resize(n);
    for (size_t i = 0; i < n; ++i) {
      const std::string& t = spec_.tokens[i];
      const TokenType type = spec_.type(int32_t(i));
      if (type == TokenType::Byte) {
        const int b = parse_byte_token(t);
        if (b < 0)
          throw TokenizerError("[tokenizer] token " + std::to_string(i) +
                               " has type Byte but is not spelled <0xNN>");
        decoded_[i] = std::string(1, char(b));
        byte_token_[size_t(b)] = int32_t(i);
      } else if (type == TokenType::Control || type == TokenType::Unknown ||
                 type == TokenType::UserDefined) {
        decoded_[i] = t;  // raw; control/unknown only rendered on request
      } else {
        std::string& d = decoded_[i];
        for (size_t k = 0; k < t.size();) {
          if (std::string_view(t).substr(k, 3) == kEscapedSpace) {
            d += ' ';
            k += 3;
          } else {
            d += t[k++];
          }
        }
      }
    }
    // llama.cpp's byte_to_token: <0xNN>, else the byte itself as a token. We add unk as a last
    // resort instead of failing the whole encode.
    // Words are independent when no token holds U+2581 after another character ("a▁", "x▁▁"):
    // then no merge can cross the point just before a U+2581 that follows something else, and
    // each word's merges (ordered by score, then position) are exactly those the whole run would
    // do there. True of SentencePiece vocabularies with split_by_whitespace (llama-spm,
    // stories260K); when false we merge over the whole run as llama.cpp always does.
    split_words_ = true;
    for (const std::string& t : spec_.tokens) {
      for (size_t k = t.find(kEscapedSpace); k != std::string::npos && split_words_;
           k = t.find(kEscapedSpace, k + 3))
        if (k > 0 && (k < 3 || std::string_view(t).substr(k - 3, 3) != kEscapedSpace))
          split_words_ = false;
    }
    for (int b = 0; b < 256; ++b) {
      if (byte_token_[size_t(b)] >= 0) continue;
      const char c = char(b);
      auto it = ids_.find(std::string_view(&c, 1));
      byte_token_[size_t(b)] = it != ids_.end() ? it->second : spec_.unk;
    }
  }

  std::vector<int32_t> encode(std::string_view text, bool add_special,
                              bool parse_special) const override {
    std::vector<int32_t> out;
    bool prev_special = true;  // the first run gets the space prefix
    if (add_special && spec_.add_bos) out.push_back(spec_.bos);
    std::string run;
    WordCache cache;
    for (const Fragment& f :
         tokenizer_detail::split_special(text, spec_, specials_, parse_special)) {
      if (f.token >= 0) {
        out.push_back(f.token);
        prev_special = true;
        continue;
      }
      run.clear();
      if (spec_.add_space_prefix && prev_special) run += kEscapedSpace;
      for (char c : text.substr(f.offset, f.length)) {
        if (c == ' ')
          run += kEscapedSpace;
        else
          run += c;
      }
      tokenize_run(run, cache, out);
      prev_special = false;
    }
    if (add_special && spec_.add_eos) out.push_back(spec_.eos);
    return out;
  }

  std::string decode(std::span<const int32_t> ids, bool render_special) const override {
    std::string out;
    bool run_start = true;  // next text is the start of a run that encode prefixed with a space
    for (int32_t id : ids) {
      if (id < 0 || id >= n_vocab())
        throw TokenizerError("[tokenizer] decode: token id " + std::to_string(id) +
                             " is out of range for " + std::to_string(n_vocab()) + " tokens");
      const TokenType t = spec_.type(id);
      if (t == TokenType::Control || t == TokenType::Unknown || t == TokenType::UserDefined) {
        if (t == TokenType::UserDefined || render_special) out += decoded_[size_t(id)];
        run_start = true;
        continue;
      }
      const std::string& d = decoded_[size_t(id)];
      if (d.empty()) continue;
      // Only a text piece can carry the prefix: encode escapes spaces, so <0x20> never starts
      // a run.
      if (run_start && spec_.add_space_prefix && t != TokenType::Byte && d[0] == ' ')
        out.append(d, 1);
      else
        out += d;
      run_start = false;
    }
    return out;
  }

 private:
  struct Symbol {
    int prev, next;
    size_t off, n;  // bytes of the run
  };
  struct Bigram {
    int left, right;
    float score;
    size_t size;
  };
  struct BigramOrder {  // top = highest score, then leftmost (llama.cpp's llm_bigram_spm)
    bool operator()(const Bigram& l, const Bigram& r) const {
      return l.score < r.score || (l.score == r.score && l.left > r.left);
    }
  };
  using Queue = std::priority_queue<Bigram, std::vector<Bigram>, BigramOrder>;

  int32_t find(std::string_view s) const {
    auto it = ids_.find(s);
    return it == ids_.end() ? -1 : it->second;
  }

  void try_add(std::string_view run, const std::vector<Symbol>& sym, int l, int r, Queue& q) const {
    if (l < 0 || r < 0) return;
    const size_t size = sym[size_t(l)].n + sym[size_t(r)].n;
    const int32_t id = find(run.substr(sym[size_t(l)].off, size));
    if (id < 0) return;
    q.push({l, r, spec_.scores.empty() ? 0.f : spec_.scores[size_t(id)], size});
  }

  // Token ids of words already seen in this encode call: (start, count) in `ids`. Keys view
  // the run buffer, so the cache is cleared whenever the run is rebuilt.
  struct WordCache {
    std::unordered_map<std::string_view, std::pair<uint32_t, uint32_t>> where;
    std::vector<int32_t> ids;
  };

  void tokenize_run(const std::string& run, WordCache& cache, std::vector<int32_t>& out) const {
    cache.where.clear();
    cache.ids.clear();
    if (!split_words_) {
      tokenize_word(run, out);
      return;
    }
    const std::string_view r(run);
    size_t start = 0;
    const auto flush = [&](size_t end) {
      const std::string_view word = r.substr(start, end - start);
      if (word.empty()) return;
      auto it = cache.where.find(word);
      if (it == cache.where.end()) {
        const size_t before = cache.ids.size();
        tokenize_word(word, cache.ids);
        it = cache.where
                 .emplace(word,
                          std::make_pair(uint32_t(before), uint32_t(cache.ids.size() - before)))
                 .first;
      }
      const auto [b, n] = it->second;
      out.insert(out.end(), cache.ids.begin() + b, cache.ids.begin() + b + n);
      start = end;
    };
    for (size_t p = r.find(kEscapedSpace, 1); p != std::string_view::npos;
         p = r.find(kEscapedSpace, p + 3))
      if (p < 3 || r.substr(p - 3, 3) != kEscapedSpace) flush(p);
    flush(r.size());
  }

  void tokenize_word(std::string_view run, std::vector<int32_t>& out) const {
    // Symbols are UTF-8 characters; unlike llama.cpp, which trusts the lead byte's length, an
    // invalid sequence is split into single bytes so it cannot swallow the following (valid)
    // characters. Valid UTF-8 gives the same symbols either way.
    std::vector<Symbol> sym;
    sym.reserve(run.size());
    for (size_t off = 0; off < run.size();) {
      const size_t len = std::max<size_t>(1, tokenizer_detail::utf8_valid_len(run, off));
      const int idx = int(sym.size());
      sym.push_back({idx - 1, off + len == run.size() ? -1 : idx + 1, off, len});
      off += len;
    }
    Queue q;
    for (int i = 1; i < int(sym.size()); ++i) try_add(run, sym, i - 1, i, q);
    while (!q.empty()) {
      const Bigram b = q.top();
      q.pop();
      Symbol& l = sym[size_t(b.left)];
      Symbol& r = sym[size_t(b.right)];
      if (l.n == 0 || r.n == 0 || l.n + r.n != b.size) continue;  // stale
      l.n += r.n;
      r.n = 0;
      l.next = r.next;
      if (r.next >= 0) sym[size_t(r.next)].prev = b.left;
      try_add(run, sym, l.prev, b.left, q);
      try_add(run, sym, b.left, l.next, q);
    }
    // A symbol that is not a token was never merged (merges only form tokens), so llama.cpp's
    // rev_merge re-segmentation never applies: it falls back to bytes.
    for (int i = sym.empty() ? -1 : 0; i != -1; i = sym[size_t(i)].next) {
      const Symbol& s = sym[size_t(i)];
      const int32_t id = find(run.substr(s.off, s.n));
      if (id >= 0) {
        out.push_back(id);
        continue;
      }
      for (size_t k = 0; k < s.n; ++k) {
        const int32_t bt = byte_token_[uint8_t(run[s.off + k])];
        if (bt < 0)
          throw TokenizerError("[tokenizer] the vocabulary has no token for byte " +
                               std::to_string(uint8_t(run[s.off + k])) + " and no unknown token");
        out.push_back(bt);
      }
    }
  }

  std::unordered_map<std::string_view, int32_t> ids_;  // views into spec_.tokens
  std::vector<int32_t> specials_;
  std::array<int32_t, 256> byte_token_;
  std::vector<std::string> decoded_;  // per token: its text as decode writes it
  bool split_words_ = false;
};

}  // namespace

namespace tokenizer_detail {
std::unique_ptr<Tokenizer> make_spm_tokenizer(TokenizerSpec spec) {
  return std::make_unique<SpmTokenizer>(std::move(spec));
}
}  // namespace tokenizer_detail

}  // namespace accel
