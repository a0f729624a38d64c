// SpecPrefill on the sliding-window families (tiny-gemma3, tiny-gemma4, tiny-gpt-oss): keep = 1.0
// reproduces the baseline bit for bit with ring caches on both sides, the draft scores with its
// full-attention layers only, and a sparse prefill at original positions decodes from the full
// prompt length. (That the target's rings hold exactly the kept tokens a dense prefill's window
// would hold is checked against the naive forward in tests/models/model_test.cpp,
// SparsePrefillVsReference.)
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "methods/method.h"
#include "models/model.h"
#include "models/synthetic.h"
#include "suites/synthetic_prompt.h"
#include "tests/support/test_support.h"

namespace accel {
namespace {

class SpecPrefillSliding : public ::testing::TestWithParam<const char*> {
 protected:
  static void SetUpTestSuite() {
    dir_ = new test::TempDir();
    for (const char* f : {"tiny-gemma3", "tiny-gemma4", "tiny-gpt-oss"}) {
      const auto paths = make_synthetic_family(f, dir_->file(f), 5, DType::F32);
      models_[f] = {Model::load(paths[0]).release(), Model::load(paths[1]).release()};
    }
  }
  static void TearDownTestSuite() {
    for (auto& [name, m] : models_) {
      delete m.first;
      delete m.second;
    }
    models_.clear();
    delete dir_;
  }
  Outcome run(const std::string& method, nlohmann::json params, size_t n,
              KVDType kv = KVDType::F32) {
    const auto& [target, draft] = models_.at(GetParam());
    const Method& m = find_method(method);
    Engine e{.target = target, .models = {{"draft", draft}}, .prefill_chunk = 64, .kv_dtype = kv};
    Request r;
    r.prompt = synthetic_prompt(target->config().n_vocab, 256, {257}, n, 9);
    r.max_new_tokens = 12;
    r.keep_logits = 12;
    return m.run(e, r, resolve_params(m, params));
  }
  static inline test::TempDir* dir_ = nullptr;
  static inline std::map<std::string, std::pair<Model*, Model*>> models_;
};

// 300 tokens: ten times the 32-token window, so the rings have wrapped many times.
TEST_P(SpecPrefillSliding, KeepOneEqualsBaselineBitForBit) {
  for (KVDType kv : {KVDType::F32, KVDType::Int4Uniform}) {
    SCOPED_TRACE(kv_dtype_name(kv));
    const Outcome base = run("baseline", {}, 300, kv);
    const Outcome sp = run("specprefill", {{"keep", 1.0}, {"force", true}}, 300, kv);
    EXPECT_EQ(sp.tokens, base.tokens);
    ASSERT_EQ(sp.logits.size(), base.logits.size());
    for (size_t i = 0; i < sp.logits.size(); ++i)
      EXPECT_TRUE(test::bit_equal(sp.logits[i], base.logits[i])) << "step " << i;
    EXPECT_EQ(sp.kv_bytes, base.kv_bytes);
    // The gemma3 and gpt-oss drafts have two layers, layer 0 sliding; gemma4's three, layers 0
    // and 1 sliding: one full layer scores.
    EXPECT_EQ(sp.stats["scoring_layers"], 1);
  }
}

// keep 0.2 of 600 tokens: the kept chunks are prefilled at their original positions and the
// decode continues at position 600; the sliding layers' bytes are those of their window only.
TEST_P(SpecPrefillSliding, SparsePrefillDecodesFromTheFullPromptLength) {
  const Outcome sp = run("specprefill", {{"keep", 0.2}, {"force", true}}, 600);
  const size_t n_chunks = (600 + 31) / 32;
  EXPECT_EQ(sp.stats["n_chunks"], n_chunks);
  EXPECT_LT(sp.kept_tokens, 600u / 4);
  EXPECT_EQ(sp.tokens.size(), 12u);
  const Outcome base = run("baseline", {}, 600);
  EXPECT_LT(sp.kv_bytes, base.kv_bytes);  // the full layers hold only the kept tokens
}

INSTANTIATE_TEST_SUITE_P(Families, SpecPrefillSliding,
                         ::testing::Values("tiny-gemma3", "tiny-gemma4", "tiny-gpt-oss"),
                         test::NameWithUnderscores());

}  // namespace
}  // namespace accel
