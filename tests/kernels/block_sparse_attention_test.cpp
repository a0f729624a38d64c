// Tests of accel::attention_block_sparse: agreement with the double reference over the selected
// blocks (a table of shapes, block sizes, segment lengths and block lists, f32 and f16 rows, with a
// derived error bound), bit-exact equality with attention_causal when every past block is listed,
// bit-exact independence from the other segments of the call and the thread count, and the input
// checks. Tests only.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <random>
#include <sstream>
#include <vector>

#include "kernels/attention.h"
#include "kernels/block_sparse_attention.h"
#include "kernels/fp16.h"
#include "kernels/threading.h"
#include "tests/support/test_support.h"

namespace {

using accel::AttentionShape;
using accel::KVFormat;
using accel::KVRows;
using accel::SparseSegment;
using accel::test::bit_equal;
using accel::test::near_all;
using accel::test::random_normal;

constexpr double kU = 0x1p-24;  // unit roundoff of float

// A prefill of n_kv prompt rows: keys at positions kv_pos (ascending, gaps allowed), queries are
// the rows of the segments at their own positions.
struct Data {
  AttentionShape s;
  size_t block = 32, n_kv = 0, ldq = 0, ldkv = 0, ldo = 0;
  std::vector<float> q, k, v;  // q: [n_kv][ldq] (query row i is prompt row i)
  std::vector<int32_t> pos;
  std::vector<std::vector<int32_t>> lists;  // per segment: [n_kv_heads][n_blocks]
  std::vector<SparseSegment> segs;
};

Data make_data(int H, int KVH, int D, size_t block, size_t n_kv, uint64_t seed, bool gaps) {
  Data d;
  d.s = {H, KVH, D, float(1.0 / std::sqrt(double(D)))};
  d.block = block;
  d.n_kv = n_kv;
  d.ldq = size_t(H) * D + 3;  // padded strides
  d.ldkv = size_t(KVH) * D + 5;
  d.ldo = size_t(H) * D + 1;
  d.q = random_normal(n_kv * d.ldq, seed, 2.f);
  d.k = random_normal(n_kv * d.ldkv, seed + 1);
  d.v = random_normal(n_kv * d.ldkv, seed + 2);
  d.pos.resize(n_kv);
  std::mt19937_64 rng(seed + 3);
  int32_t p = 0;
  for (size_t j = 0; j < n_kv; ++j) {
    if (gaps && j % 16 == 0) p += int32_t(rng() % 7);  // positions are data, not indices
    d.pos[j] = p++;
  }
  return d;
}

// A segment over prompt rows [a, b) with n_blocks random blocks per kv head among the blocks
// ending at or before a (all of them when n_blocks exceeds their count).
void add_segment(Data& d, size_t a, size_t b, size_t n_blocks, uint64_t seed) {
  const size_t eligible = a / d.block;
  n_blocks = std::min(n_blocks, eligible);
  std::mt19937_64 rng(seed);
  std::vector<int32_t> list;
  for (int g = 0; g < d.s.n_kv_heads; ++g) {
    std::vector<int32_t> all(eligible);
    std::iota(all.begin(), all.end(), 0);
    std::shuffle(all.begin(), all.end(), rng);
    all.resize(n_blocks);
    std::sort(all.begin(), all.end());
    list.insert(list.end(), all.begin(), all.end());
  }
  d.lists.push_back(list);
  d.segs.push_back({a, b, a, b, nullptr, n_blocks});
}

void fix_pointers(Data& d) {
  for (size_t i = 0; i < d.segs.size(); ++i) d.segs[i].blocks = d.lists[i].data();
}

std::vector<float> run(const Data& d, KVFormat fmt = KVFormat::F32) {
  std::vector<float> out(d.n_kv * d.ldo, NAN);
  std::vector<uint16_t> k16, v16;
  KVRows kv{d.k.data(), d.v.data(), d.ldkv, KVFormat::F32};
  if (fmt == KVFormat::F16) {
    for (float x : d.k) k16.push_back(accel::f32_to_fp16(x));
    for (float x : d.v) v16.push_back(accel::f32_to_fp16(x));
    kv = {k16.data(), v16.data(), d.ldkv, KVFormat::F16};
  }
  accel::attention_block_sparse(d.s, d.block, d.q.data(), d.ldq, d.pos.data(), d.n_kv, kv,
                                d.pos.data(), d.n_kv, d.segs, out.data(), d.ldo);
  return out;
}

// The attention_test.cpp bound over each row's key list: an fp32 FMA chain per score (gamma_D),
// the scale and max-subtraction roundings (4u |s|), exp2's relative error (4u), so every p_j is
// off by a relative eps_p and the convex combination moves by <= 2 eps_p max|v|; plus fp32 sums
// over the n visible keys, one rescale per 64-key step and the final division.
double error_bound(const Data& d, const std::vector<float>& k, const std::vector<float>& v) {
  const int G = d.s.n_heads / d.s.n_kv_heads, D = d.s.head_dim;
  const double gamma = D * kU / (1 - D * kU);
  double max_abs_sum = 0, max_s = 0, max_v = 0;
  size_t max_vis = 0, max_list = 0;
  for (float x : v) max_v = std::max(max_v, double(std::fabs(x)));
  for (size_t si = 0; si < d.segs.size(); ++si) {
    const SparseSegment& sg = d.segs[si];
    for (int h = 0; h < d.s.n_heads; ++h) {
      std::vector<size_t> keys;
      for (size_t b = 0; b < sg.n_blocks; ++b)
        for (size_t t = 0; t < d.block; ++t)
          keys.push_back(size_t(sg.blocks[size_t(h / G) * sg.n_blocks + b]) * d.block + t);
      for (size_t j = sg.own_begin; j < sg.own_end; ++j) keys.push_back(j);
      max_list = std::max(max_list, keys.size());
      for (size_t i = sg.q_begin; i < sg.q_end; ++i) {
        size_t vis = 0;
        for (size_t j : keys) {
          if (d.pos[j] > d.pos[i]) continue;
          ++vis;
          double a = 0, s = 0;
          for (int t = 0; t < D; ++t) {
            const double p = double(d.q[i * d.ldq + h * D + t]) * k[j * d.ldkv + (h / G) * D + t];
            a += std::fabs(p);
            s += p;
          }
          max_abs_sum = std::max(max_abs_sum, a * d.s.scale);
          max_s = std::max(max_s, std::fabs(s) * d.s.scale);
        }
        max_vis = std::max(max_vis, vis);
      }
    }
  }
  const double eps_p = gamma * max_abs_sum + 4 * kU * max_s + 4 * kU;
  const double steps = double(max_list) / 64 + 1;
  return max_v * (2 * eps_p + (double(max_vis) + 2 * steps + 2) * kU);
}

// Compares the segment rows of `out` with the double reference over the listed blocks, computed
// on the rows the kernel read (f16-rounded for f16).
::testing::AssertionResult matches_reference(const Data& d, const std::vector<float>& out,
                                             KVFormat fmt) {
  std::vector<float> k = d.k, v = d.v;
  if (fmt == KVFormat::F16) {
    for (float& x : k) x = accel::fp16_to_f32(accel::f32_to_fp16(x));
    for (float& x : v) x = accel::fp16_to_f32(accel::f32_to_fp16(x));
  }
  std::vector<double> want(out.size(), 0.0);
  accel::attention_block_sparse_reference(d.s, d.block, d.q.data(), d.ldq, d.pos.data(), d.n_kv,
                                          k.data(), v.data(), d.ldkv, d.pos.data(), d.n_kv, d.segs,
                                          want.data(), d.ldo);
  const size_t w = size_t(d.s.n_heads) * d.s.head_dim;
  std::vector<float> got;
  std::vector<double> ref;
  for (const SparseSegment& sg : d.segs)
    for (size_t i = sg.q_begin; i < sg.q_end; ++i) {
      got.insert(got.end(), out.begin() + i * d.ldo, out.begin() + i * d.ldo + w);
      ref.insert(ref.end(), want.begin() + i * d.ldo, want.begin() + i * d.ldo + w);
    }
  return near_all(got, ref, error_bound(d, k, v), 0.0);
}

struct Case {
  int H, KVH, D;
  size_t block;
  size_t seg;       // segment length (the last segment may be shorter)
  size_t n_blocks;  // listed blocks per kv head (capped by the eligible count)
  bool gaps;
};
std::ostream& operator<<(std::ostream& os, const Case& c) {
  return os << "heads " << c.H << "/" << c.KVH << " D " << c.D << " block " << c.block << " seg "
            << c.seg << " blocks " << c.n_blocks << (c.gaps ? " gaps" : "");
}

std::vector<Case> table() {
  std::vector<Case> cases;
  for (auto [H, KVH, D] : {std::tuple{1, 1, 8}, {4, 1, 64}, {12, 4, 64}, {8, 8, 80}, {4, 2, 35}})
    for (size_t block : {size_t(8), size_t(32)})
      for (auto [seg, nb] : {std::pair<size_t, size_t>{64, 0}, {64, 3}, {96, 5}, {80, 64}})
        cases.push_back({H, KVH, D, block, seg, nb, (H + block) % 2 == 0});
  return cases;
}

class BlockSparseTable : public ::testing::TestWithParam<Case> {};

// Segments from row 0 (no past block: own rows only) to a partial last segment, every one with
// its own random block lists; f32 and f16 rows.
TEST_P(BlockSparseTable, MatchesDoubleReferenceOverSelectedBlocks) {
  const Case c = GetParam();
  const size_t n_kv = 3 * c.seg + c.seg / 2 + 1;
  Data d = make_data(c.H, c.KVH, c.D, c.block, n_kv, 500 + c.D * 3 + c.block + c.seg, c.gaps);
  for (size_t a = 0; a < n_kv; a += c.seg)
    add_segment(d, a, std::min(n_kv, a + c.seg), c.n_blocks, a + c.n_blocks);
  fix_pointers(d);
  SCOPED_TRACE(::testing::PrintToString(c));
  for (KVFormat fmt : {KVFormat::F32, KVFormat::F16}) {
    const std::vector<float> out = run(d, fmt);
    EXPECT_TRUE(matches_reference(d, out, fmt)) << (fmt == KVFormat::F16 ? "f16" : "f32");
  }
}

INSTANTIATE_TEST_SUITE_P(Shapes, BlockSparseTable, ::testing::ValuesIn(table()),
                         [](const auto& info) {
                           const Case& c = info.param;
                           std::ostringstream os;
                           os << "H" << c.H << "_KV" << c.KVH << "_D" << c.D << "_b" << c.block
                              << "_s" << c.seg << "_n" << c.n_blocks << (c.gaps ? "_gaps" : "");
                           return os.str();
                         });

// Large scores (q scaled by 30): the online softmax must subtract the running max.
TEST(BlockSparseAttention, LargeScoresStayFiniteAndAccurate) {
  Data d = make_data(12, 4, 64, 32, 700, 91, false);
  for (float& x : d.q) x *= 15.f;
  add_segment(d, 512, 700, 6, 1);
  fix_pointers(d);
  const std::vector<float> out = run(d);
  for (size_t i = 512; i < 700; ++i)
    for (int t = 0; t < 12 * 64; ++t) ASSERT_TRUE(std::isfinite(out[i * d.ldo + t]));
  EXPECT_TRUE(matches_reference(d, out, KVFormat::F32));
}

// Every block before the segment listed (ascending, 64-aligned total): the key list is exactly
// the dense kernel's keys in its block order, so the bits equal attention_causal over all keys
// (keys after each query present and masked), for several block sizes and both row formats.
TEST(BlockSparseAttention, AllPastBlocksEqualsDenseKernelBitForBit) {
  for (size_t block : {size_t(8), size_t(32), size_t(64)})
    for (KVFormat fmt : {KVFormat::F32, KVFormat::F16}) {
      SCOPED_TRACE(::testing::Message() << "block " << block << " f16 " << (fmt == KVFormat::F16));
      const size_t n_kv = 1024 + 200;
      Data d = make_data(12, 4, 64, block, n_kv, 17 + block, /*gaps=*/false);
      add_segment(d, 512, 1024, 1 << 20, 1);   // all 512 / block blocks
      add_segment(d, 1024, n_kv, 1 << 20, 2);  // a partial last segment
      fix_pointers(d);
      ASSERT_EQ(d.segs[0].n_blocks, 512 / block);
      const std::vector<float> sparse = run(d, fmt);
      std::vector<uint16_t> k16, v16;
      KVRows kv{d.k.data(), d.v.data(), d.ldkv, KVFormat::F32};
      if (fmt == KVFormat::F16) {
        for (float x : d.k) k16.push_back(accel::f32_to_fp16(x));
        for (float x : d.v) v16.push_back(accel::f32_to_fp16(x));
        kv = {k16.data(), v16.data(), d.ldkv, KVFormat::F16};
      }
      std::vector<float> dense(d.n_kv * d.ldo, NAN);
      accel::attention_causal(d.s, d.q.data() + 512 * d.ldq, d.ldq, d.pos.data() + 512, n_kv - 512,
                              kv, d.pos.data(), n_kv, dense.data() + 512 * d.ldo, d.ldo);
      const size_t w = size_t(12) * 64;
      for (size_t i = 512; i < n_kv; ++i)
        ASSERT_TRUE(bit_equal({sparse.data() + i * d.ldo, w}, {dense.data() + i * d.ldo, w}))
            << "row " << i;
    }
}

// A segment's rows do not depend on the other segments of the call, on its rows' order within the
// work split, or on the thread count.
TEST(BlockSparseAttention, SegmentAloneVersusTogetherVersusThreads) {
  Data d = make_data(12, 4, 64, 32, 1000, 5, true);
  for (size_t a = 256; a < 1000; a += 256) add_segment(d, a, std::min<size_t>(1000, a + 256), 7, a);
  fix_pointers(d);
  const int threads0 = accel::num_threads();
  accel::set_num_threads(2);
  const std::vector<float> two = run(d);
  accel::set_num_threads(1);
  const std::vector<float> one = run(d);
  accel::set_num_threads(threads0);
  const size_t w = size_t(12) * 64;
  for (size_t si = 0; si < d.segs.size(); ++si) {
    Data alone = d;
    alone.segs = {d.segs[si]};
    alone.lists = {d.lists[si]};
    fix_pointers(alone);
    const std::vector<float> a = run(alone);
    for (size_t i = d.segs[si].q_begin; i < d.segs[si].q_end; ++i) {
      ASSERT_TRUE(bit_equal({a.data() + i * d.ldo, w}, {two.data() + i * d.ldo, w}))
          << "segment " << si << " row " << i;
      ASSERT_TRUE(bit_equal({one.data() + i * d.ldo, w}, {two.data() + i * d.ldo, w}))
          << "1 vs 2 threads, row " << i;
    }
  }
  EXPECT_TRUE(matches_reference(d, two, KVFormat::F32));
}

// Rows outside every segment are not written; a query before every listed key gets zeros.
TEST(BlockSparseAttention, UnlistedRowsUntouchedAndBlindQueriesZero) {
  Data d = make_data(4, 2, 32, 32, 300, 8, false);
  add_segment(d, 128, 200, 2, 3);
  fix_pointers(d);
  std::vector<int32_t> q_pos = d.pos;
  q_pos[150] = -1;  // sees nothing
  std::vector<float> out(d.n_kv * d.ldo, NAN);
  accel::attention_block_sparse(d.s, d.block, d.q.data(), d.ldq, q_pos.data(), d.n_kv,
                                KVRows{d.k.data(), d.v.data(), d.ldkv, KVFormat::F32}, d.pos.data(),
                                d.n_kv, d.segs, out.data(), d.ldo);
  for (size_t i = 0; i < d.n_kv; ++i)
    for (size_t t = 0; t < 4 * 32; ++t) {
      const float x = out[i * d.ldo + t];
      if (i < 128 || i >= 200)
        ASSERT_TRUE(std::isnan(x)) << "row " << i;
      else if (i == 150)
        ASSERT_EQ(x, 0.f);
      else
        ASSERT_TRUE(std::isfinite(x));
    }
}

TEST(BlockSparseAttention, RejectsBadListsByName) {
  Data d = make_data(4, 2, 32, 32, 300, 9, false);
  auto expect_throw = [&](std::vector<int32_t> list, size_t n_blocks, size_t own_begin,
                          const std::string& needle) {
    std::vector<SparseSegment> segs{{own_begin, 300, own_begin, 300, list.data(), n_blocks}};
    std::vector<float> out(d.n_kv * d.ldo);
    try {
      accel::attention_block_sparse(d.s, d.block, d.q.data(), d.ldq, d.pos.data(), d.n_kv,
                                    KVRows{d.k.data(), d.v.data(), d.ldkv, KVFormat::F32},
                                    d.pos.data(), d.n_kv, segs, out.data(), d.ldo);
      ADD_FAILURE() << "no throw for " << needle;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  expect_throw({0, 4, 1, 2}, 2, 128, "block 4 does not end");    // ends at key 160 > 128
  expect_throw({2, 1, 0, 1}, 2, 160, "not after the previous");  // descending
  expect_throw({0, 1, 0, 1}, 2, 32, "does not end at or before key row 32");
  std::vector<SparseSegment> segs{{0, 301, 0, 300, nullptr, 0}};
  std::vector<float> out(d.n_kv * d.ldo);
  EXPECT_THROW(accel::attention_block_sparse(d.s, d.block, d.q.data(), d.ldq, d.pos.data(), d.n_kv,
                                             KVRows{d.k.data(), d.v.data(), d.ldkv, KVFormat::F32},
                                             d.pos.data(), d.n_kv, segs, out.data(), d.ldo),
               std::invalid_argument);
}

}  // namespace
