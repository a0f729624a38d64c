// SpecPrefill's tokenizer check (specprefill_tokenizers.h): the comparison and its per-process
// cache. Must not run a model or time anything.
#include "methods/specprefill_tokenizers.h"

#include <map>
#include <mutex>
#include <optional>
#include <utility>

#include "models/tokenizer_match.h"

namespace accel::specprefill {

namespace {

std::optional<TokenizerSpec> spec_of(const Model& m) {
  return model_tokenizer_spec(m.file(), m.config().n_vocab);
}

std::shared_ptr<const TokenizerPair> decide(const Model& target, const Model& draft) {
  auto pair = std::make_shared<TokenizerPair>();
  const std::optional<TokenizerSpec> t = spec_of(target), d = spec_of(draft);
  if (!t || !d) {
    pair->difference = "'" + (t ? draft : target).path() + "' has no tokenizer metadata";
    return pair;
  }
  pair->difference = tokenizer_difference(*t, *d);
  pair->same = pair->difference.empty();
  if (!pair->same) {
    pair->target = Tokenizer::create(*t);
    pair->draft = Tokenizer::create(*d);
  }
  return pair;
}

struct Cache {
  std::mutex mu;
  std::map<std::pair<std::string, std::string>, std::shared_ptr<const TokenizerPair>> pairs;
};

Cache& cache() {
  static Cache c;
  return c;
}

}  // namespace

TokenizerCheck check_tokenizers(const Model& target, const Model& draft,
                                const std::string& target_digest, const std::string& draft_digest) {
  if (target_digest.empty() || draft_digest.empty()) return {decide(target, draft), false};
  Cache& c = cache();
  const auto key = std::make_pair(target_digest, draft_digest);
  {
    std::lock_guard<std::mutex> lock(c.mu);
    if (const auto it = c.pairs.find(key); it != c.pairs.end()) return {it->second, true};
  }
  // Decided outside the lock (it reads whole vocabularies); a concurrent first call for the same
  // pair decides it too, with the same answer.
  std::shared_ptr<const TokenizerPair> pair = decide(target, draft);
  std::lock_guard<std::mutex> lock(c.mu);
  return {c.pairs.emplace(key, std::move(pair)).first->second, false};
}

}  // namespace accel::specprefill
