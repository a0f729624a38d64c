// TokenizerSpec: reading tokenizer.ggml.* from a GGUF file, the consistency checks every spec
// must pass (the metadata is hostile), and the byte-level spec of the synthetic families.
// It must not tokenize anything: the algorithms live in tokenizer_spm.cpp / tokenizer_bpe.cpp.
#include <array>
#include <cmath>
#include <string_view>
#include <unordered_map>

#include "models/gguf.h"
#include "models/tokenizer.h"

namespace accel {

namespace {

[[noreturn]] void fail(const std::string& source, const std::string& key, const std::string& what) {
  throw TokenizerError("[tokenizer] " + source + ": " + key + ": " + what);
}

}  // namespace

namespace tokenizer_detail {

const std::string& gpt2_byte_piece(uint8_t b) {
  // Printable bytes map to themselves; the rest, in byte order, to U+0100, U+0101, ...
  static const std::array<std::string, 256> table = [] {
    std::array<std::string, 256> t;
    auto printable = [](int c) {
      return (c >= 0x21 && c <= 0x7E) || (c >= 0xA1 && c <= 0xAC) || (c >= 0xAE && c <= 0xFF);
    };
    int n = 0;
    for (int c = 0; c < 256; ++c) {
      const uint32_t cp = printable(c) ? uint32_t(c) : uint32_t(256 + n++);
      std::string& s = t[size_t(c)];
      if (cp < 0x80) {
        s = std::string(1, char(cp));
      } else {  // all code points here are < 0x800: two bytes
        s += char(0xC0 | (cp >> 6));
        s += char(0x80 | (cp & 0x3F));
      }
    }
    return t;
  }();
  return table[b];
}

}  // namespace tokenizer_detail

void TokenizerSpec::validate(const std::string& source) const {
  if (model != "llama" && model != "gpt2" && model != "gemma4")
    fail(source, "tokenizer.ggml.model",
         tokenizer_detail::quoted_piece(model) +
             " is not supported (supported: llama, gpt2, gemma4)");
  if (model == "gemma4" && pre != "gemma4")
    fail(source, "tokenizer.ggml.pre",
         "model 'gemma4' takes pre-tokenizer 'gemma4', not " + tokenizer_detail::quoted_piece(pre));
  if (model == "gpt2" && !tokenizer_detail::bpe_pre_supported(pre))
    fail(source, "tokenizer.ggml.pre",
         "pre-tokenizer " + tokenizer_detail::quoted_piece(pre) +
             " of model 'gpt2' is not supported (supported: " +
             tokenizer_detail::bpe_pre_supported_list() + ")");
  // The llama (SPM) model has no pre-tokenizer; llama.cpp ignores the key for it, and so do we.

  const size_t n = tokens.size();
  if (n == 0) fail(source, "tokenizer.ggml.tokens", "empty vocabulary");
  if (n > kMaxVocabSize)
    fail(source, "tokenizer.ggml.tokens",
         std::to_string(n) + " tokens exceeds the limit of " + std::to_string(kMaxVocabSize));
  for (size_t i = 0; i < n; ++i)
    if (tokens[i].size() > kMaxTokenBytes)
      fail(source, "tokenizer.ggml.tokens",
           "token " + std::to_string(i) + " is " + std::to_string(tokens[i].size()) +
               " bytes, over the limit of " + std::to_string(kMaxTokenBytes));
  if (!scores.empty() && scores.size() != n)
    fail(source, "tokenizer.ggml.scores",
         std::to_string(scores.size()) + " scores for " + std::to_string(n) + " tokens");
  for (size_t i = 0; i < scores.size(); ++i)
    if (!std::isfinite(scores[i]))  // NaN would break the merge queue's ordering
      fail(source, "tokenizer.ggml.scores",
           "score of token " + std::to_string(i) + " is not finite");
  if (!types.empty() && types.size() != n)
    fail(source, "tokenizer.ggml.token_type",
         std::to_string(types.size()) + " types for " + std::to_string(n) + " tokens");
  for (size_t i = 0; i < types.size(); ++i)
    if (types[i] < 0 || types[i] > int32_t(TokenType::Byte))
      fail(source, "tokenizer.ggml.token_type",
           "token " + std::to_string(i) + " has type " + std::to_string(types[i]) +
               " (valid: 0..6)");

  const std::pair<const char*, int32_t> ids[] = {{"tokenizer.ggml.bos_token_id", bos},
                                                 {"tokenizer.ggml.eos_token_id", eos},
                                                 {"tokenizer.ggml.unknown_token_id", unk},
                                                 {"tokenizer.ggml.padding_token_id", pad}};
  for (const auto& [key, id] : ids)
    if (id < -1 || id >= int64_t(n))
      fail(source, key,
           "id " + std::to_string(id) + " is out of range for " + std::to_string(n) + " tokens");
  if (add_bos && bos < 0)
    fail(source, "tokenizer.ggml.add_bos_token", "is true but there is no bos_token_id");
  if (add_eos && eos < 0)
    fail(source, "tokenizer.ggml.add_eos_token", "is true but there is no eos_token_id");

  if (model == "llama" && !merges.empty())
    fail(source, "tokenizer.ggml.merges", "the llama (SentencePiece) model takes no merges");
  if (model == "llama") return;

  std::unordered_map<std::string_view, int32_t> ids_of;
  ids_of.reserve(n);
  for (size_t i = 0; i < n; ++i) ids_of[tokens[i]] = int32_t(i);
  for (int b = 0; b < 256 && model == "gpt2"; ++b)
    if (!ids_of.count(tokenizer_detail::gpt2_byte_piece(uint8_t(b))))
      fail(source, "tokenizer.ggml.tokens",
           "byte-level vocabulary lacks the token for byte " + std::to_string(b) + " (" +
               tokenizer_detail::quoted_piece(tokenizer_detail::gpt2_byte_piece(uint8_t(b))) + ")");
  if (merges.size() > kMaxVocabSize)
    fail(source, "tokenizer.ggml.merges", std::to_string(merges.size()) + " merges is too many");
  std::string joined;
  for (size_t i = 0; i < merges.size(); ++i) {
    const std::string& m = merges[i];
    const std::string key = "tokenizer.ggml.merges[" + std::to_string(i) + "]";
    // As llama.cpp: the separator is the first space after the first byte.
    const size_t sp = m.size() > 1 ? m.find(' ', 1) : std::string::npos;
    if (sp == std::string::npos)
      fail(source, key, tokenizer_detail::quoted_piece(m) + " is not a pair 'a b'");
    const std::string_view a(m.data(), sp), b(m.data() + sp + 1, m.size() - sp - 1);
    if (!ids_of.count(a))
      fail(source, key,
           tokenizer_detail::quoted_piece(m) + " names unknown token " +
               tokenizer_detail::quoted_piece(a));
    if (!ids_of.count(b))
      fail(source, key,
           tokenizer_detail::quoted_piece(m) + " names unknown token " +
               tokenizer_detail::quoted_piece(b));
    joined.assign(a);
    joined.append(b);
    if (!ids_of.count(joined))
      fail(source, key,
           tokenizer_detail::quoted_piece(m) + " merges into " +
               tokenizer_detail::quoted_piece(joined) + ", which is not a token");
  }
}

TokenizerSpec TokenizerSpec::from_gguf(const GgufFile& f) {
  const std::string& path = f.path();
  TokenizerSpec s;
  try {
    if (!f.has("tokenizer.ggml.model"))
      fail(path, "tokenizer.ggml.model", "missing (the file has no tokenizer)");
    s.model = f.get_string("tokenizer.ggml.model");
    s.pre = f.get_string_opt("tokenizer.ggml.pre").value_or("default");
    // Refuse unsupported names before reading (and checking) large arrays for nothing.
    if (s.model != "llama" && s.model != "gpt2" && s.model != "gemma4")
      fail(path, "tokenizer.ggml.model",
           tokenizer_detail::quoted_piece(s.model) +
               " is not supported (supported: llama, gpt2, gemma4)");
    if (s.model == "gemma4") s.pre = "gemma4";  // llama.cpp sets it whatever the key says
    if (s.model == "gpt2" && !tokenizer_detail::bpe_pre_supported(s.pre))
      fail(path, "tokenizer.ggml.pre",
           "pre-tokenizer " + tokenizer_detail::quoted_piece(s.pre) +
               " of model 'gpt2' is not supported (supported: " +
               tokenizer_detail::bpe_pre_supported_list() + ")");
    if (!f.has("tokenizer.ggml.tokens")) fail(path, "tokenizer.ggml.tokens", "missing");
    s.tokens = f.get_string_array("tokenizer.ggml.tokens");
    if (f.has("tokenizer.ggml.scores")) {
      const std::vector<double> sc = f.get_float_array("tokenizer.ggml.scores");
      s.scores.assign(sc.begin(), sc.end());
    }
    if (f.has("tokenizer.ggml.token_type")) {
      const std::vector<int64_t> ty = f.get_int_array("tokenizer.ggml.token_type");
      s.types.reserve(ty.size());
      for (size_t i = 0; i < ty.size(); ++i) {
        if (ty[i] < 0 || ty[i] > int64_t(TokenType::Byte))
          fail(path, "tokenizer.ggml.token_type",
               "token " + std::to_string(i) + " has type " + std::to_string(ty[i]) +
                   " (valid: 0..6)");
        s.types.push_back(int32_t(ty[i]));
      }
    }
    if (f.has("tokenizer.ggml.merges")) s.merges = f.get_string_array("tokenizer.ggml.merges");
    auto id = [&](const char* key) -> int32_t {
      if (!f.has(key)) return -1;
      const GgufValue* v = f.find(key);
      // Signed keys may say -1 for "none"; anything else must be a valid id (checked below).
      if (v->type == GgufType::INT32 || v->type == GgufType::INT64 || v->type == GgufType::INT16 ||
          v->type == GgufType::INT8) {
        if (v->i == -1) return -1;
        if (v->i < 0 || v->i > int64_t(kMaxVocabSize))
          fail(path, key, "id " + std::to_string(v->i) + " is out of range");
        return int32_t(v->i);
      }
      const uint64_t u = f.get_uint(key);
      // llama.cpp's converters write LLAMA_TOKEN_NULL (-1) as uint32 0xFFFFFFFF for "none".
      if (v->type == GgufType::UINT32 && u == 0xFFFFFFFFull) return -1;
      if (u >= s.tokens.size())
        fail(path, key,
             "id " + std::to_string(u) + " is out of range for " + std::to_string(s.tokens.size()) +
                 " tokens");
      return int32_t(u);
    };
    s.bos = id("tokenizer.ggml.bos_token_id");
    s.eos = id("tokenizer.ggml.eos_token_id");
    s.unk = id("tokenizer.ggml.unknown_token_id");
    s.pad = id("tokenizer.ggml.padding_token_id");
    // Defaults as llama.cpp: SentencePiece models and the Llama 3 pre-tokenizer group add BOS
    // unless the key says otherwise.
    const bool llama3 = s.pre == "llama-bpe" || s.pre == "llama3" || s.pre == "llama-v3";
    s.add_bos = f.has("tokenizer.ggml.add_bos_token")
                    ? f.get_bool("tokenizer.ggml.add_bos_token")
                    : s.bos >= 0 && (s.model == "llama" || (s.model == "gpt2" && llama3));
    if (s.model == "gemma4") s.add_bos = true;  // llama.cpp's Gemma 4 override
    s.add_eos = f.has("tokenizer.ggml.add_eos_token") && f.get_bool("tokenizer.ggml.add_eos_token");
    s.add_space_prefix = f.has("tokenizer.ggml.add_space_prefix")
                             ? f.get_bool("tokenizer.ggml.add_space_prefix")
                             : s.model == "llama";
  } catch (const GgufError& e) {
    // Wrong value types and the like: the reader's message already names the file and key.
    throw TokenizerError(std::string("[tokenizer] ") + e.what());
  }
  s.validate(path);
  return s;
}

TokenizerSpec byte_level_tokenizer_spec() {
  TokenizerSpec s;
  s.model = "gpt2";
  s.pre = "gpt-2";
  s.tokens.reserve(258);
  for (int b = 0; b < 256; ++b) s.tokens.push_back(tokenizer_detail::gpt2_byte_piece(uint8_t(b)));
  s.tokens.push_back("<|bos|>");
  s.tokens.push_back("<|eos|>");
  s.types.assign(256, int32_t(TokenType::Normal));
  s.types.push_back(int32_t(TokenType::Control));
  s.types.push_back(int32_t(TokenType::Control));
  s.bos = 256;
  s.eos = 257;
  s.add_bos = true;
  s.add_eos = false;
  s.add_space_prefix = false;
  return s;
}

}  // namespace accel

namespace accel::tokenizer_detail {

std::string quoted_piece(std::string_view s, size_t max_bytes) {
  std::string out = "'";
  for (char c : s.substr(0, max_bytes)) {
    if (uint8_t(c) < 0x20) {
      static const char* hex = "0123456789abcdef";
      out += "\\x";
      out += hex[uint8_t(c) >> 4];
      out += hex[uint8_t(c) & 15];
    } else {
      out += c;
    }
  }
  if (s.size() > max_bytes) out += "...";
  return out + "'";
}

}  // namespace accel::tokenizer_detail
