// Whether two model files tokenize text alike, for methods that move token ids between a draft and
// a target: the rule for which tokenizer a file has (tokenizer-less files included) and a full
// comparison of two tokenizers. Vocabulary size alone never makes two tokenizers "the same".
// Must not load weights or tokenize text.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include "models/gguf.h"
#include "models/tokenizer.h"

namespace accel {

// The tokenizer a model file carries: its tokenizer.ggml.* metadata (validated; throws
// TokenizerError naming the file when it is inconsistent). A file without that metadata has a
// known tokenizer only when it is an accelbench synthetic model (accelbench.family set) whose
// vocabulary has the byte-level tokenizer's size: the synthetic families are defined over that
// tokenizer (byte_level_tokenizer_spec), even when a file was written without it. Any other
// tokenizer-less file gives nullopt: nothing says what its ids mean.
std::optional<TokenizerSpec> model_tokenizer_spec(const GgufFile& f, int64_t n_vocab);

// The first difference between two tokenizers in anything that changes the ids text gets or what
// an id means: model, pre-tokenizer (gpt2 only; llama ignores it), every token piece, score and
// type (an empty score or type list counts as all 0 / all Normal), every merge, the special ids
// (BOS, EOS, unknown, padding) and the add-BOS / add-EOS / space-prefix flags. "" when there is
// none; otherwise one line such as "token 97: 'a' vs 'b'" or "bos: 1 vs 256".
std::string tokenizer_difference(const TokenizerSpec& a, const TokenizerSpec& b);

}  // namespace accel
