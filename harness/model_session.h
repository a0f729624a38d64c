// A model opened for a command: the weights plus its tokenizer when the tokenizer is supported.
// Owns the policy "a model runs without its tokenizer": an unsupported tokenizer is remembered
// with its reason, and only text prompts are refused.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "models/model.h"
#include "models/tokenizer.h"

namespace accel {

struct ModelSession {
  std::unique_ptr<Model> model;
  std::unique_ptr<Tokenizer> tokenizer;  // null when unsupported or absent
  std::string tokenizer_error;           // why tokenizer is null

  static ModelSession open(const std::string& path);
  // The tokenizer, or throws naming the model file and why text cannot be used.
  const Tokenizer& require_tokenizer(const std::string& what) const;
  // Prompt ids for a text prompt: BOS (when the tokenizer adds it) then the text; "" = BOS only.
  std::vector<int32_t> encode_prompt(const std::string& text) const;
};

// n seeded uniform token ids in [0, n_vocab).
std::vector<int32_t> random_prompt(int n_vocab, size_t n, uint64_t seed);

}  // namespace accel
