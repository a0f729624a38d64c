// Tests of models/moe_ffn_oai.h: the unit against the double-precision model of
// tests/support/moe_ffn_oai_reference.h within its derived bound (f32, f16, q8_0 and mxfp4
// experts, gate and up values past the clamp limit), batch invariance (a token's output is
// bit-identical alone, in any chunk of a batch, and on 1 or 2 threads), tie-breaking of the
// router, and refusal of inconsistent shapes.
#include "models/moe_ffn_oai.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "kernels/quant.h"
#include "kernels/threading.h"
#include "tests/support/moe_ffn_oai_reference.h"
#include "tests/support/test_support.h"

namespace accel {
namespace {

using Layer = test::MoeOaiLayer;

// Weights with stddev 0.5 over n_embd 64 inputs of stddev 1 give gate/up values of stddev ~4, so
// a good share passes the clamp limit 7 on both sides (random_moe_oai_layer's default scales).
Layer make_layer(DType t, int E, int F, int NE, int K, uint64_t seed) {
  return test::random_moe_oai_layer(t, E, F, NE, K, seed);
}

std::vector<float> run(const MoeFfnOai& m, const float* x, size_t T) {
  std::vector<float> y(T * size_t(m.n_embd()));
  m.forward(x, T, size_t(m.n_embd()), y.data(), size_t(m.n_embd()));
  return y;
}

class MoeFfnOaiTypes : public ::testing::TestWithParam<DType> {};
INSTANTIATE_TEST_SUITE_P(ExpertTypes, MoeFfnOaiTypes,
                         ::testing::Values(DType::F32, DType::F16, DType::Q8_0, DType::MXFP4),
                         [](const auto& info) { return std::string(dtype_name(info.param)); });

// Every token within the derived bound of the double model, with the same experts chosen. Tokens
// whose k-th and (k+1)-th exact logits are closer than their float error bounds could be routed
// differently by any correct float router; they are counted and must stay rare.
TEST_P(MoeFfnOaiTypes, MatchesDoubleReferenceWithinDerivedBound) {
  constexpr int E = 64, F = 96, NE = 8, K = 4;
  constexpr size_t T = 40;
  const Layer l = make_layer(GetParam(), E, F, NE, K, 100);
  const MoeFfnOai m = MoeFfnOai::pack(l.src);
  const std::vector<float> x = test::random_normal(T * E, 7);
  const std::vector<float> y = run(m, x.data(), T);
  size_t checked = 0, clamped = 0;
  std::vector<float> gate_w(size_t(NE * F * E)), up_w(gate_w.size());
  dequantize_row(GetParam(), l.gate.data(), gate_w.data(), gate_w.size());
  dequantize_row(GetParam(), l.up.data(), up_w.data(), up_w.size());
  for (size_t t = 0; t < T; ++t) {
    const test::MoeOaiReference r = test::moe_ffn_oai_reference(l.src, &x[t * E]);
    if (r.selection_margin <= 0) continue;
    ++checked;
    for (size_t o = 0; o < size_t(E); ++o)
      ASSERT_LE(std::fabs(double(y[t * E + o]) - r.out[o]), r.bound[o])
          << "token " << t << " element " << o << ": reference " << r.out[o] << ", got "
          << y[t * E + o];
    for (int e : r.chosen)  // the chosen experts' gate / up values past the clamp limit
      for (size_t j = 0; j < size_t(F); ++j) {
        double g = l.gate_b[size_t(e) * F + j], u = l.up_b[size_t(e) * F + j];
        for (size_t k = 0; k < size_t(E); ++k) {
          g += double(gate_w[(size_t(e) * F + j) * E + k]) * x[t * E + k];
          u += double(up_w[(size_t(e) * F + j) * E + k]) * x[t * E + k];
        }
        clamped += (g > 7) + (std::fabs(u) > 7);
      }
  }
  EXPECT_GT(clamped, 0u);
  EXPECT_GE(checked, T * 9 / 10);
}

// A token's output is bit-identical alone, inside batches of any size and offset, and on 1 or 2
// threads (ARCHITECTURE.md invariant 1).
TEST_P(MoeFfnOaiTypes, TokensAreBatchInvariant) {
  constexpr int E = 64, F = 64, NE = 6, K = 2;
  constexpr size_t T = 37;
  const Layer l = make_layer(GetParam(), E, F, NE, K, 200);
  const MoeFfnOai m = MoeFfnOai::pack(l.src);
  const std::vector<float> x = test::random_normal(T * E, 9);
  struct Guard {
    ~Guard() { set_num_threads(default_num_threads()); }
  } guard;
  set_num_threads(1);
  const std::vector<float> full = run(m, x.data(), T);
  for (int threads : {1, 2}) {
    set_num_threads(threads);
    for (size_t chunk : {size_t(1), size_t(5), size_t(13), T}) {
      for (size_t t0 = 0; t0 < T; t0 += chunk) {
        const size_t n = std::min(chunk, T - t0);
        const std::vector<float> y = run(m, &x[t0 * E], n);
        ASSERT_TRUE(test::bit_equal(
            y, std::vector<float>(full.begin() + long(t0 * E), full.begin() + long((t0 + n) * E))))
            << "threads " << threads << " chunk " << chunk << " at " << t0;
      }
    }
  }
}

// Equal logits go to the lower expert index; the order is by descending logit; NaN never wins.
TEST(MoeFfnOai, SelectionOrderAndTies) {
  const Layer l = make_layer(DType::F32, 32, 32, 5, 3, 1);
  const MoeFfnOai m = MoeFfnOai::pack(l.src);
  const float lg[5] = {1.f, 3.f, 1.f, NAN, 3.f};
  EXPECT_EQ(m.select(lg), (std::vector<int>{1, 4, 0}));
  const float lg2[5] = {-1.f, -1.f, -1.f, -1.f, -1.f};
  EXPECT_EQ(m.select(lg2), (std::vector<int>{0, 1, 2}));
}

// One expert used: its softmax weight is exactly 1, so the output is that expert's down
// projection alone; with gate and up biases large enough, clamping makes every activation exactly
// limit * sigmoid(alpha * limit) * (limit + 1) in float.
TEST(MoeFfnOai, SingleExpertAndSaturatedClampByHand) {
  constexpr int E = 32, F = 32;
  Layer l = make_layer(DType::F32, E, F, 3, 1, 5);
  for (float& b : l.gate_b) b = 1e4f;
  for (float& b : l.up_b) b = 1e4f;
  for (float& b : l.down_b) b = 0.f;
  float* down = reinterpret_cast<float*>(l.down.data());
  for (size_t i = 0; i < l.down.size() / 4; ++i) down[i] = i % F == 0 ? 1.f : 0.f;
  const MoeFfnOai m = MoeFfnOai::pack(l.src);
  const std::vector<float> x = test::random_normal(E, 3, 0.01f);
  const std::vector<float> y = run(m, x.data(), 1);
  const float lim = 7.f;
  const float act = lim / (1.f + std::exp(1.702f * -lim)) * (lim + 1.f);
  for (int o = 0; o < E; ++o) EXPECT_EQ(y[size_t(o)], act) << o;
}

TEST(MoeFfnOai, RefusesInconsistentShapesNamingTheField) {
  Layer l = make_layer(DType::F32, 32, 32, 4, 2, 1);
  l.src.n_expert_used = 5;
  EXPECT_THROW(
      {
        try {
          MoeFfnOai::pack(l.src);
        } catch (const std::invalid_argument& e) {
          EXPECT_NE(std::string(e.what()).find("expert_used_count"), std::string::npos);
          throw;
        }
      },
      std::invalid_argument);
  l.src.n_expert_used = 2;
  l.src.expert_type = DType::MXFP4;
  l.src.n_ff = 40;  // not a whole number of 32-element blocks
  EXPECT_THROW(MoeFfnOai::pack(l.src), std::invalid_argument);
  l.src.n_ff = 32;
  l.src.up_bias = nullptr;
  EXPECT_THROW(MoeFfnOai::pack(l.src), std::invalid_argument);
}

}  // namespace
}  // namespace accel
