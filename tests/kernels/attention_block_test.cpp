// Tests of the shared per-block pieces of the fused quantized-KV kernels
// (kernels/attention_block.h): the grouped P.V passes (pv_heads, block_pv_sliced) give each head
// block_pv's bits, whatever the grouping. Tests only.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "kernels/attention_block.h"
#include "kernels/simd.h"
#include "tests/support/test_support.h"

namespace {

namespace ab = accel::attention_block;
constexpr int W = accel::simd::W;

// G heads' partials (stride floats apart, output at offset 16), probabilities and a value tile,
// seeded (simd.h loads and stores are unaligned, so plain vectors serve).
struct Block {
  int G, D;
  size_t stride;
  std::vector<float> part, p, vt, alpha;
  Block(int g, int d, uint64_t seed) : G(g), D(d), stride(size_t(d) + 16) {
    const auto a = accel::test::random_normal(size_t(G) * stride, seed);
    const auto b = accel::test::random_normal(size_t(G) * ab::kBlk, seed + 1);
    const auto c = accel::test::random_normal(size_t(ab::kBlk) * size_t(D), seed + 2);
    part = a;
    p = b;
    vt = c;
    for (int h = 0; h < G; ++h) alpha.push_back(0.5f + 0.1f * float(h));
  }
};

template <int NV>
void expect_grouped_equals_per_head(int G, uint32_t bits) {
  Block want(G, NV * W, uint64_t(G) * 31 + NV), got = want;
  for (int h = 0; h < G; ++h) {
    float* o = want.part.data() + size_t(h) * want.stride + 16;
    const float* pp = want.p.data() + size_t(h) * ab::kBlk;
    ab::block_pv<NV, 1>(&o, &want.alpha[size_t(h)], &pp, bits, want.vt.data());
  }
  ab::pv_heads<NV, 3>(G, got.part.data(), got.stride, 16, got.alpha.data(), got.p.data(), bits,
                      got.vt.data());
  EXPECT_TRUE(accel::test::bit_equal(want.part, got.part))
      << "G " << G << " D " << NV * W << " bits " << bits;
}

TEST(AttentionBlock, GroupedPVPassesGiveEachHeadBlockPvsBits) {
  for (uint32_t bits : {0xffffffffu, 0x00ff0f01u, 0x80000000u})
    for (int G : {1, 3, 8, 9, 16, 17}) {
      expect_grouped_equals_per_head<64 / W>(G, bits);
      expect_grouped_equals_per_head<128 / W>(G, bits);
      expect_grouped_equals_per_head<256 / W>(G, bits);
    }
}

}  // namespace
