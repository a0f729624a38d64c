// The BPE tokenizers of llama.cpp's llm_tokenizer_bpe: pre-tokenizer regexes chosen by
// tokenizer.ggml.pre (run with PCRE2, Unicode-aware) and rank-ordered merges, over GPT-2's
// byte-to-unicode alphabet (`gpt2`) or, for `gemma4`, over raw UTF-8 characters with spaces
// escaped as U+2581 and <0xXX> byte tokens for characters outside the vocabulary. It must not know
// about SentencePiece scores (tokenizer_spm.cpp).
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <deque>
#include <queue>
#include <string_view>
#include <unordered_map>

#include "models/tokenizer.h"

namespace accel {

namespace {

using tokenizer_detail::Fragment;

// llama.cpp's whitespace table (Unicode White_Space). Spelled out because PCRE2's \s under UCP
// is not the same set in every version, and \v in a class would mean all vertical space.
constexpr const char* kWhitespace =
    "\\x{09}-\\x{0D}\\x{20}\\x{85}\\x{A0}\\x{1680}\\x{2000}-\\x{200A}\\x{2028}\\x{2029}"
    "\\x{202F}\\x{205F}\\x{3000}";

// Rewrites \s and \S (inside and outside character classes) to the explicit whitespace set.
std::string expand_whitespace(std::string_view pat) {
  std::string out;
  bool in_class = false;
  for (size_t i = 0; i < pat.size(); ++i) {
    const char c = pat[i];
    if (c == '\\' && i + 1 < pat.size()) {
      const char e = pat[++i];
      if (e == 's') {
        out += in_class ? std::string(kWhitespace) : "[" + std::string(kWhitespace) + "]";
      } else if (e == 'S') {
        if (in_class)  // not used by our patterns; a negated set cannot be inlined in a class
          throw std::logic_error("\\S inside a character class");
        out += "[^" + std::string(kWhitespace) + "]";
      } else {
        out += c;
        out += e;
      }
      continue;
    }
    if (c == '[' && !in_class)
      in_class = true;
    else if (c == ']' && in_class)
      in_class = false;
    out += c;
  }
  return out;
}

struct PreTokenizer {
  std::vector<const char*> regexes;  // applied in turn, each splitting the previous pieces
  bool ignore_merges = false;        // a piece that is already a token is emitted whole
  // false: gemma4's SPM-style BPE (spaces as U+2581, symbols are UTF-8 characters, <0xXX> byte
  // fallback) instead of GPT-2's byte alphabet
  bool byte_encode = true;
};

// The regexes are llama.cpp's (src/llama-vocab.cpp, llm_tokenizer_bpe), which adapt the
// tokenizer.json originals ((?i:...) spelled out as classes).
const PreTokenizer* find_pre(const std::string& pre) {
  static const PreTokenizer kDefault{{
      "[\\p{P}\\$\\+<=>\\^~\\|]+",
      "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)",
      "\\p{N}+",
      "[0-9][0-9][0-9]",
  }};
  static const PreTokenizer kGpt2{
      {"'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+"}};
  static const PreTokenizer kLlama3{
      {"(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|"
       "\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"},
      /*ignore_merges=*/true};
  static const PreTokenizer kQwen2{
      {"(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|"
       "\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"}};
  // Qwen3.5: Qwen2's with combining marks (\p{M}) inside letter runs and out of symbol runs.
  static const PreTokenizer kQwen35{
      {"(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?"
       "[\\p{L}\\p{M}]+|\\p{N}| "
       "?[^\\s\\p{L}\\p{M}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"}};
  // llama.cpp's GPT4O group (gpt-oss's o200k): its lookahead spelling of the original's
  // [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}] / [\p{Ll}\p{Lm}\p{Lo}\p{M}] classes, which leaves combining
  // marks (\p{M}) out of words. Kept as llama.cpp has it: its tokens are the reference.
  static const PreTokenizer kGpt4o{
      {"[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}])([^a-z]))*((?=[\\p{L}])([^A-Z]))+"
       "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|"
       "[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}])([^a-z]))+((?=[\\p{L}])([^A-Z]))*"
       "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|"
       "\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"}};
  // Gemma 4: no word splitting, only newline runs apart (merges never span a newline).
  static const PreTokenizer kGemma4{{"[^\\n]+|[\\n]+"}, false, /*byte_encode=*/false};
  if (pre == "default") return &kDefault;
  if (pre == "gemma4") return &kGemma4;
  if (pre == "gpt-4o") return &kGpt4o;
  if (pre == "gpt-2") return &kGpt2;
  if (pre == "llama-bpe" || pre == "llama3" || pre == "llama-v3") return &kLlama3;
  if (pre == "qwen2") return &kQwen2;
  if (pre == "qwen35") return &kQwen35;
  return nullptr;
}

class Regex {
 public:
  explicit Regex(const char* pattern) {
    const std::string pat = expand_whitespace(pattern);
    int err = 0;
    PCRE2_SIZE erroff = 0;
    // MATCH_INVALID_UTF: invalid UTF-8 is never matched, so it ends up in a gap piece and is
    // byte-encoded like any other bytes (round trip of arbitrary bytes).
    code_ = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pat.c_str()), pat.size(),
                          PCRE2_UTF | PCRE2_UCP | PCRE2_MATCH_INVALID_UTF, &err, &erroff, nullptr);
    if (!code_) {
      PCRE2_UCHAR buf[256];
      pcre2_get_error_message(err, buf, sizeof buf);
      throw std::logic_error(std::string("pre-tokenizer regex does not compile: ") +
                             reinterpret_cast<const char*>(buf));
    }
    pcre2_jit_compile(code_, PCRE2_JIT_COMPLETE);  // falls back to the interpreter on failure
  }
  ~Regex() { pcre2_code_free(code_); }
  Regex(const Regex&) = delete;
  Regex& operator=(const Regex&) = delete;
  const pcre2_code* code() const { return code_; }

 private:
  pcre2_code* code_ = nullptr;
};

class BpeTokenizer final : public Tokenizer {
 public:
  explicit BpeTokenizer(TokenizerSpec spec) : Tokenizer(std::move(spec)) {
    const PreTokenizer* pre = find_pre(spec_.pre);
    if (!pre)
      throw TokenizerError("[tokenizer] pre-tokenizer '" + spec_.pre + "' is not supported");
    for (const char* r : pre->regexes) regexes_.push_back(std::make_unique<Regex>(r));
    ignore_merges_ = pre->ignore_merges;
    byte_encode_ = pre->byte_encode;

    const size_t n = spec_.tokens.size();
    ids_.reserve(n);
    for (size_t i = 0; i < n; ++i) ids_[spec_.tokens[i]] = int32_t(i);
    for (int b = 0; b < 256; ++b)  // byte level: validate() checked that all 256 exist
      byte_token_[size_t(b)] = byte_encode_ ? ids_.at(tokenizer_detail::gpt2_byte_piece(uint8_t(b)))
                                            : find(byte_token_text(uint8_t(b)));  // -1: dropped

    merges_.reserve(spec_.merges.size());
    for (size_t r = 0; r < spec_.merges.size(); ++r) {
      const std::string& m = spec_.merges[r];
      const size_t sp = m.find(' ', 1);
      const int32_t a = ids_.at(std::string_view(m).substr(0, sp));
      const int32_t b = ids_.at(std::string_view(m).substr(sp + 1));
      const int32_t ab = ids_.at(m.substr(0, sp) + m.substr(sp + 1));
      // A repeated pair keeps its first (best) rank.
      merges_.emplace(key(a, b), Merge{int32_t(r), ab});
    }
    specials_ = tokenizer_detail::special_tokens_by_length(spec_);

    // Decoded bytes of every token: code points of the byte alphabet back to bytes; anything
    // else (not produced by this encoder) is kept as its UTF-8.
    std::unordered_map<uint32_t, uint8_t> cp_byte;
    for (int b = 0; b < 256; ++b) {
      const std::string& s = tokenizer_detail::gpt2_byte_piece(uint8_t(b));
      cp_byte[decode_cp(s, 0).first] = uint8_t(b);
    }
    decoded_.resize(n);
    for (size_t i = 0; i < n; ++i) {
      const std::string& t = spec_.tokens[i];
      const TokenType type = spec_.type(int32_t(i));
      if (type == TokenType::Control || type == TokenType::Unknown ||
          type == TokenType::UserDefined) {
        decoded_[i] = t;
        continue;
      }
      if (!byte_encode_) {  // gemma4: U+2581 back to spaces; <0xXX> to its byte
        decoded_[i] = type == TokenType::Byte ? byte_of_token(t) : unescape_spaces(t);
        continue;
      }
      for (size_t k = 0; k < t.size();) {
        const size_t len = tokenizer_detail::utf8_valid_len(t, k);
        if (len == 0) {
          decoded_[i] += t[k++];
          continue;
        }
        auto it = cp_byte.find(decode_cp(t, k).first);
        if (it != cp_byte.end())
          decoded_[i] += char(it->second);
        else
          decoded_[i].append(t, k, len);
        k += len;
      }
    }
  }

  std::vector<int32_t> encode(std::string_view text, bool add_special,
                              bool parse_special) const override {
    std::vector<int32_t> out;
    if (add_special && spec_.add_bos) out.push_back(spec_.bos);
    Scratch sc;
    sc.match = pcre2_match_data_create_from_pattern(regexes_[0]->code(), nullptr);
    for (const Fragment& f :
         tokenizer_detail::split_special(text, spec_, specials_, parse_special)) {
      if (f.token >= 0) {
        out.push_back(f.token);
        continue;
      }
      std::string_view subject = text.substr(f.offset, f.length);
      if (!byte_encode_) {  // kept alive until the end of the call: the cache views it
        sc.escaped.push_back(escape_spaces(subject));
        subject = sc.escaped.back();
      }
      sc.pieces.assign(1, {0, subject.size()});
      for (const auto& re : regexes_) split(subject, *re, sc);
      for (const auto& [off, len] : sc.pieces) {
        // Pieces repeat (words), and a piece's tokens depend on its bytes alone.
        const std::string_view piece = subject.substr(off, len);
        auto it = sc.cache.find(piece);
        if (it == sc.cache.end()) {
          const size_t before = sc.cached_ids.size();
          encode_piece(piece, sc, sc.cached_ids);
          it = sc.cache
                   .emplace(piece, std::make_pair(uint32_t(before),
                                                  uint32_t(sc.cached_ids.size() - before)))
                   .first;
        }
        const auto [b, n] = it->second;
        out.insert(out.end(), sc.cached_ids.begin() + b, sc.cached_ids.begin() + b + n);
      }
    }
    pcre2_match_data_free(sc.match);
    if (add_special && spec_.add_eos) out.push_back(spec_.eos);
    return out;
  }

  std::string decode(std::span<const int32_t> ids, bool render_special) const override {
    std::string out;
    for (int32_t id : ids) {
      if (id < 0 || id >= n_vocab())
        throw TokenizerError("[tokenizer] decode: token id " + std::to_string(id) +
                             " is out of range for " + std::to_string(n_vocab()) + " tokens");
      const TokenType t = spec_.type(id);
      if ((t == TokenType::Control || t == TokenType::Unknown) && !render_special) continue;
      out += decoded_[size_t(id)];
    }
    return out;
  }

 private:
  struct Merge {
    int32_t rank, id;
  };
  struct Symbol {
    int32_t id;  // -1: merged away; kOutside: a character that is no token (gemma4)
    int prev, next;
    uint32_t off = 0, len = 0;  // its bytes in the piece (for the byte fallback)
  };
  static constexpr int32_t kOutside = -2;
  struct Bigram {
    int left, right;
    int32_t rank;
    int32_t left_id, right_id;  // the pair as it was when queued (stale check)
    int32_t merged;
  };
  struct BigramOrder {  // top = lowest rank, then leftmost (llama.cpp's llm_bigram_bpe)
    bool operator()(const Bigram& l, const Bigram& r) const {
      return l.rank > r.rank || (l.rank == r.rank && l.left > r.left);
    }
  };
  struct Scratch {
    pcre2_match_data* match = nullptr;
    std::vector<std::pair<size_t, size_t>> pieces, next;  // (offset, length) in the text
    std::vector<Symbol> sym;
    std::vector<Bigram> heap;
    std::string encoded;
    // Tokens of pieces seen in this call: (start, count) in cached_ids; keys view the text.
    std::unordered_map<std::string_view, std::pair<uint32_t, uint32_t>> cache;
    std::vector<int32_t> cached_ids;
    std::deque<std::string> escaped;  // gemma4: the fragments with U+2581 for spaces
  };

  static constexpr std::string_view kEscapedSpace = "\xe2\x96\x81";  // U+2581
  static std::string escape_spaces(std::string_view s) {
    std::string out;
    for (char c : s)
      if (c == ' ')
        out += kEscapedSpace;
      else
        out += c;
    return out;
  }
  static std::string unescape_spaces(std::string_view s) {
    std::string out;
    for (size_t i = 0; i < s.size();) {
      if (s.substr(i, 3) == kEscapedSpace) {
        out += ' ';
        i += 3;
      } else {
        out += s[i++];
      }
    }
    return out;
  }
  static std::string byte_token_text(uint8_t b) {
    static const char* hex = "0123456789ABCDEF";
    return std::string{'<', '0', 'x', hex[b >> 4], hex[b & 15], '>'};
  }
  // "<0xAB>" -> the byte 0xAB; any other spelling is kept as text.
  static std::string byte_of_token(const std::string& t) {
    for (int b = 0; b < 256; ++b)
      if (t == byte_token_text(uint8_t(b))) return std::string(1, char(b));
    return t;
  }

  static uint64_t key(int32_t a, int32_t b) { return (uint64_t(uint32_t(a)) << 32) | uint32_t(b); }

  static std::pair<uint32_t, size_t> decode_cp(std::string_view s, size_t i) {
    const size_t len = tokenizer_detail::utf8_valid_len(s, i);
    const uint8_t c = uint8_t(s[i]);
    if (len <= 1) return {c, 1};
    uint32_t cp = c & (0x7F >> len);
    for (size_t k = 1; k < len; ++k) cp = (cp << 6) | (uint8_t(s[i + k]) & 0x3F);
    return {cp, len};
  }

  // Splits every current piece into regex matches and the unmatched gaps between them (llama.cpp
  // keeps gaps as pieces too). Matching sees one piece at a time, so lookaheads stop at its end.
  void split(std::string_view text, const Regex& re, Scratch& sc) const {
    sc.next.clear();
    for (const auto& [off, len] : sc.pieces) {
      const auto* subj = reinterpret_cast<PCRE2_SPTR>(text.data() + off);
      size_t start = 0, prev = 0;
      while (start < len) {
        const int rc = pcre2_match(re.code(), subj, len, start, 0, sc.match, nullptr);
        if (rc == PCRE2_ERROR_NOMATCH) break;
        if (rc < 0) {
          PCRE2_UCHAR buf[256];
          pcre2_get_error_message(rc, buf, sizeof buf);
          throw TokenizerError(std::string("[tokenizer] pre-tokenizer regex failed: ") +
                               reinterpret_cast<const char*>(buf));
        }
        const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(sc.match);
        const size_t b = ov[0], e = ov[1];
        if (e == b) {  // none of our patterns matches empty; guard against looping anyway
          start = b + 1;
          continue;
        }
        if (b > prev) sc.next.push_back({off + prev, b - prev});
        sc.next.push_back({off + b, e - b});
        prev = start = e;
      }
      if (prev < len) sc.next.push_back({off + prev, len - prev});
    }
    sc.pieces.swap(sc.next);
  }

  int32_t find(std::string_view s) const {
    auto it = ids_.find(s);
    return it == ids_.end() ? -1 : it->second;
  }

  void push_bigram(Scratch& sc, int l, int r) const {
    if (l < 0 || r < 0) return;
    const int32_t a = sc.sym[size_t(l)].id, b = sc.sym[size_t(r)].id;
    if (a < 0 || b < 0) return;
    auto it = merges_.find(key(a, b));
    if (it == merges_.end()) return;
    sc.heap.push_back({l, r, it->second.rank, a, b, it->second.id});
    std::push_heap(sc.heap.begin(), sc.heap.end(), BigramOrder{});
  }

  void encode_piece(std::string_view piece, Scratch& sc, std::vector<int32_t>& out) const {
    if (ignore_merges_) {
      sc.encoded.clear();
      for (char c : piece) sc.encoded += tokenizer_detail::gpt2_byte_piece(uint8_t(c));
      if (const int32_t id = find(sc.encoded); id >= 0) {
        out.push_back(id);
        return;
      }
    }
    sc.sym.clear();
    if (byte_encode_) {
      // One symbol per byte: each byte's byte-level character is a token (checked at load).
      for (size_t i = 0; i < piece.size(); ++i)
        sc.sym.push_back({byte_token_[uint8_t(piece[i])], 0, 0, uint32_t(i), 1});
    } else {
      // gemma4: a run of newlines that is a token stays whole (llama.cpp's Gemma 4 fix).
      if (piece.find_first_not_of('\n') == std::string_view::npos)
        if (const int32_t id = find(piece); id >= 0) {
          out.push_back(id);
          return;
        }
      // One symbol per UTF-8 character (an invalid byte alone), its token or kOutside.
      for (size_t i = 0; i < piece.size();) {
        const size_t len = std::max<size_t>(1, tokenizer_detail::utf8_valid_len(piece, i));
        const int32_t id = find(piece.substr(i, len));
        sc.sym.push_back({id >= 0 ? id : kOutside, 0, 0, uint32_t(i), uint32_t(len)});
        i += len;
      }
    }
    const int n = int(sc.sym.size());
    for (int i = 0; i < n; ++i) {
      sc.sym[size_t(i)].prev = i - 1;
      sc.sym[size_t(i)].next = i + 1 == n ? -1 : i + 1;
    }
    sc.heap.clear();
    for (int i = 1; i < n; ++i) push_bigram(sc, i - 1, i);
    while (!sc.heap.empty()) {
      std::pop_heap(sc.heap.begin(), sc.heap.end(), BigramOrder{});
      const Bigram bg = sc.heap.back();
      sc.heap.pop_back();
      Symbol& l = sc.sym[size_t(bg.left)];
      Symbol& r = sc.sym[size_t(bg.right)];
      // Stale when either side was merged away or has grown since it was queued (llama.cpp
      // compares the texts; symbols only ever grow, so comparing ids is the same test).
      if (l.id < 0 || r.id < 0 || l.next != bg.right || l.id != bg.left_id || r.id != bg.right_id)
        continue;
      l.id = bg.merged;
      r.id = -1;
      l.next = r.next;
      if (r.next >= 0) sc.sym[size_t(r.next)].prev = bg.left;
      push_bigram(sc, l.prev, bg.left);
      push_bigram(sc, bg.left, l.next);
    }
    for (int i = n ? 0 : -1; i != -1; i = sc.sym[size_t(i)].next) {
      const Symbol& y = sc.sym[size_t(i)];
      if (y.id >= 0) {
        out.push_back(y.id);
        continue;
      }
      // Outside the vocabulary: its bytes as <0xXX> tokens, each dropped when absent (llama.cpp)
      for (uint32_t k = 0; k < y.len; ++k)
        if (const int32_t b = byte_token_[uint8_t(piece[y.off + k])]; b >= 0) out.push_back(b);
    }
  }

  std::vector<std::unique_ptr<Regex>> regexes_;
  bool ignore_merges_ = false;
  bool byte_encode_ = true;
  std::unordered_map<std::string_view, int32_t> ids_;  // views into spec_.tokens
  std::array<int32_t, 256> byte_token_{};
  std::unordered_map<uint64_t, Merge> merges_;
  std::vector<int32_t> specials_;
  std::vector<std::string> decoded_;
};

}  // namespace

namespace tokenizer_detail {

bool bpe_pre_supported(const std::string& pre) {
  return find_pre(pre) != nullptr;
}
const char* bpe_pre_supported_list() {
  return "default, gpt-2, llama-bpe (llama3, llama-v3), qwen2, gpt-4o, gemma4";
}

std::unique_ptr<Tokenizer> make_bpe_tokenizer(TokenizerSpec spec) {
  return std::make_unique<BpeTokenizer>(std::move(spec));
}

}  // namespace tokenizer_detail

}  // namespace accel
