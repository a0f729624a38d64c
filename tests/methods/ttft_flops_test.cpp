// Analytic TTFT FLOPs against hand-worked counts, and the identities the methods' stats rely on:
// a prefill split at any point costs the same as in one piece (minus the extra logits rows).
#include "methods/ttft_flops.h"

#include <gtest/gtest.h>

namespace accel {
namespace {

ModelConfig hand_config() {
  ModelConfig c;
  c.n_layer = 2;
  c.n_embd = 8;
  c.n_head = 2;
  c.n_head_kv = 1;
  c.head_dim = 4;
  c.n_ff = 16;
  c.n_vocab = 10;
  return c;
}

TEST(TtftFlops, ForwardFlopsIsTheHandWorkedCount) {
  const ModelConfig c = hand_config();
  // Per token and layer: Q 8x8, K and V 8x4 each, O 8x8, FFN 3 x 8x16 = 64+64+64+384 = 576 MACs.
  EXPECT_DOUBLE_EQ(linear_macs_per_token(c), 576.0);
  EXPECT_DOUBLE_EQ(attention_pair_flops(c), 16.0);  // q.k and p.v: 2 x 4 MACs
  // 3 tokens after 5 cached: pairs 3x5 + (1+2+3) = 21 per head and layer.
  // 2*3*2*576 + 2 layers x 2 heads x 21 x 16 + 2 x 1 row x 8 x 10 = 6912 + 1344 + 160.
  EXPECT_DOUBLE_EQ(forward_flops(c, 3, 5, 1), 6912.0 + 1344.0 + 160.0);
}

TEST(TtftFlops, APrefillSplitAnywhereCostsTheSameAsOnePiece) {
  const ModelConfig c = hand_config();
  for (double cut : {1.0, 7.0, 63.0})
    EXPECT_DOUBLE_EQ(forward_flops(c, cut, 0, 0) + forward_flops(c, 64 - cut, cut, 1),
                     forward_flops(c, 64, 0, 1));
}

// A sliding layer (window 4) beside a full one. 3 tokens after 5 cached: entries j = 6, 7, 8 see
// min(j, 4) = 4 keys each: 12 pairs per head (the full layer: 21, as above). So
// 2*3*2*576 + (21 + 12) x 2 heads x 16 + 160; and 100 tokens after 0 cost the sliding layer
// 1+2+3+4 + 96 x 4 = 394 pairs: linear beyond the window.
TEST(TtftFlops, SlidingLayersCountTheirWindowOnly) {
  ModelConfig c = hand_config();
  c.n_swa = 4;
  c.swa_layers = {1, 0};
  EXPECT_DOUBLE_EQ(forward_flops(c, 3, 5, 1), 6912.0 + 33.0 * 2 * 16 + 160.0);
  EXPECT_DOUBLE_EQ(forward_flops(c, 100, 0, 0), 2 * 100 * 2 * 576.0 + (394.0 + 5050.0) * 2 * 16);
  // Split anywhere, the same total (the window straddles the cut at 2).
  for (double cut : {2.0, 4.0, 50.0})
    EXPECT_DOUBLE_EQ(forward_flops(c, cut, 0, 0) + forward_flops(c, 100 - cut, cut, 0),
                     forward_flops(c, 100, 0, 0));
}

TEST(TtftFlops, MixtureOfExpertsCountsTheExpertsATokenUsesAndTheRouter) {
  ModelConfig c = hand_config();
  c.n_expert = 4;
  c.n_expert_used = 2;
  c.n_ff_expert = 6;
  // attention projections 192 + 2 experts x 3 x 8x6 + router 8x4 = 192 + 288 + 32.
  EXPECT_DOUBLE_EQ(linear_macs_per_token(c), 512.0);
}


// A qwen35-style hybrid: layer 0 Gated DeltaNet, layer 1 gated attention. DeltaNet sizes: 1 key
// head and 2 value heads of 4, conv 4 wide over 2 x 4 + 8 = 16 channels. Per token:
//   DeltaNet: in 8 x (16 + 8 + 2 x 2) = 224, out 8 x 8 = 64, conv 16 x 4 = 64, state 4 x 2 x 4 x 4
//   = 128: 480 MACs. Gated attention: Q and gate 8 x 16 = 128, K and V 64, O 64: 256. FFN 384.
// 3 tokens after 5 cached: 2 x 3 x (480 + 384) + 2 x 3 x (256 + 384) + 2 heads x 21 pairs x 16 +
// the output row 160 = 5184 + 3840 + 672 + 160; the recurrent layer adds no pairs.
TEST(TtftFlops, HybridRecurrentLayersAreLinearAndCountTheirStateProducts) {
  ModelConfig c = hand_config();
  c.recurrent_layers = {1, 0};
  c.attn_output_gate = true;
  c.ssm_d_conv = 4;
  c.ssm_n_group = 1;
  c.ssm_dt_rank = 2;
  c.ssm_d_state = 4;
  c.ssm_d_inner = 8;
  EXPECT_DOUBLE_EQ(delta_net_macs_per_token(c), 480.0);
  EXPECT_DOUBLE_EQ(attention_projection_macs(c), 256.0);
  EXPECT_DOUBLE_EQ(forward_flops(c, 3, 5, 1), 5184.0 + 3840.0 + 672.0 + 160.0);
  for (double cut : {1.0, 7.0, 63.0})
    EXPECT_DOUBLE_EQ(forward_flops(c, cut, 0, 0) + forward_flops(c, 64 - cut, cut, 1),
                     forward_flops(c, 64, 0, 1));
}

// qwen35moe's shared expert runs for every token: 3 x 8 x 5 MACs plus its one-row gate.
TEST(TtftFlops, SharedExpertAndItsGateAreCounted) {
  ModelConfig c = hand_config();
  c.n_expert = 4;
  c.n_expert_used = 2;
  c.n_ff_expert = 6;
  const double routed = ffn_macs_per_token(c);
  c.n_ff_shexp = 5;
  EXPECT_DOUBLE_EQ(ffn_macs_per_token(c), routed + 3 * 8 * 5 + 8);
}

}  // namespace
}  // namespace accel
