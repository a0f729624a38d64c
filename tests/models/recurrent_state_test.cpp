// Tests of models/recurrent_state: shape validation naming the field, bytes(), clear(), and the
// exactness of checkpoint/rollback and snapshot/restore when real kernels advance the state (the
// PLD pattern: verify k + 1 tokens, keep j + 1, roll back and replay them, and compare bit for bit
// with decoding the kept tokens one by one). Also the drift distance.
#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/causal_conv1d.h"
#include "kernels/gated_delta_rule.h"
#include "kernels/ssm_scan.h"
#include "models/recurrent_state.h"
#include "tests/support/test_support.h"

namespace {

using accel::RecurrentState;
using accel::RecurrentStateShape;
using accel::test::bit_equal;
using accel::test::random_normal;

std::string error_of(const RecurrentStateShape& s) {
  try {
    RecurrentState st(s);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(RecurrentState, RefusesBadShapesNamingTheField) {
  EXPECT_NE(error_of({0, 4, 10}).find("conv_channels"), std::string::npos);
  EXPECT_NE(error_of({-3, 4, 10}).find("conv_channels"), std::string::npos);
  EXPECT_NE(error_of({8, 0, 10}).find("d_conv"), std::string::npos);
  EXPECT_NE(error_of({8, 4, 0}).find("scan_elements"), std::string::npos);
  EXPECT_NE(error_of({8, 4, (size_t(1) << 32) + 1}).find("2^32"), std::string::npos);
  EXPECT_EQ(error_of({8, 1, 10}), "");  // d_conv 1: an empty window is legal
}

TEST(RecurrentState, BytesCountWindowAndScanAndTheCheckpointSeparately) {
  // small-nemotron-h's Mamba-2 width: window 3 x 3584, scan 24 x 64 x 128.
  RecurrentState st({3584, 4, 24 * 64 * 128});
  EXPECT_EQ(st.bytes(), (3 * 3584 + 24 * 64 * 128) * sizeof(float));
  EXPECT_EQ(st.checkpoint_bytes(), 0u);
  st.checkpoint();
  EXPECT_EQ(st.checkpoint_bytes(), st.bytes());
  EXPECT_EQ(st.tokens(), 0u);
}

TEST(RecurrentState, ClearZeroesAndDropsTheCheckpoint) {
  RecurrentState st({5, 3, 7});
  for (int i = 0; i < 10; ++i) st.conv_window()[i] = 1.f + i;
  st.scan_state()[6] = 2.f;
  st.advance(4);
  st.checkpoint();
  st.clear();
  EXPECT_EQ(st.tokens(), 0u);
  EXPECT_FALSE(st.has_checkpoint());
  for (int i = 0; i < 10; ++i) EXPECT_EQ(st.conv_window()[i], 0.f);
  for (int i = 0; i < 7; ++i) EXPECT_EQ(st.scan_state()[i], 0.f);
  EXPECT_THROW(st.rollback(), std::logic_error);
}

// A Mamba-2 layer core (conv over xBC + scan) over fixed random inputs, advancing a
// RecurrentState by tokens [t0, t1); returns y of those tokens.
struct MambaCore {
  accel::SsmScanShape s{4, 16, 32, 2};
  int channels = 4 * 16 + 2 * 2 * 32;
  std::vector<float> xbc_in, conv_w, conv_b, dt, dt_bias, A, D;
  MambaCore() {
    xbc_in = random_normal(200 * size_t(channels), 1);
    conv_w = random_normal(size_t(channels) * 4, 2);
    conv_b = random_normal(channels, 3);
    dt = random_normal(200 * 4, 4);
    dt_bias = random_normal(4, 5);
    A = random_normal(4, 6);
    for (float& a : A) a = -std::exp(a);
    D = random_normal(4, 7);
  }
  RecurrentStateShape shape() const { return {channels, 4, accel::ssm_state_elements(s)}; }
  std::vector<float> run(RecurrentState& st, size_t t0, size_t t1) const {
    const size_t C = size_t(channels), m = t1 - t0;
    std::vector<float> xbc(m * C), y(m * 64);
    accel::causal_conv1d({channels, 4}, xbc_in.data() + t0 * C, C, m, conv_w.data(), conv_b.data(),
                         true, st.conv_window(), xbc.data(), C);
    accel::SsmScanInputs in;
    in.x = xbc.data(), in.ldx = C;
    in.B = xbc.data() + 64, in.ldb = C;
    in.C = xbc.data() + 128, in.ldc = C;
    in.dt = dt.data() + t0 * 4, in.lddt = 4;
    in.dt_bias = dt_bias.data(), in.A = A.data(), in.D = D.data();
    accel::ssm_scan(s, in, m, st.scan_state(), y.data(), 64);
    st.advance(m);
    return y;
  }
};

// The same for a Gated DeltaNet core (conv over qkv, L2 norm, gates from fixed alpha/beta).
struct DeltaCore {
  accel::GatedDeltaShape s{2, 4, 16, 8, accel::DeltaHeadMap::Tiled};
  int channels = 2 * 2 * 16 + 4 * 8;
  std::vector<float> qkv_in, conv_w, g, beta;
  DeltaCore() {
    qkv_in = random_normal(200 * size_t(channels), 11);
    conv_w = random_normal(size_t(channels) * 4, 12);
    const auto alpha = random_normal(200 * 4, 13), b = random_normal(200 * 4, 14);
    const auto bias = random_normal(4, 15);
    auto A = random_normal(4, 16);
    for (float& a : A) a = -std::exp(a);
    g.resize(800), beta.resize(800);
    accel::delta_net_gates(alpha.data(), b.data(), 4, 200, 4, bias.data(), A.data(), g.data(),
                           beta.data());
  }
  RecurrentStateShape shape() const { return {channels, 4, accel::gated_delta_state_elements(s)}; }
  std::vector<float> run(RecurrentState& st, size_t t0, size_t t1) const {
    const size_t C = size_t(channels), m = t1 - t0;
    std::vector<float> qkv(m * C), o(m * 32);
    accel::causal_conv1d({channels, 4}, qkv_in.data() + t0 * C, C, m, conv_w.data(), nullptr, true,
                         st.conv_window(), qkv.data(), C);
    accel::l2_normalize_heads(qkv.data(), m, C, 4, 16, 1e-6f);
    accel::GatedDeltaInputs in;
    in.q = qkv.data(), in.ldq = C;
    in.k = qkv.data() + 32, in.ldk = C;
    in.v = qkv.data() + 64, in.ldv = C;
    in.g = g.data() + t0 * 4, in.beta = beta.data() + t0 * 4, in.ldgate = 4;
    in.q_scale = 0.25f;
    accel::gated_delta_rule(s, in, m, st.scan_state(), o.data(), 32);
    st.advance(m);
    return o;
  }
};

// Prefill 50 tokens, then verify steps of k + 1 = 7 tokens keeping j + 1 of them (all rejected,
// some, all), by checkpoint -> verify -> rollback -> replay kept; against a state that decoded
// every kept token alone. The replayed outputs must equal the verify step's outputs for the kept
// tokens too (same bits: the kernels' sequential-order contract).
template <class Core>
void check_pld_pattern() {
  const Core core;
  RecurrentState spec(core.shape()), greedy(core.shape());
  core.run(spec, 0, 50);
  for (size_t t = 0; t < 50; ++t) core.run(greedy, t, t + 1);
  size_t pos = 50;
  for (size_t keep : {1, 3, 7, 2}) {
    spec.checkpoint();
    const auto verify = core.run(spec, pos, pos + 7);
    if (keep < 7) {
      spec.rollback();
      ASSERT_EQ(spec.tokens(), pos);
      const auto replay = core.run(spec, pos, pos + keep);
      EXPECT_TRUE(
          bit_equal(replay, std::vector<float>(verify.begin(), verify.begin() + replay.size())));
    }
    for (size_t t = pos; t < pos + keep; ++t) core.run(greedy, t, t + 1);
    pos += keep;
    ASSERT_EQ(spec.tokens(), pos);
    ASSERT_EQ(greedy.tokens(), pos);
    EXPECT_TRUE(bit_equal({spec.scan_state(), core.shape().scan_elements},
                          {greedy.scan_state(), core.shape().scan_elements}))
        << "keep " << keep;
    EXPECT_TRUE(bit_equal({spec.conv_window(), 3 * size_t(core.channels)},
                          {greedy.conv_window(), 3 * size_t(core.channels)}))
        << "keep " << keep;
    const auto d = relative_l2_distance(spec, greedy);
    EXPECT_EQ(d.scan, 0.0);
    EXPECT_EQ(d.conv, 0.0);
  }
}

TEST(RecurrentState, RollbackAndReplayEqualGreedyDecodingMamba2) {
  check_pld_pattern<MambaCore>();
}
TEST(RecurrentState, RollbackAndReplayEqualGreedyDecodingGatedDeltaNet) {
  check_pld_pattern<DeltaCore>();
}

TEST(RecurrentState, SnapshotRestoreIsExactAndChecksTheShape) {
  const MambaCore core;
  RecurrentState st(core.shape());
  core.run(st, 0, 30);
  const RecurrentState::Snapshot snap = st.snapshot();
  const auto y_first = core.run(st, 30, 40);
  st.restore(snap);
  EXPECT_EQ(st.tokens(), 30u);
  EXPECT_TRUE(bit_equal(core.run(st, 30, 40), y_first));
  RecurrentState other({8, 4, 10});
  EXPECT_THROW(other.restore(snap), std::invalid_argument);
  EXPECT_THROW(relative_l2_distance(st, other), std::invalid_argument);
}

// Hand-worked distance: window a = (3, 4) vs b = (0, 0) -> infinity (reference all zero, a
// differs); scan a = (1, 1, 1) vs b = (1, 1, 3): ||(0, 0, -2)|| / ||(1, 1, 3)|| = 2 / sqrt(11).
TEST(RecurrentState, RelativeL2DistanceHandWorked) {
  RecurrentState a({2, 2, 3}), b({2, 2, 3});
  a.conv_window()[0] = 3, a.conv_window()[1] = 4;
  for (int i = 0; i < 3; ++i) a.scan_state()[i] = 1, b.scan_state()[i] = 1;
  b.scan_state()[2] = 3;
  const auto d = relative_l2_distance(a, b);
  EXPECT_TRUE(std::isinf(d.conv));
  EXPECT_DOUBLE_EQ(d.scan, 2 / std::sqrt(11.0));
  EXPECT_EQ(relative_l2_distance(b, b).conv, 0.0);
}

}  // namespace
