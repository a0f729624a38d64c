// Tests of the shared per-block pieces of the fused quantized-KV kernels
// (kernels/attention_block.h): the grouped P.V passes (pv_heads, block_pv_sliced) give each head
// block_pv's bits, whatever the grouping; the eight-at-a-time reductions give each vector hsum's
// and hmax's bits, and so the online-softmax update of eight heads gives each head's one-head
// bits, over one block or two in a row. Tests only.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
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

// Eight vectors of sums that depend on the tree (magnitudes 2^-20..2^20, both signs): the
// eight-at-a-time reductions give hsum's and hmax's bits for each (AVX-512 builds; elsewhere
// reduce_heads falls back to hsum and hmax themselves).
TEST(AttentionBlock, EightAtATimeReductionsGiveEachVectorsBits) {
  const auto r = accel::test::random_normal(size_t(8 * W * 50), 17);
  for (int rep = 0; rep < 50; ++rep) {
    ab::vf x[8];
    for (int h = 0; h < 8; ++h) {
      float v[W];
      for (int i = 0; i < W; ++i) {
        const float u = r[size_t((rep * 8 + h) * W + i)];
        v[i] = std::ldexp(u, int(std::lround(u * 8)) % 20);
      }
      x[h] = accel::simd::load(v);
    }
    float sums[8], maxs[8];
    ab::reduce_heads<8>(x, sums, true);
    ab::reduce_heads<8>(x, maxs, false);
    for (int h = 0; h < 8; ++h) {
      const float s = ab::hsum(x[h]), m = accel::simd::hmax(x[h]);
      EXPECT_EQ(0, std::memcmp(&s, &sums[h], 4)) << rep << " " << h;
      EXPECT_EQ(0, std::memcmp(&m, &maxs[h], 4)) << rep << " " << h;
    }
  }
}

// block_softmax_heads over eight heads at once against each head alone: the same (m, l), alpha
// and probabilities, bit for bit, with some heads seeing their maximum grow and some not.
TEST(AttentionBlock, SoftmaxOfEightHeadsGivesEachHeadItsOneHeadBits) {
  constexpr int HN = 8;
  for (uint32_t bits : {0xffffffffu, 0x0f0ff0f1u, 0x00000001u}) {
    const auto r = accel::test::random_normal(size_t(HN) * ab::kBlk, bits % 97, 6.f);
    ab::vf sc[HN][ab::kBV];
    for (int h = 0; h < HN; ++h)
      for (int v = 0; v < ab::kBV; ++v)
        sc[h][v] = accel::simd::load(&r[size_t(h * ab::kBlk + v * W)]);
    float ml_all[HN][2], ml_one[HN][2];
    for (int h = 0; h < HN; ++h) {
      ml_all[h][0] = ml_one[h][0] = h % 2 ? -INFINITY : 4.f * float(h) - 12.f;
      ml_all[h][1] = ml_one[h][1] = h % 2 ? 0.f : 1.5f;
    }
    float* mls[HN];
    for (int h = 0; h < HN; ++h) mls[h] = ml_all[h];
    std::vector<float> p_all(size_t(HN) * ab::kBlk), p_one(p_all.size());
    float a_all[HN], a_one[HN];
    ab::block_softmax_heads<HN>(sc, 0.7f, bits, mls, p_all.data(), a_all);
    for (int h = 0; h < HN; ++h) {
      float* ml = ml_one[h];
      ab::block_softmax_heads<1>(&sc[h], 0.7f, bits, &ml, &p_one[size_t(h) * ab::kBlk], &a_one[h]);
    }
    EXPECT_EQ(0, std::memcmp(ml_all, ml_one, sizeof ml_all)) << bits;
    EXPECT_EQ(0, std::memcmp(a_all, a_one, sizeof a_all)) << bits;
    EXPECT_TRUE(accel::test::bit_equal(p_all, p_one)) << bits;
  }
}

// Two blocks in one update (block_softmax_blocks<HN, 2>, run_chunk_nv's pairs) against two
// one-block updates in a row: the same (m, l), alphas and probabilities, bit for bit, whether the
// second block raises a head's maximum or not.
TEST(AttentionBlock, SoftmaxOverTwoBlocksEqualsTwoUpdatesInARow) {
  constexpr int HN = 3;
  for (uint32_t bits1 : {0xffffffffu, 0x00f0000fu}) {
    const uint32_t bits0 = 0xfffffff0u;
    const auto r = accel::test::random_normal(size_t(2 * HN) * ab::kBlk, bits1 % 89, 5.f);
    ab::vf sc[2][HN][ab::kBV];
    for (int b = 0; b < 2; ++b)
      for (int h = 0; h < HN; ++h)
        for (int v = 0; v < ab::kBV; ++v)
          sc[b][h][v] = accel::simd::load(&r[size_t(((b * HN + h) * ab::kBlk) + v * W)]);
    float part_pair[HN * 2], part_seq[HN * 2];
    for (int h = 0; h < HN; ++h) {
      part_pair[2 * h] = part_seq[2 * h] = h == 0 ? -INFINITY : float(h);
      part_pair[2 * h + 1] = part_seq[2 * h + 1] = h == 0 ? 0.f : 2.f;
    }
    std::vector<float> pa(size_t(HN) * ab::kBlk), pb(pa.size()), qa(pa.size()), qb(pa.size());
    float aa[HN], ab_[HN], ca[HN], cb[HN];
    ab::softmax_pair_n<HN>(HN, sc[0], sc[1], 0.9f, bits0, bits1, part_pair, 2, pa.data(), pb.data(),
                           aa, ab_);
    ab::softmax_heads_n<HN>(HN, sc[0], 0.9f, bits0, part_seq, 2, qa.data(), ca);
    ab::softmax_heads_n<HN>(HN, sc[1], 0.9f, bits1, part_seq, 2, qb.data(), cb);
    EXPECT_EQ(0, std::memcmp(part_pair, part_seq, sizeof part_pair)) << bits1;
    EXPECT_EQ(0, std::memcmp(aa, ca, sizeof aa)) << bits1;
    EXPECT_EQ(0, std::memcmp(ab_, cb, sizeof ab_)) << bits1;
    EXPECT_TRUE(accel::test::bit_equal(pa, qa)) << bits1;
    EXPECT_TRUE(accel::test::bit_equal(pb, qb)) << bits1;
  }
}

}  // namespace
