// Import of a llama2.c legacy (version 0) checkpoint and its tokenizer.bin into a GGUF file of
// architecture `llama` with a SentencePiece (`llama`) tokenizer, as llama.cpp's
// convert-llama2c-to-ggml does. Both inputs are untrusted and validated before use.
#pragma once
#include <stdexcept>
#include <string>

namespace accel {

class Llama2cError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Reads `checkpoint` (7 x int32 header: dim, hidden_dim, n_layers, n_heads, n_kv_heads,
// vocab_size (negative: unshared classifier), seq_len; then f32 weights in llama2.c order) and
// `tokenizer` (int32 max_token_length; per token f32 score, int32 length, bytes) and writes
// `out_gguf` atomically. Throws Llama2cError naming the file and field on invalid input.
void import_llama2c(const std::string& checkpoint, const std::string& tokenizer,
                    const std::string& out_gguf);

}  // namespace accel
