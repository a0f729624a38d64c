// State drift (methods/state_drift.h) on tiny-qwen35 (and Mamba-2 states on tiny-nemotron-h): the
// stat against a plain double-precision distance of the states, exactly zero when SpecPrefill keeps
// every token, positive when it keeps a part, no effect on what the method generates, and a clear
// refusal for a target with no recurrent layer.
#include "methods/state_drift.h"

#include <gtest/gtest.h>

#include <cmath>

#include "methods/method.h"
#include "models/generation.h"
#include "models/synthetic.h"
#include "suites/synthetic_prompt.h"
#include "tests/support/test_support.h"
#include "tests/support/tiny_family.h"

namespace accel {
namespace {

class StateDrift : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new test::TempDir();
    const auto paths = make_synthetic_family("tiny-qwen35", dir_->path().string(), 5, DType::F32);
    target_ = Model::load(paths[0]).release();
    draft_ = Model::load(paths[1]).release();
  }
  static void TearDownTestSuite() {
    delete target_;
    delete draft_;
    delete dir_;
  }
  static std::vector<int32_t> prompt(size_t n) {
    return synthetic_prompt(target_->config().n_vocab, 256, {257}, n, 9);
  }
  static Outcome specprefill(nlohmann::json params) {
    const Method& m = find_method("specprefill");
    Engine e{.target = target_, .models = {{"draft", draft_}}, .prefill_chunk = 64};
    Request r;
    r.prompt = prompt(400);
    r.max_new_tokens = 6;
    params["force"] = true;
    return m.run(e, r, resolve_params(m, params));
  }
  static inline test::TempDir* dir_ = nullptr;
  static inline Model* target_ = nullptr;
  static inline Model* draft_ = nullptr;
};

// ||a - b|| / ||b|| in double over two float arrays: the definition, written out.
double relative_l2(const float* a, const float* b, size_t n) {
  double d = 0, r = 0;
  for (size_t i = 0; i < n; ++i) {
    d += (double(a[i]) - double(b[i])) * (double(a[i]) - double(b[i]));
    r += double(b[i]) * double(b[i]);
  }
  return std::sqrt(d) / std::sqrt(r);
}

// The stat against the definition, for a cache that consumed only the first half of the prompt.
// Tolerance 1e-12 relative: both sides sum squares in double; only the order of the additions
// may differ (relative_l2_distance's own implementation), worth a few ulps of a double.
TEST_F(StateDrift, MatchesTheDefinitionOnAHalfPrefill) {
  const std::vector<int32_t> p = prompt(300);
  const ReferenceStates ref = full_prefill_states(*target_, p, KVDType::F32, 64);
  ASSERT_EQ(ref.layers, (std::vector<int>{0, 2})) << "tiny-qwen35's Gated DeltaNet layers";
  KVCache half = target_->make_cache();
  prefill(*target_, std::span(p).first(150), iota_positions(0, 150), half, 64);
  const nlohmann::json j = state_drift_json(half, ref);
  ASSERT_EQ(j["scan"].size(), 2u);
  double sum = 0;
  for (size_t i = 0; i < 2; ++i) {
    const RecurrentState& a = half.recurrent_state(ref.layers[i]);
    const RecurrentState& b = ref.states[i];
    const double scan = relative_l2(a.scan_state(), b.scan_state(), b.shape().scan_elements);
    const size_t conv_n = size_t(b.shape().d_conv - 1) * size_t(b.shape().conv_channels);
    const double conv = relative_l2(a.conv_window(), b.conv_window(), conv_n);
    EXPECT_GT(scan, 0.01) << "half the prompt leaves a visible drift";
    EXPECT_NEAR(j["scan"][i].get<double>(), scan, 1e-12 * scan) << "layer " << ref.layers[i];
    EXPECT_NEAR(j["conv"][i].get<double>(), conv, 1e-12 * conv) << "layer " << ref.layers[i];
    sum += scan;
  }
  EXPECT_NEAR(j["scan_mean"].get<double>(), sum / 2, 1e-12 * sum);
}

// keep = 1.0 prefills every token in order, so the states are bit-identical to the full
// prefill's (the scans' sequential-order contract): the drift is exactly 0, not merely small.
// A sparse keep drifts on every recurrent layer. Measuring does not change the generated tokens.
TEST_F(StateDrift, ZeroAtKeepOnePositiveWhenSparseAndTokensUnchanged) {
  const Outcome all = specprefill({{"keep", 1.0}, {"state_drift", true}});
  ASSERT_TRUE(all.stats.contains("state_drift"));
  for (const auto& d : all.stats["state_drift"]["scan"]) EXPECT_EQ(d.get<double>(), 0.0);
  for (const auto& d : all.stats["state_drift"]["conv"]) EXPECT_EQ(d.get<double>(), 0.0);
  const Outcome sparse = specprefill({{"keep", 0.3}, {"state_drift", true}});
  const Outcome plain = specprefill({{"keep", 0.3}});
  EXPECT_FALSE(plain.stats.contains("state_drift"));
  EXPECT_EQ(sparse.tokens, plain.tokens);
  EXPECT_EQ(sparse.kept_tokens, plain.kept_tokens);
  for (const auto& d : sparse.stats["state_drift"]["scan"]) {
    EXPECT_GT(d.get<double>(), 0.0);
    EXPECT_TRUE(std::isfinite(d.get<double>()));
  }
  EXPECT_GT(sparse.stats["state_drift"]["scan_max"].get<double>(), 0.0);
}

// The same on Mamba-2 states (tiny-nemotron-h: its blocks are Mamba-2, attention without RoPE and
// FFN-only; only the Mamba-2 blocks report).
TEST(StateDriftMamba2, ZeroAtKeepOnePositiveWhenSparse) {
  test::TempDir dir;
  const auto paths = make_synthetic_family("tiny-nemotron-h", dir.path().string(), 5, DType::F32);
  const auto target = Model::load(paths[0]), draft = Model::load(paths[1]);
  auto run = [&](double keep) {
    const Method& m = find_method("specprefill");
    Engine e{.target = target.get(), .models = {{"draft", draft.get()}}, .prefill_chunk = 64};
    Request r;
    r.prompt = synthetic_prompt(target->config().n_vocab, 256, {257}, 400, 9);
    r.max_new_tokens = 4;
    return m.run(e, r, resolve_params(m, {{"keep", keep}, {"force", true}, {"state_drift", true}}));
  };
  const nlohmann::json all = run(1.0).stats["state_drift"], part = run(0.3).stats["state_drift"];
  ASSERT_FALSE(all["layers"].empty());
  for (int l : all["layers"]) EXPECT_TRUE(is_recurrent_layer(target->config(), l)) << l;
  for (const auto& d : all["scan"]) EXPECT_EQ(d.get<double>(), 0.0);
  for (const auto& d : part["scan"]) EXPECT_GT(d.get<double>(), 0.0);
}

TEST_F(StateDrift, RefusesATargetWithoutRecurrentLayers) {
  const test::TinyFamily& tiny = test::tiny_family();
  const std::vector<int32_t> p = prompt(64);
  try {
    full_prefill_states(*tiny.target, p, KVDType::F32, 64);
    FAIL() << "a dense target has no state to drift";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("no recurrent layer"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(tiny.target->path()), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace accel
