// ModelSession (see model_session.h).
#include "harness/model_session.h"

#include <random>
#include <stdexcept>

namespace accel {

ModelSession ModelSession::open(const std::string& path) {
  ModelSession s;
  s.model = Model::load(path);
  try {
    s.tokenizer = Tokenizer::create(TokenizerSpec::from_gguf(s.model->file()));
  } catch (const std::exception& e) {
    s.tokenizer_error = e.what();
  }
  return s;
}

const Tokenizer& ModelSession::require_tokenizer(const std::string& what) const {
  if (!tokenizer)
    throw std::runtime_error(model->path() + ": " + what +
                             " needs the model's tokenizer, which is not supported (" +
                             tokenizer_error + "); use --random-prompt N to run from token ids");
  return *tokenizer;
}

std::vector<int32_t> ModelSession::encode_prompt(const std::string& text) const {
  const Tokenizer& t = require_tokenizer("a text prompt");
  std::vector<int32_t> ids = t.encode(text, /*add_special=*/true, /*parse_special=*/false);
  if (ids.empty() && t.bos() >= 0) ids.push_back(t.bos());
  if (ids.empty())
    throw std::runtime_error("the prompt is empty and the tokenizer of " + model->path() +
                             " has no BOS token to start from");
  return ids;
}

std::vector<int32_t> random_prompt(int n_vocab, size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int32_t> d(0, n_vocab - 1);
  std::vector<int32_t> ids(n);
  for (auto& x : ids) x = d(rng);
  return ids;
}

}  // namespace accel
