// Tokenizer identity (tokenizer_match.h): which tokenizer a file has and the field-by-field
// comparison of two. Must not tokenize text or touch weights.
#include "models/tokenizer_match.h"

#include <algorithm>
#include <cstring>
#include <string_view>

namespace accel {

namespace {

// A token piece for a message (shorter than a load error's: two of them share one line).
std::string shown(std::string_view s) {
  return tokenizer_detail::quoted_piece(s, 40);
}

float score_of(const TokenizerSpec& s, size_t i) {
  return s.scores.empty() ? 0.f : s.scores[i];
}

// Scores compared by their bits: a NaN score differs from nothing but itself.
bool same_bits(float a, float b) {
  return std::memcmp(&a, &b, sizeof a) == 0;
}

std::string versus(const std::string& field, const std::string& a, const std::string& b) {
  return field + ": " + a + " vs " + b;
}

std::string vocabulary_difference(const TokenizerSpec& a, const TokenizerSpec& b) {
  if (a.tokens.size() != b.tokens.size())
    return versus("vocabulary size", std::to_string(a.tokens.size()),
                  std::to_string(b.tokens.size()));
  for (size_t i = 0; i < a.tokens.size(); ++i) {
    const std::string id = "token " + std::to_string(i);
    if (a.tokens[i] != b.tokens[i]) return versus(id, shown(a.tokens[i]), shown(b.tokens[i]));
    if (!same_bits(score_of(a, i), score_of(b, i)))
      return versus(id + " score", std::to_string(score_of(a, i)), std::to_string(score_of(b, i)));
    const int32_t ta = int32_t(a.type(int32_t(i))), tb = int32_t(b.type(int32_t(i)));
    if (ta != tb) return versus(id + " type", std::to_string(ta), std::to_string(tb));
  }
  return "";
}

std::string merges_difference(const TokenizerSpec& a, const TokenizerSpec& b) {
  if (a.merges.size() != b.merges.size())
    return versus("merge count", std::to_string(a.merges.size()), std::to_string(b.merges.size()));
  const auto [ia, ib] = std::mismatch(a.merges.begin(), a.merges.end(), b.merges.begin());
  if (ia == a.merges.end()) return "";
  return versus("merge " + std::to_string(ia - a.merges.begin()), shown(*ia), shown(*ib));
}

std::string specials_difference(const TokenizerSpec& a, const TokenizerSpec& b) {
  const std::pair<const char*, int32_t TokenizerSpec::*> ids[] = {{"bos", &TokenizerSpec::bos},
                                                                  {"eos", &TokenizerSpec::eos},
                                                                  {"unknown", &TokenizerSpec::unk},
                                                                  {"padding", &TokenizerSpec::pad}};
  for (const auto& [name, id] : ids)
    if (a.*id != b.*id) return versus(name, std::to_string(a.*id), std::to_string(b.*id));
  const std::pair<const char*, bool TokenizerSpec::*> flags[] = {
      {"add_bos", &TokenizerSpec::add_bos},
      {"add_eos", &TokenizerSpec::add_eos},
      {"add_space_prefix", &TokenizerSpec::add_space_prefix}};
  for (const auto& [name, flag] : flags)
    if (a.*flag != b.*flag)
      return versus(name, a.*flag ? "true" : "false", b.*flag ? "true" : "false");
  return "";
}

}  // namespace

std::optional<TokenizerSpec> model_tokenizer_spec(const GgufFile& f, int64_t n_vocab) {
  if (f.has("tokenizer.ggml.model")) return TokenizerSpec::from_gguf(f);
  TokenizerSpec bytes = byte_level_tokenizer_spec();
  if (f.has("accelbench.family") && n_vocab == int64_t(bytes.tokens.size())) return bytes;
  return std::nullopt;
}

std::string tokenizer_difference(const TokenizerSpec& a, const TokenizerSpec& b) {
  if (a.model != b.model) return versus("model", shown(a.model), shown(b.model));
  if (a.model == "gpt2" && a.pre != b.pre)
    return versus("pre-tokenizer", shown(a.pre), shown(b.pre));
  std::string d = vocabulary_difference(a, b);
  if (d.empty()) d = merges_difference(a, b);
  if (d.empty()) d = specials_difference(a, b);
  return d;
}

}  // namespace accel
