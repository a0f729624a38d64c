// SpecPrefill's draft tokenizer check on the tiny family: a draft whose vocabulary has the
// target's size but differs (a swapped pair of pieces, a score, a token type, a special id) is
// refused for positions=original with an error naming both files, and re-tokenized for
// positions=contiguous; the family's own draft shares ids; the verdict is cached per pair of
// digests and computed afresh without them.
#include "methods/specprefill_tokenizers.h"

#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "methods/method.h"
#include "models/gguf.h"
#include "models/synthetic.h"
#include "models/tokenizer_metadata.h"
#include "suites/synthetic_prompt.h"
#include "tests/support/test_support.h"
#include "tests/support/tiny_family.h"

namespace accel {
namespace {

// A copy of the model file at `src` whose tokenizer metadata is `spec` (weights unchanged).
void copy_with_tokenizer(const std::string& src, const std::string& dst,
                         const TokenizerSpec& spec) {
  const GgufFile f = GgufFile::open(src);
  GgufWriter w(f.alignment());
  for (const auto& [key, value] : f.metadata()) w.set(key, value);
  write_tokenizer_metadata(w, spec);
  for (const GgufTensorInfo& t : f.tensors())
    w.add_tensor(t.name, t.dims, t.type, f.tensor_data(t), size_t(t.n_bytes));
  w.write(dst);
}

struct Mutation {
  const char* name;
  std::function<void(TokenizerSpec&)> apply;
  const char* difference;  // what the error must say differs
};

const Mutation kMutations[] = {
    {"swapped_pieces", [](TokenizerSpec& s) { std::swap(s.tokens[97], s.tokens[98]); },
     "token 97: 'a' vs 'b'"},
    {"score", [](TokenizerSpec& s) { s.scores.assign(s.tokens.size(), 0.f), s.scores[5] = -1.f; },
     "token 5 score"},
    {"type", [](TokenizerSpec& s) { s.types[120] = int32_t(TokenType::UserDefined); },
     "token 120 type"},
    {"special_ids", [](TokenizerSpec& s) { std::swap(s.bos, s.eos); }, "bos: 256 vs 257"},
};

class SpecPrefillTokenizers : public ::testing::TestWithParam<Mutation> {
 protected:
  static void SetUpTestSuite() {
    const test::TinyFamily& family = test::tiny_family();
    dir_ = family.dir.get();
    target_ = family.target.get();
    draft_ = family.draft.get();
  }
  // The family's draft with its tokenizer changed by `m`: the same vocabulary size.
  static std::unique_ptr<Model> mutated_draft(const Mutation& m) {
    TokenizerSpec spec = TokenizerSpec::from_gguf(draft_->file());
    m.apply(spec);
    const std::string path = dir_->file(std::string("draft-") + m.name + ".gguf");
    copy_with_tokenizer(draft_->path(), path, spec);
    auto d = Model::load(path);
    EXPECT_EQ(d->config().n_vocab, target_->config().n_vocab);
    return d;
  }
  static Outcome run(const Model* draft, const nlohmann::json& params,
                     std::map<std::string, std::string> digests = {}) {
    const Method& m = find_method("specprefill");
    Engine e{.target = target_, .models = {{"draft", draft}}, .prefill_chunk = 64};
    e.digests = std::move(digests);
    Request r;
    // BOS, then bytes only: the text round-trips through any byte-level tokenizer exactly.
    r.prompt = synthetic_prompt(target_->config().n_vocab, 256, {256, 257}, 300, 3);
    r.max_new_tokens = 4;
    return m.run(e, r, resolve_params(m, params));
  }
  static inline const test::TempDir* dir_ = nullptr;
  static inline const Model* target_ = nullptr;
  static inline const Model* draft_ = nullptr;
};

TEST_P(SpecPrefillTokenizers, SameSizeOtherVocabularyIsRefusedForOriginalPositions) {
  const auto draft = mutated_draft(GetParam());
  try {
    run(draft.get(), {{"keep", 0.5}, {"force", true}, {"positions", "original"}});
    FAIL() << "a draft with another tokenizer was accepted for positions=original";
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(draft->path()), std::string::npos) << what;
    EXPECT_NE(what.find(target_->path()), std::string::npos) << what;
    EXPECT_NE(what.find(GetParam().difference), std::string::npos) << what;
  }
}

TEST_P(SpecPrefillTokenizers, SameSizeOtherVocabularyIsReTokenizedForContiguousPositions) {
  const auto draft = mutated_draft(GetParam());
  const Outcome o = run(draft.get(), {{"keep", 1.0}, {"force", true}, {"positions", "contiguous"}});
  EXPECT_EQ(o.stats["draft_tokenizer"], "retokenized");
  // keep = 1: the whole text crosses and comes back as the target's own prompt.
  EXPECT_EQ(o.stats["target_kept_tokens"], 300u);
}

INSTANTIATE_TEST_SUITE_P(Mutations, SpecPrefillTokenizers, ::testing::ValuesIn(kMutations),
                         [](const auto& info) { return std::string(info.param.name); });

using SpecPrefillSameTokenizer = SpecPrefillTokenizers;

TEST_F(SpecPrefillSameTokenizer, TheFamilysOwnDraftSharesIds) {
  const Outcome o = run(draft_, {{"keep", 0.5}, {"force", true}, {"positions", "original"}});
  EXPECT_EQ(o.stats["draft_tokenizer"], "shared");
  EXPECT_FALSE(o.stats.contains("draft_prompt_tokens"));  // no re-tokenization happened
}

TEST_F(SpecPrefillSameTokenizer, TheVerdictIsCachedPerPairOfDigests) {
  const std::map<std::string, std::string> digests = {{"target", "digest-of-target-for-cache-test"},
                                                      {"draft", "digest-of-draft-for-cache-test"}};
  const nlohmann::json params = {{"keep", 0.5}, {"force", true}};
  EXPECT_FALSE(run(draft_, params, digests).stats["tokenizer_check_cached"].get<bool>());
  EXPECT_TRUE(run(draft_, params, digests).stats["tokenizer_check_cached"].get<bool>());
  // Without digests nothing identifies the files: decided afresh every time.
  EXPECT_FALSE(run(draft_, params).stats["tokenizer_check_cached"].get<bool>());
  EXPECT_FALSE(run(draft_, params).stats["tokenizer_check_cached"].get<bool>());
}

TEST_F(SpecPrefillSameTokenizer, ACachedRefusalIsTheSameObjectAndStillRefuses) {
  const auto draft = mutated_draft(kMutations[0]);
  const auto first = specprefill::check_tokenizers(*target_, *draft, "t-refusal", "d-refusal");
  const auto second = specprefill::check_tokenizers(*target_, *draft, "t-refusal", "d-refusal");
  EXPECT_FALSE(first.cached);
  EXPECT_TRUE(second.cached);
  EXPECT_EQ(first.pair.get(), second.pair.get());
  EXPECT_FALSE(second.pair->same);
  // The other order is another pair (target and draft roles differ).
  EXPECT_FALSE(specprefill::check_tokenizers(*target_, *draft, "d-refusal", "t-refusal").cached);
}

}  // namespace
}  // namespace accel
