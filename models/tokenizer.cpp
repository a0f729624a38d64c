// Tokenizer::create (the factory by tokenizer.ggml.model) and what both tokenizer models share:
// special-token splitting and UTF-8 sequence checks. It must not hold model-specific logic
// (merges, pre-tokenizers, whitespace conventions): see tokenizer_spm.cpp and tokenizer_bpe.cpp.
#include <algorithm>
#include <list>

#include "models/tokenizer.h"

namespace accel {

std::unique_ptr<Tokenizer> Tokenizer::create(const TokenizerSpec& spec) {
  spec.validate("tokenizer spec of model '" + spec.model + "'");
  if (spec.model == "llama") return tokenizer_detail::make_spm_tokenizer(spec);
  return tokenizer_detail::make_bpe_tokenizer(
      spec);  // gpt2 and gemma4 (validate() admits no other)
}

namespace tokenizer_detail {

size_t utf8_valid_len(std::string_view s, size_t i) {
  const auto at = [&](size_t k) { return uint8_t(s[k]); };
  const uint8_t c = at(i);
  if (c < 0x80) return 1;
  size_t len;
  uint32_t min_cp;
  if ((c & 0xE0) == 0xC0) {
    len = 2, min_cp = 0x80;
  } else if ((c & 0xF0) == 0xE0) {
    len = 3, min_cp = 0x800;
  } else if ((c & 0xF8) == 0xF0) {
    len = 4, min_cp = 0x10000;
  } else {
    return 0;  // continuation byte or 0xF8..0xFF as a lead
  }
  if (i + len > s.size()) return 0;
  uint32_t cp = c & (0x7F >> len);
  for (size_t k = 1; k < len; ++k) {
    if ((at(i + k) & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (at(i + k) & 0x3F);
  }
  // Overlong forms, surrogates and code points past U+10FFFF are invalid too.
  if (cp < min_cp || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return len;
}

std::vector<int32_t> special_tokens_by_length(const TokenizerSpec& spec) {
  std::vector<int32_t> ids;
  for (size_t i = 0; i < spec.tokens.size(); ++i) {
    const TokenType t = spec.type(int32_t(i));
    if ((t == TokenType::Control || t == TokenType::Unknown || t == TokenType::UserDefined) &&
        !spec.tokens[i].empty())
      ids.push_back(int32_t(i));
  }
  std::stable_sort(ids.begin(), ids.end(), [&](int32_t a, int32_t b) {
    return spec.tokens[size_t(a)].size() > spec.tokens[size_t(b)].size();
  });
  return ids;
}

std::vector<Fragment> split_special(std::string_view text, const TokenizerSpec& spec,
                                    const std::vector<int32_t>& specials, bool parse_special) {
  // llama.cpp's tokenizer_st_partition: each special token in turn (longest first) splits every
  // raw span at all its non-overlapping occurrences, scanning left to right.
  std::list<Fragment> frags;
  if (!text.empty()) frags.push_back({-1, 0, text.size()});
  for (int32_t id : specials) {
    const TokenType t = spec.type(id);
    if (!parse_special && t != TokenType::UserDefined) continue;
    const std::string& needle = spec.tokens[size_t(id)];
    for (auto it = frags.begin(); it != frags.end(); ++it) {
      if (it->token >= 0) continue;
      const std::string_view span = text.substr(it->offset, it->length);
      size_t pos = span.find(needle);
      if (pos == std::string_view::npos) continue;
      size_t base = 0;  // within span: start of the part not yet split
      const size_t off = it->offset;
      it = frags.erase(it);
      while (pos != std::string_view::npos) {
        if (pos > base) frags.insert(it, {-1, off + base, pos - base});
        frags.insert(it, {id, off + pos, needle.size()});
        base = pos + needle.size();
        pos = span.find(needle, base);
      }
      if (base < span.size()) frags.insert(it, {-1, off + base, span.size() - base});
      --it;  // the last inserted fragment; the loop's ++it moves past it
    }
  }
  return {frags.begin(), frags.end()};
}

}  // namespace tokenizer_detail

}  // namespace accel
