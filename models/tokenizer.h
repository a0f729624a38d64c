// Tokenizers built from GGUF metadata (tokenizer.ggml.*): the SentencePiece-style `llama` model,
// the byte-level BPE `gpt2` model with its pre-tokenizers, and Gemma 4's UTF-8 BPE `gemma4`. Owns
// text <-> token ids only; knows nothing of weights or the forward pass. Metadata is untrusted:
// TokenizerSpec::from_gguf checks it.
#pragma once
#include <cstdint>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace accel {

class GgufFile;

class TokenizerError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// llama.cpp's token types (tokenizer.ggml.token_type).
// clang-format off
enum class TokenType : int32_t {
  Undefined = 0, Normal = 1, Unknown = 2, Control = 3, UserDefined = 4, Unused = 5, Byte = 6,
};
// clang-format on

// Everything a tokenizer needs, as read from (or written to) GGUF metadata.
struct TokenizerSpec {
  std::string model;                // tokenizer.ggml.model: "llama", "gpt2", "gemma4"
  std::string pre;                  // tokenizer.ggml.pre ("default" when absent)
  std::vector<std::string> tokens;  // tokenizer.ggml.tokens
  std::vector<float> scores;        // tokenizer.ggml.scores (may be empty for gpt2)
  std::vector<int32_t> types;       // tokenizer.ggml.token_type (may be empty: all Normal)
  std::vector<std::string> merges;  // tokenizer.ggml.merges ("a b" pairs, gpt2 and gemma4)
  int32_t bos = -1, eos = -1, unk = -1, pad = -1;
  bool add_bos = false, add_eos = false;
  bool add_space_prefix = true;  // tokenizer.ggml.add_space_prefix (llama model)

  // Reads and validates the tokenizer.ggml.* keys; throws TokenizerError naming the file and key
  // on missing or inconsistent data (counts that disagree, ids out of range, absurd lengths).
  static TokenizerSpec from_gguf(const GgufFile& f);

  // The consistency checks from_gguf applies, for specs built in code too (Tokenizer::create
  // calls it): counts agree, ids in range, bounded lengths, known model/pre, merges naming known
  // tokens whose concatenation is a token, a byte-level vocab holding all 256 byte tokens.
  // Throws TokenizerError "[tokenizer] <source>: <key>: ...".
  void validate(const std::string& source) const;
  // Type of token `id` (Normal when `types` is empty).
  TokenType type(int32_t id) const {
    return types.empty() ? TokenType::Normal : TokenType(types[size_t(id)]);
  }
};

// Bounds applied to untrusted vocabularies. The longest tokens measured: gpt-2 256 bytes,
// llama-spm 48 bytes; 4 KiB leaves room for other vocabularies without letting a crafted file
// make every lookup hash megabytes. The largest real vocabularies have about 256k tokens.
inline constexpr size_t kMaxTokenBytes = 4096;
inline constexpr size_t kMaxVocabSize = size_t(1) << 22;

class Tokenizer {
 public:
  virtual ~Tokenizer() = default;
  // Builds the tokenizer for spec.model / spec.pre; throws TokenizerError naming an unsupported
  // model or pre-tokenizer, or inconsistent data (e.g. a merge naming an unknown token).
  static std::unique_ptr<Tokenizer> create(const TokenizerSpec& spec);

  // add_special: prepend BOS / append EOS as the spec's add_bos/add_eos say.
  // parse_special: control/unknown token texts in `text` become those tokens; otherwise they
  // are tokenized as plain text. As in llama.cpp, user-defined tokens are always matched (they
  // are vocabulary additions meant to be atomic); longer special texts are matched first.
  virtual std::vector<int32_t> encode(std::string_view text, bool add_special,
                                      bool parse_special) const = 0;
  // Exact inverse of encode on valid input; control tokens decode to nothing unless
  // render_special is set. `llama` (SPM) with add_space_prefix: encode puts one space before the
  // text at the start and after each special token, so decode removes one leading space from the
  // text at the start and after each control/unknown/user-defined token (llama.cpp strips only
  // the first). Not invertible: U+2581 in the text (it is the escaped space), and control-token
  // texts when not parsed as special.
  virtual std::string decode(std::span<const int32_t> ids, bool render_special = false) const = 0;
  // The raw vocabulary string of one token (as stored in the vocab).
  const std::string& piece(int32_t id) const { return spec_.tokens.at(size_t(id)); }

  const TokenizerSpec& spec() const { return spec_; }
  int32_t n_vocab() const { return int32_t(spec_.tokens.size()); }
  int32_t bos() const { return spec_.bos; }
  int32_t eos() const { return spec_.eos; }
  bool is_end_of_generation(int32_t id) const { return id == spec_.eos; }

 protected:
  explicit Tokenizer(TokenizerSpec spec) : spec_(std::move(spec)) {}
  TokenizerSpec spec_;
};

}  // namespace accel

namespace accel {
// The tokenizer of the synthetic model families: byte-level `gpt2` model with the 256 byte tokens
// (in GPT-2's byte-to-unicode spelling), no merges, then <|bos|> (id 256) and <|eos|> (id 257) as
// control tokens. Any UTF-8 or binary text encodes to one token per byte.
TokenizerSpec byte_level_tokenizer_spec();
}  // namespace accel

// Shared pieces of the tokenizer implementation (tokenizer*.cpp); not for other callers.
namespace accel::tokenizer_detail {

// One piece of input text after special-token splitting: either a special token or a span of
// raw text.
struct Fragment {
  int32_t token = -1;  // >= 0: this special token; -1: raw text [offset, offset + length)
  size_t offset = 0, length = 0;
};

// Ids of the tokens that text may spell directly (Control, Unknown, UserDefined with non-empty
// text), longest text first, ties by id: the order llama.cpp matches them in.
std::vector<int32_t> special_tokens_by_length(const TokenizerSpec& spec);
// Splits `text` at occurrences of special tokens (UserDefined always, Control/Unknown only with
// parse_special), longest token first; empty raw spans are dropped.
std::vector<Fragment> split_special(std::string_view text, const TokenizerSpec& spec,
                                    const std::vector<int32_t>& specials, bool parse_special);

std::unique_ptr<Tokenizer> make_spm_tokenizer(TokenizerSpec spec);  // tokenizer_spm.cpp
std::unique_ptr<Tokenizer> make_bpe_tokenizer(TokenizerSpec spec);  // tokenizer_bpe.cpp
// The pre-tokenizers tokenizer_bpe.cpp implements (for validation messages).
bool bpe_pre_supported(const std::string& pre);
const char* bpe_pre_supported_list();

// Length of the valid UTF-8 sequence starting at s[i] (1..4), or 0 when the bytes there are not
// a complete, valid sequence (an invalid byte is then a symbol of its own).
size_t utf8_valid_len(std::string_view s, size_t i);

// GPT-2's byte-to-unicode map: the UTF-8 spelling of each byte in byte-level BPE vocabularies.
const std::string& gpt2_byte_piece(uint8_t b);

// A token string from a file for an error message: quoted, control bytes as \xNN, and cut after
// `max_bytes` with "..." so a message stays one readable line.
std::string quoted_piece(std::string_view s, size_t max_bytes = 64);

}  // namespace accel::tokenizer_detail
