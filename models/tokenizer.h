// Tokenizers built from GGUF metadata (tokenizer.ggml.*): the SentencePiece-style `llama` model
// and the byte-level BPE `gpt2` model with its pre-tokenizers. Owns text <-> token ids only; knows
// nothing of weights or the forward pass. Metadata is untrusted: TokenizerSpec::from_gguf checks it.
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
enum class TokenType : int32_t {
  Undefined = 0, Normal = 1, Unknown = 2, Control = 3, UserDefined = 4, Unused = 5, Byte = 6,
};

// Everything a tokenizer needs, as read from (or written to) GGUF metadata.
struct TokenizerSpec {
  std::string model;                // tokenizer.ggml.model: "llama", "gpt2", ...
  std::string pre;                  // tokenizer.ggml.pre ("default" when absent)
  std::vector<std::string> tokens;  // tokenizer.ggml.tokens
  std::vector<float> scores;        // tokenizer.ggml.scores (may be empty for gpt2)
  std::vector<int32_t> types;       // tokenizer.ggml.token_type (may be empty: all Normal)
  std::vector<std::string> merges;  // tokenizer.ggml.merges ("a b" pairs, gpt2 only)
  int32_t bos = -1, eos = -1, unk = -1, pad = -1;
  bool add_bos = false, add_eos = false;
  bool add_space_prefix = true;     // tokenizer.ggml.add_space_prefix (llama model)

  // Reads and validates the tokenizer.ggml.* keys; throws TokenizerError naming the file and key
  // on missing or inconsistent data (counts that disagree, ids out of range, absurd lengths).
  static TokenizerSpec from_gguf(const GgufFile& f);
};

class Tokenizer {
 public:
  virtual ~Tokenizer() = default;
  // Builds the tokenizer for spec.model / spec.pre; throws TokenizerError naming an unsupported
  // model or pre-tokenizer, or inconsistent data (e.g. a merge naming an unknown token).
  static std::unique_ptr<Tokenizer> create(const TokenizerSpec& spec);

  // add_special: prepend BOS / append EOS as the spec's add_bos/add_eos say.
  // parse_special: control/user-defined token texts in `text` become those tokens; otherwise they
  // are tokenized as plain text.
  virtual std::vector<int32_t> encode(std::string_view text, bool add_special,
                                      bool parse_special) const = 0;
  // Exact inverse of encode on valid input; control tokens decode to nothing unless
  // render_special is set.
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
