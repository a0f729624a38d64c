// SpecPrefill's check that the draft's token ids mean what the target's do: the two files'
// tokenizers compared in full (models/tokenizer_match.h), once per pair of files (cached by their
// SHA-256), with the two tokenizers a draft of another tokenizer needs for re-tokenizing. Must not
// run a model or time anything.
#pragma once
#include <memory>
#include <string>

#include "models/model.h"
#include "models/tokenizer.h"

namespace accel::specprefill {

struct TokenizerPair {
  bool same = false;
  // Why not the same: the first differing field, or which file has no known tokenizer.
  std::string difference;
  // Both known and different: the tokenizers that move text between them (else null).
  std::shared_ptr<const Tokenizer> target, draft;
};

struct TokenizerCheck {
  std::shared_ptr<const TokenizerPair> pair;
  bool cached = false;  // decided by an earlier call for the same two digests
};

// Decides whether `draft` shares `target`'s tokenizer. With both digests non-empty the answer is
// remembered for the process, so the vocabularies are read and compared once per pair of files;
// with either empty it is decided afresh. Throws TokenizerError naming the file whose tokenizer
// metadata is inconsistent.
TokenizerCheck check_tokenizers(const Model& target, const Model& draft,
                                const std::string& target_digest, const std::string& draft_digest);

}  // namespace accel::specprefill
