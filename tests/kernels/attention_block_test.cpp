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

// A run of NB blocks in one update (block_softmax_blocks<HN, NB> through softmax_blocks_n, as
// run_blocks calls it) against one update per block in a row: the same (m, l), alphas and
// probabilities, bit for bit, whether a later block raises a head's maximum or not.
template <int HN, int NB>
void check_run_equals_updates_in_a_row(uint32_t bits_rest) {
  const auto r = accel::test::random_normal(size_t(NB * HN) * ab::kBlk, bits_rest % 89 + NB, 5.f);
  ab::vf sc[NB][HN][ab::kBV];
  uint32_t bits[NB];
  for (int b = 0; b < NB; ++b) {
    bits[b] = b == 0 ? 0xfffffff0u : bits_rest;
    for (int h = 0; h < HN; ++h)
      for (int v = 0; v < ab::kBV; ++v)
        sc[b][h][v] = accel::simd::load(&r[size_t(((b * HN + h) * ab::kBlk) + v * W)]);
  }
  float part_run[HN * 2], part_seq[HN * 2];
  for (int h = 0; h < HN; ++h) {
    part_run[2 * h] = part_seq[2 * h] = h == 0 ? -INFINITY : float(h);
    part_run[2 * h + 1] = part_seq[2 * h + 1] = h == 0 ? 0.f : 2.f;
  }
  std::vector<float> p_run(size_t(NB * HN) * ab::kBlk), p_seq(p_run.size());
  float a_run[NB][HN], a_seq[NB][HN];
  const ab::vf(*scores[NB])[ab::kBV];
  float* ps[NB];
  float* as[NB];
  for (int b = 0; b < NB; ++b) {
    scores[b] = sc[b];
    ps[b] = p_run.data() + size_t(b * HN) * ab::kBlk;
    as[b] = a_run[b];
  }
  ab::softmax_blocks_n<HN, NB>(HN, scores, 0.9f, bits, part_run, 2, ps, as);
  for (int b = 0; b < NB; ++b)
    ab::softmax_heads_n<HN>(HN, sc[b], 0.9f, bits[b], part_seq, 2,
                            p_seq.data() + size_t(b * HN) * ab::kBlk, a_seq[b]);
  EXPECT_EQ(0, std::memcmp(part_run, part_seq, sizeof part_run)) << NB << " " << bits_rest;
  EXPECT_EQ(0, std::memcmp(a_run, a_seq, sizeof a_run)) << NB << " " << bits_rest;
  EXPECT_TRUE(accel::test::bit_equal(p_run, p_seq)) << NB << " " << bits_rest;
}

TEST(AttentionBlock, SoftmaxOverARunOfBlocksEqualsOneUpdatePerBlockInARow) {
  for (uint32_t bits_rest : {0xffffffffu, 0x00f0000fu}) {
    check_run_equals_updates_in_a_row<3, 2>(bits_rest);
    check_run_equals_updates_in_a_row<(W / 4 < 3 ? W / 4 : 3), 4>(bits_rest);  // one lane each
  }
}

}  // namespace
