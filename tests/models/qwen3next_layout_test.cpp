// qwen3next's row orders (models/qwen3next_layout.cpp) against layouts worked by hand from
// llama.cpp 3f545bec qwen3next.cpp, and row views of a tensor.
#include "models/qwen3next_layout.h"

#include <gtest/gtest.h>

namespace accel {
namespace {

std::vector<std::pair<uint64_t, uint64_t>> pairs(const std::vector<RowRange>& r) {
  std::vector<std::pair<uint64_t, uint64_t>> out;
  for (const RowRange& x : r) out.emplace_back(x.first, x.count);
  return out;
}

// 2 key heads of 3, 4 value heads of 5 (r = 2).
DeltaLayerDims dims() {
  DeltaLayerDims d;
  d.n_k_heads = 2, d.n_v_heads = 4, d.head_k_dim = 3, d.head_v_dim = 5, d.d_conv = 4;
  return d;
}

// ssm_ba rows: group 0 = [b0 b1 a0 a1], group 1 = [b2 b3 a2 a3].
TEST(Qwen3NextLayout, BaRowsReadBetaThenAlphaInValueHeadOrder) {
  using P = std::vector<std::pair<uint64_t, uint64_t>>;
  EXPECT_EQ(pairs(qwen3next_ba_rows(dims())), (P{{0, 2}, {4, 2}, {2, 2}, {6, 2}}));
}

// ssm_in rows: a group is 3 + 3 + 10 + 10 = 26 rows [q | k | v (2 heads) | z (2 heads)].
TEST(Qwen3NextLayout, QkvzRowsReadQThenKThenVThenZ) {
  using P = std::vector<std::pair<uint64_t, uint64_t>>;
  EXPECT_EQ(pairs(qwen3next_qkvz_rows(dims())),
            (P{{0, 3}, {26, 3}, {3, 3}, {29, 3}, {6, 10}, {32, 10}, {16, 10}, {42, 10}}));
}

TEST(Qwen3NextLayout, RowViewsAreWholeRowsOfTheTensor) {
  GgufTensorInfo t;
  t.name = "x";
  t.dims = {64, 10};
  t.type = DType::Q8_0;  // 2 blocks of 34 bytes per row
  t.offset = 1000;
  t.n_elements = 640;
  t.n_bytes = 680;
  const auto v = row_views(t, {{3, 2}, {9, 1}});
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(v[0].offset, 1000u + 3 * 68);
  EXPECT_EQ(v[0].n_bytes, 136u);
  EXPECT_EQ(v[0].dims, (std::vector<uint64_t>{64, 2}));
  EXPECT_EQ(v[1].offset, 1000u + 9 * 68);
  EXPECT_EQ(v[1].n_elements, 64u);
}

}  // namespace
}  // namespace accel
