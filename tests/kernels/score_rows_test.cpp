// Tests of kernels/score_rows.h: dot_scores bit for bit against the scalar fused chain it promises
// over a table of (rows, keys, dim) that straddle the tile and vector widths; softmax_scaled bit
// for bit against a scalar transcription of its documented order and within a derived bound of a
// double softmax; max_accumulate and mean_of_rows against hand-worked values and thread counts.
// Tests only.
#include "kernels/score_rows.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <sstream>
#include <vector>

#include "kernels/simd.h"
#include "kernels/threading.h"
#include "tests/support/test_support.h"

namespace {

using accel::test::bit_equal;
using accel::test::near_all;
using accel::test::random_normal;

constexpr double kU = 0x1p-24;  // unit roundoff of float
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

// ---- dot_scores -------------------------------------------------------------------------------

// The promised sequence: acc = 0; acc = fma(q[t], k[t], acc) for t ascending.
float fma_chain(const float* q, const float* k, int dim) {
  float acc = 0.f;
  for (int t = 0; t < dim; ++t) acc = std::fma(q[t], k[t], acc);
  return acc;
}

TEST(DotScores, MatchTheFmaChainBitForBitAcrossTileAndVectorEdges) {
  // Rows: 1..9 (the micro-kernel takes 8), 17, 33. Keys: below, at and past one and two key
  // tiles of either width (16 or 32 keys). Dims: below, at and past the 8/16-float transpose block.
  const int rows_cases[] = {1, 2, 7, 8, 9, 17, 33};
  const size_t key_cases[] = {1, 2, 15, 16, 17, 31, 32, 33, 65, 100};
  const int dim_cases[] = {1, 3, 7, 8, 9, 15, 16, 17, 31, 33, 64, 80};
  for (int nr : rows_cases)
    for (size_t nk : key_cases)
      for (int d : dim_cases) {
        std::ostringstream what;
        what << "rows=" << nr << " keys=" << nk << " dim=" << d;
        const size_t ldq = size_t(d) + 3, ldk = size_t(d) + 5;  // strides off the vector width
        const std::vector<float> q = random_normal(size_t(nr) * ldq, 100 + nr * 7 + d);
        const std::vector<float> k = random_normal(nk * ldk, 200 + nk + size_t(d));
        std::vector<const float*> qrow(static_cast<size_t>(nr));
        for (int r = 0; r < nr; ++r) qrow[size_t(r)] = q.data() + size_t(r) * ldq;
        const size_t ld = accel::dot_scores_row_stride(nk);
        ASSERT_GE(ld, nk) << what.str();
        std::vector<float> s(size_t(nr) * ld, kNaN), want(size_t(nr) * ld, 0.f);
        accel::dot_scores(qrow.data(), nr, k.data(), ldk, nk, d, s.data(), ld);
        for (int r = 0; r < nr; ++r)
          for (size_t j = 0; j < nk; ++j)
            want[size_t(r) * ld + j] = fma_chain(qrow[size_t(r)], k.data() + j * ldk, d);
        // Padding columns are scores against zero rows: exactly 0.
        ASSERT_TRUE(bit_equal(s, want)) << what.str();
      }
}

TEST(DotScores, RowStrideIsWholeTilesAndEmptyCallsWriteNothing) {
  const size_t tile = accel::dot_scores_row_stride(1);
  EXPECT_EQ(tile, size_t(2 * accel::simd::W));
  EXPECT_EQ(accel::dot_scores_row_stride(tile), tile);
  EXPECT_EQ(accel::dot_scores_row_stride(tile + 1), 2 * tile);
  EXPECT_EQ(accel::dot_scores_row_stride(0), size_t(0));
  float s = kNaN;
  const float q[1] = {1.f};
  const float* qrow[1] = {q};
  accel::dot_scores(qrow, 1, q, 1, 0, 1, &s, 1);
  accel::dot_scores(qrow, 0, q, 1, 1, 1, &s, 1);
  EXPECT_TRUE(std::isnan(s));
}

// ---- softmax_scaled ---------------------------------------------------------------------------

// Scalar transcription of the documented order: exact max, e = exp_nonpos((x - m) * scale),
// e summed in double into lane j % 16, lanes summed in order, one float reciprocal, x *= inv.
std::vector<float> softmax_in_documented_order(std::vector<float> x, float scale) {
  float m = x[0];
  for (float v : x) m = v > m ? v : m;
  double lane[16] = {};
  for (size_t j = 0; j < x.size(); ++j) {
    x[j] = accel::simd::exp_nonpos((x[j] - m) * scale);
    lane[j % 16] += double(x[j]);
  }
  double sum = 0;
  for (double v : lane) sum += v;
  const float inv = float(1.0 / sum);
  for (float& v : x) v *= inv;
  return x;
}

const size_t kSoftmaxSizes[] = {1, 2, 7, 8, 9, 15, 16, 17, 31, 32, 33, 47, 100, 1000, 4099};

TEST(SoftmaxScaled, MatchesTheDocumentedOrderBitForBit) {
  // The vector body, the scalar tail and the 8- or 16-lane width must not change a bit.
  for (size_t n : kSoftmaxSizes) {
    const std::vector<float> x = random_normal(n, 300 + n, 4.f);
    std::vector<float> got = x;
    accel::softmax_scaled(got.data(), n, 0.125f);
    EXPECT_TRUE(bit_equal(got, softmax_in_documented_order(x, 0.125f))) << "n=" << n;
  }
}

TEST(SoftmaxScaled, WithinDerivedBoundOfDoubleSoftmax) {
  // Per element: the argument a = fl(fl(x - m) * scale) carries relative error <= 2u, i.e. an
  // absolute error <= 2u|a| in the exponent, so e^a is off by a factor (1 + 2u|a|); exp_nonpos adds
  // <= 1.5 ulp (measured 1.016, see simd_test) <= 1.5 * 2u relative; the double normaliser sums
  // values each off by those factors (same bound), the reciprocal to float and the final product
  // add 2u. Total relative error <= 2 * (2u max|a| + 3u) + 2u, checked as written.
  for (size_t n : kSoftmaxSizes) {
    const float scale = 0.125f;
    const std::vector<float> x = random_normal(n, 400 + n, 8.f);
    std::vector<float> got = x;
    accel::softmax_scaled(got.data(), n, scale);
    double m = x[0];
    for (float v : x) m = std::max(m, double(v));
    double sum = 0, amax = 0;
    std::vector<double> want(n);
    for (size_t j = 0; j < n; ++j) {
      want[j] = std::exp((double(x[j]) - m) * scale);
      sum += want[j];
      amax = std::max(amax, (m - double(x[j])) * scale);
    }
    for (double& w : want) w /= sum;
    const double rtol = 2 * (2 * kU * amax + 3 * kU) + 2 * kU;
    EXPECT_TRUE(near_all(got, want, 0.0, rtol)) << "n=" << n;
  }
}

TEST(SoftmaxScaled, HandWorkedValues) {
  // Equal scores share the mass equally (1/4 is exact); one score far above the others (beyond the
  // e^-87 flush) takes all of it.
  std::vector<float> eq(4, 2.5f);
  accel::softmax_scaled(eq.data(), eq.size(), 1.f);
  for (float v : eq) EXPECT_EQ(v, 0.25f);
  std::vector<float> one = {0.f, 100.f, 0.f};
  accel::softmax_scaled(one.data(), one.size(), 1.f);
  EXPECT_EQ(one, (std::vector<float>{0.f, 1.f, 0.f}));
}

// ---- max_accumulate and mean_of_rows ----------------------------------------------------------

TEST(MaxAccumulate, KeepsTheLargerAndNaNNeverWins) {
  std::vector<float> acc = {1.f, 5.f, -2.f, kNaN, 3.f};
  const std::vector<float> x = {2.f, 4.f, -2.f, 7.f, kNaN};
  accel::max_accumulate(acc.data(), x.data(), x.size());
  EXPECT_EQ(acc[0], 2.f);
  EXPECT_EQ(acc[1], 5.f);
  EXPECT_EQ(acc[2], -2.f);
  EXPECT_TRUE(std::isnan(acc[3]));  // a NaN accumulator stays NaN
  EXPECT_EQ(acc[4], 3.f);           // a NaN input is ignored
}

TEST(MeanOfRows, AscendingFloatSumOverRowsForAnyThreadCount) {
  // 5000 columns crosses the parallel threshold; the sum order is rows 0..R-1 in float.
  const size_t rows = 7, n = 5000;
  const std::vector<float> x = random_normal(rows * n, 500, 3.f);
  std::vector<float> want(n);
  for (size_t j = 0; j < n; ++j) {
    float s = 0.f;
    for (size_t r = 0; r < rows; ++r) s += x[r * n + j];
    want[j] = s / float(rows);
  }
  for (int threads : {1, 2}) {
    accel::set_num_threads(threads);
    std::vector<float> got(n, kNaN);
    accel::mean_of_rows(x.data(), rows, n, got.data());
    EXPECT_TRUE(bit_equal(got, want)) << threads << " threads";
  }
  const float one_row[3] = {1.f, -2.f, 0.5f};
  float out[3];
  accel::mean_of_rows(one_row, 1, 3, out);
  EXPECT_EQ(out[2], 0.5f);
}

}  // namespace
