// Tests of accel::gemm (kernels/gemm.h): accuracy against the double reference for every weight
// type over a table of awkward shapes, batch invariance bit for bit (M, row index, thread count),
// quantized == f32-on-dequantized bit for bit (k-quants: their activation-rounding bound), and no
// writes outside Y's M x N region.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "kernels/dtype.h"
#include "kernels/fp16.h"
#include "kernels/gemm.h"
#include "kernels/kquant.h"
#include "kernels/quant.h"
#include "kernels/threading.h"
#include "tests/support/kquant_dot_reference.h"
#include "tests/support/test_support.h"

namespace accel {
namespace {

using test::bit_equal;
using test::random_normal;

constexpr DType kAllTypes[] = {DType::F32,  DType::F16,  DType::BF16, DType::Q8_0, DType::Q4_0,
                               DType::Q4_K, DType::Q5_K, DType::Q6_K, DType::MXFP4};

bool is_quant(DType t) {
  return dtype_block_elems(t) > 1;
}
bool is_kquant(DType t) {
  return dtype_block_elems(t) == 256;
}
// Weights the GEMM multiplies by quantized activations (integer dot products).
bool is_intdot(DType t) {
  return is_kquant(t) || t == DType::MXFP4 || t == DType::Q8_0;
}

// Raw ggml-layout weight (N rows of K) of type t from N(0, 1) values.
std::vector<uint8_t> make_weight(DType t, size_t N, size_t K, uint64_t seed) {
  const std::vector<float> w = random_normal(N * K, seed);
  std::vector<uint8_t> raw(dtype_row_bytes(t, K) * N);
  quantize_row(t, w.data(), raw.data(), N * K);
  return raw;
}

std::vector<float> dequantized(DType t, const std::vector<uint8_t>& raw, size_t N, size_t K) {
  std::vector<float> w(N * K);
  dequantize_row(t, raw.data(), w.data(), N * K);
  return w;
}

// Restores the default thread count when a test changes it.
struct ThreadGuard {
  ~ThreadGuard() { set_num_threads(default_num_threads()); }
};

// Error bound per output. Y = fl(...fl(fl(x0 w0) + x1 w1)... + x_{K-1} w_{K-1}) (+ bias) is K
// roundings of a partial sum (one per FMA) plus one for the bias add; each rounding errs by at
// most u = 2^-24 of a value bounded by S = Σ|x_k w_k| + |bias|, so |Y - exact| <= (K + 1) u S.
// The weights are the exact dequantized values in both Y and the double reference, whose own
// error (~K 2^-53 S) is covered by using K + 2. The reference is exact enough to be "exact".
::testing::AssertionResult within_bound(const std::vector<float>& y, size_t ldy,
                                        const std::vector<double>& ref, const std::vector<float>& x,
                                        size_t ldx, const std::vector<float>& w, size_t M, size_t N,
                                        size_t K, const float* bias) {
  const double u = std::ldexp(1.0, -24);
  size_t bad = 0, wm = 0, wn = 0;
  double worst = -1, worst_bound = 0;
  for (size_t m = 0; m < M; ++m)
    for (size_t n = 0; n < N; ++n) {
      double s = bias ? std::fabs(bias[n]) : 0;
      for (size_t k = 0; k < K; ++k) s += std::fabs(double(x[m * ldx + k]) * w[n * K + k]);
      const double bound = double(K + 2) * u * s;
      const double err = std::fabs(double(y[m * ldy + n]) - ref[m * N + n]);
      const double excess = std::isnan(err) ? INFINITY : err - bound;
      if (excess > 0) ++bad;
      if (excess > worst) {
        worst = excess;
        wm = m;
        wn = n;
        worst_bound = bound;
      }
    }
  if (bad == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << bad << " of " << M * N << " outputs out of bound; worst at (" << wm << ", " << wn
         << "): expected " << ref[wm * N + wn] << ", got " << y[wm * ldy + wn] << ", bound "
         << worst_bound;
}

struct Case {
  size_t M, N, K;
};

std::string describe(DType t, const Case& c, bool bias) {
  std::ostringstream s;
  s << dtype_name(t) << " M=" << c.M << " N=" << c.N << " K=" << c.K << (bias ? " +bias" : "");
  return s.str();
}

// k-quant weights compute on q8_K activations (kernels/kquant_panel.h): per super-block two
// products of a rounded scale (dx * d, dx * dmin: one rounding each) and an int32 converted to
// float (one rounding when |A| >= 2^24), each added by one fma, then the bias add. Each product
// errs by at most 2u of its exact value and each of the 2 K/256 + 1 additions by u of a partial
// sum bounded by S = the sum of the terms' magnitudes (+ |bias|), so
// |Y - exact| <= (2 K/256 + 3) u S; the double "exact" adds ~2^-53 S (covered by + 2). The exact
// value is the same sum in double over the same integer dot products (test::kquant_dot_reference).
// MXFP4 and q8_0 (q8_0 activations, mxfp4_panel.h, q8_0_panel.h) have one such term per 32-block:
// K/32 fmas.
::testing::AssertionResult kquant_within_bound(DType t, const std::vector<uint8_t>& raw,
                                               const std::vector<float>& y, size_t ldy,
                                               const std::vector<float>& x, size_t ldx,
                                               const Case& c, const float* bias) {
  const double u = std::ldexp(1.0, -24);
  const size_t row_bytes = dtype_row_bytes(t, c.K);
  for (size_t m = 0; m < c.M; ++m)
    for (size_t n = 0; n < c.N; ++n) {
      const test::KDotReference r = test::kquant_dot_reference(
          t, raw.data() + n * row_bytes, x.data() + m * ldx, c.K, bias ? bias + n : nullptr);
      const size_t terms = t == DType::MXFP4 || t == DType::Q8_0 ? c.K / 32 : 2 * c.K / 256;
      const double bound = double(terms + 5) * u * r.magnitude;
      const double err = std::fabs(double(y[m * ldy + n]) - r.exact);
      if (!(err <= bound))
        return ::testing::AssertionFailure()
               << "output (" << m << ", " << n << "): exact " << r.exact << ", got "
               << y[m * ldy + n] << ", bound " << bound;
    }
  return ::testing::AssertionSuccess();
}

// Runs gemm on case c with padded strides and checks accuracy and the untouched padding.
void check_case(DType t, const Case& c, bool with_bias, uint64_t seed) {
  SCOPED_TRACE(describe(t, c, with_bias));
  const size_t ldx = c.K + 3, ldy = c.N + 5;  // strides that are not multiples of a vector
  const std::vector<uint8_t> raw = make_weight(t, c.N, c.K, seed);
  const std::vector<float> w = dequantized(t, raw, c.N, c.K);
  const std::vector<float> x = random_normal(c.M * ldx, seed + 1);
  const std::vector<float> bias = random_normal(c.N, seed + 2);
  const float* b = with_bias ? bias.data() : nullptr;
  const PackedWeight pw = PackedWeight::pack(t, raw.data(), c.N, c.K);
  const float sentinel = 12345.f;
  std::vector<float> y(c.M * ldy, sentinel);
  gemm(x.data(), c.M, ldx, pw, y.data(), ldy, b);
  if (is_intdot(t)) {
    EXPECT_TRUE(kquant_within_bound(t, raw, y, ldy, x, ldx, c, b));
  } else {
    std::vector<double> ref(c.M * c.N);
    gemm_reference(x.data(), c.M, ldx, t, raw.data(), c.N, c.K, ref.data(), c.N, b);
    EXPECT_TRUE(within_bound(y, ldy, ref, x, ldx, w, c.M, c.N, c.K, b));
  }
  for (size_t m = 0; m < c.M; ++m)
    for (size_t n = c.N; n < ldy; ++n)
      ASSERT_EQ(y[m * ldy + n], sentinel) << "write outside Y at (" << m << ", " << n << ")";
}

// Row counts around the 6-row tile (both ISAs), the 12-row direct/scratch switch and the 96-row M
// block; column counts around the 16-lane vectors and the 64 (AVX-512) / 16 (AVX2) column panel;
// K odd (float types) or multiples of 32 (quantized; 256 for k-quants). LargeShapes adds K past the
// K-block.
const size_t kMs[] = {1, 2, 3, 4, 5, 6, 7, 13, 31, 32, 33, 34, 35};
const size_t kNs[] = {1, 2, 3, 7, 8, 9, 15, 16, 17, 31, 32, 33, 35, 64, 65};
const size_t kKsFloat[] = {1, 3, 17, 32, 96};
const size_t kKsQuant[] = {32, 64, 96};
const size_t kKsKQuant[] = {256, 512, 768};

class GemmAccuracy : public ::testing::TestWithParam<DType> {};

TEST_P(GemmAccuracy, ShapeTable) {
  const DType t = GetParam();
  uint64_t seed = 100;
  for (size_t K : is_kquant(t)  ? std::vector<size_t>(std::begin(kKsKQuant), std::end(kKsKQuant))
                  : is_quant(t) ? std::vector<size_t>(std::begin(kKsQuant), std::end(kKsQuant))
                                : std::vector<size_t>(std::begin(kKsFloat), std::end(kKsFloat)))
    for (size_t M : kMs)
      for (size_t N : kNs) check_case(t, {M, N, K}, (M + N) % 2 == 0, ++seed);
}

TEST_P(GemmAccuracy, LargeShapes) {
  const DType t = GetParam();
  // 256 rows > one M block; 257 columns > one 4-panel N chunk; K 768 (model hidden) and K past the
  // 1024 K-block, not a multiple of it (1056 = 1024 + 32; 1280 = 1024 + 256 for k-quants; 1201
  // for float types).
  const size_t kOdd = is_kquant(t) ? 1280 : is_quant(t) ? 1056 : 1201;
  for (const Case& c : {Case{256, 257, 768}, Case{7, 257, 768}, Case{33, 100, kOdd},
                        Case{1, 1, kOdd}, Case{200, 40, 768}})
    for (bool bias : {false, true}) check_case(t, c, bias, 7 + c.M + c.N);
}

INSTANTIATE_TEST_SUITE_P(AllTypes, GemmAccuracy, ::testing::ValuesIn(kAllTypes),
                         [](const auto& info) { return std::string(dtype_name(info.param)); });

std::vector<float> run(const float* x, size_t M, size_t K, const PackedWeight& pw,
                       const float* bias) {
  std::vector<float> y(M * pw.rows());
  gemm(x, M, K, pw, y.data(), pw.rows(), bias);
  return y;
}

// Batch invariance (ARCHITECTURE.md invariant 1): each row's outputs are bit-identical to the
// same row computed in a batch of 256, whatever M, the row's index, and 1 or 2 threads. N = 257
// splits threads over N panels, N = 40 (one panel) splits them over M; K spans two K-blocks.
class GemmBatchInvariance : public ::testing::TestWithParam<DType> {};

TEST_P(GemmBatchInvariance, RowsMatchAcrossBatchSizesPositionsAndThreads) {
  ThreadGuard guard;
  const DType t = GetParam();
  const size_t K = is_kquant(t) ? 1280 : is_quant(t) ? 1056 : 1201;
  for (size_t N : {size_t(257), size_t(40)}) {
    const std::vector<uint8_t> raw = make_weight(t, N, K, 5);
    const PackedWeight pw = PackedWeight::pack(t, raw.data(), N, K);
    const std::vector<float> bias = random_normal(N, 6);
    const size_t big = 256;
    const std::vector<float> x = random_normal(big * K, 8);
    set_num_threads(1);
    const std::vector<float> full = run(x.data(), big, K, pw, bias.data());
    for (int threads : {1, 2}) {
      set_num_threads(threads);
      for (size_t M : {1, 2, 3, 5, 7, 16, 33, 256}) {
        for (size_t start : {size_t(0), size_t(1), big - M}) {  // different rows, different slots
          if (start + M > big) continue;
          SCOPED_TRACE(describe(t, {M, N, K}, true) + " threads=" + std::to_string(threads) +
                       " rows from " + std::to_string(start));
          const std::vector<float> y = run(x.data() + start * K, M, K, pw, bias.data());
          ASSERT_TRUE(bit_equal(y, std::span(full).subspan(start * N, M * N)));
        }
      }
      // One probe row placed at every index of a 35-row batch of other rows.
      const size_t probe = 17;
      const std::span<const float> want(full.data() + probe * N, N);
      for (size_t idx = 0; idx < 35; ++idx) {
        std::vector<float> xb(x.begin() + 100 * K, x.begin() + 135 * K);
        std::copy(x.begin() + probe * K, x.begin() + (probe + 1) * K, xb.begin() + idx * K);
        const std::vector<float> y = run(xb.data(), 35, K, pw, bias.data());
        ASSERT_TRUE(bit_equal(std::span(y).subspan(idx * N, N), want))
            << "probe at index " << idx << " threads " << threads;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllTypes, GemmBatchInvariance, ::testing::ValuesIn(kAllTypes),
                         [](const auto& info) { return std::string(dtype_name(info.param)); });

// A non-f32 weight other than the integer-dot types (k-quants, MXFP4, q8_0) must give exactly the
// f32 GEMM on its dequantized matrix: those kernels only change how weights are stored, never the
// arithmetic. (The integer-dot types compute on quantized activations: *ActivationError* below.)
TEST(Gemm, NonF32EqualsF32OnDequantizedBitForBit) {
  for (DType t : {DType::F16, DType::BF16, DType::Q4_0})
    for (const Case& c : {Case{1, 33, 64u}, Case{13, 257, 1056u}, Case{256, 64, 768}}) {
      SCOPED_TRACE(describe(t, c, true));
      const std::vector<uint8_t> raw = make_weight(t, c.N, c.K, 11);
      const std::vector<float> w = dequantized(t, raw, c.N, c.K);
      const std::vector<float> x = random_normal(c.M * c.K, 12);
      const std::vector<float> bias = random_normal(c.N, 13);
      const PackedWeight pq = PackedWeight::pack(t, raw.data(), c.N, c.K);
      const PackedWeight pf = PackedWeight::pack(DType::F32, w.data(), c.N, c.K);
      EXPECT_TRUE(bit_equal(run(x.data(), c.M, c.K, pq, bias.data()),
                            run(x.data(), c.M, c.K, pf, bias.data())));
    }
}

// A weight of mixed-type parts (Q4_K_M's q4_K Q|K with a q6_K V) gives, column range by column
// range, exactly what each part alone gives, and counts each part's own bytes. The parts share
// one parallel region (their items side by side), so this holds for decode (M = 1), for several
// row blocks (M = 200) and on one or two threads, with every activation kind in one call (q8_K,
// q8_0 and packed X).
TEST(Gemm, MixedTypePartsEqualEachPartAloneBitForBit) {
  const ThreadGuard restore;
  const ScopedParallelBackoff all_threads(false);
  const size_t K = 512;
  const std::vector<std::pair<DType, size_t>> parts = {
      {DType::Q4_K, 70}, {DType::Q6_K, 33}, {DType::F32, 5}, {DType::Q8_0, 64}, {DType::F16, 40}};
  std::vector<std::vector<uint8_t>> raws;
  std::vector<PackedWeight::TypedRowSource> src;
  size_t N = 0, bytes = 0;
  for (const auto& [t, rows] : parts) {
    raws.push_back(make_weight(t, rows, K, 30 + N));
    N += rows;
  }
  for (size_t i = 0; i < parts.size(); ++i)
    src.push_back({parts[i].first, {raws[i].data(), parts[i].second}});
  const PackedWeight mixed = PackedWeight::pack_mixed(src, K);
  EXPECT_TRUE(mixed.is_mixed());
  EXPECT_EQ(mixed.rows(), N);
  const std::vector<float> bias = random_normal(N, 41);
  for (size_t i = 0; i < parts.size(); ++i)
    bytes += PackedWeight::pack(parts[i].first, raws[i].data(), parts[i].second, K).bytes();
  EXPECT_EQ(mixed.bytes(), bytes);
  for (const size_t M : {size_t(1), size_t(7), size_t(200)})
    for (const int threads : {1, 2}) {
      set_num_threads(threads);
      const std::vector<float> x = random_normal(M * K, 40 + M);
      const std::vector<float> y = run(x.data(), M, K, mixed, bias.data());
      size_t r0 = 0;
      for (size_t i = 0; i < parts.size(); ++i) {
        const PackedWeight alone =
            PackedWeight::pack(parts[i].first, raws[i].data(), parts[i].second, K);
        const std::vector<float> want = run(x.data(), M, K, alone, bias.data() + r0);
        for (size_t m = 0; m < M; ++m)
          for (size_t n = 0; n < parts[i].second; ++n)
            ASSERT_EQ(std::bit_cast<uint32_t>(y[m * N + r0 + n]),
                      std::bit_cast<uint32_t>(want[m * parts[i].second + n]))
                << dtype_name(parts[i].first) << " M " << M << ", " << threads << " threads (" << m
                << ", " << n << ")";
        r0 += parts[i].second;
      }
    }
}

// What q8_K activations cost against the float GEMM on the dequantized weights: each code errs by
// at most dx/2 (round to nearest of x * iscale, times d = 1 / iscale, whose own rounding adds a
// relative 2^-23 or so), so |Y - sum w x| <= sum_k |w_k| dx_b / 2 (1 + 2^-20) plus the float
// bound of both paths and ggml's one rounding per dequantized weight (2u sum |w x| covers them at
// these K). w from dequantize_row, reference in double.
TEST(Gemm, KQuantActivationErrorStaysWithinTheCodeRoundingBound) {
  const size_t M = 3, N = 40, K = 768;
  for (DType t : {DType::Q4_K, DType::Q5_K, DType::Q6_K}) {
    SCOPED_TRACE(dtype_name(t));
    const std::vector<uint8_t> raw = make_weight(t, N, K, 21);
    const std::vector<float> w = dequantized(t, raw, N, K);
    const std::vector<float> x = random_normal(M * K, 22);
    const PackedWeight pw = PackedWeight::pack(t, raw.data(), N, K);
    const std::vector<float> y = run(x.data(), M, K, pw, nullptr);
    std::vector<int8_t> q(K);
    std::vector<float> dx(K / 256);
    std::vector<int32_t> s16(K / 16);
    size_t max_code_error_hits = 0;
    for (size_t m = 0; m < M; ++m) {
      quantize_activations_q8_K(x.data() + m * K, K, q.data(), dx.data(), s16.data());
      for (size_t n = 0; n < N; ++n) {
        double ref = 0, code_bound = 0, mag = 0;
        for (size_t k = 0; k < K; ++k) {
          ref += double(w[n * K + k]) * x[m * K + k];
          code_bound += std::fabs(w[n * K + k]) * dx[k / 256] / 2 * (1 + std::ldexp(1.0, -20));
          mag += std::fabs(double(w[n * K + k]) * x[m * K + k]);
        }
        const double float_bound = double(K + 8) * std::ldexp(1.0, -24) * mag;
        const double err = std::fabs(y[m * N + n] - ref);
        ASSERT_LE(err, code_bound + float_bound) << "(" << m << ", " << n << ")";
        max_code_error_hits += err > 0.5 * code_bound;
      }
    }
    // The bound is a worst case; typical errors are ~sqrt(K) smaller than it.
    EXPECT_LT(max_code_error_hits, M * N / 4);
  }
}

// The same for MXFP4 and q8_0 weights on q8_0 activations (ggml's x86 quantize_row_q8_0): each code
// errs by at most
// half a step of 1 / id = amax / 127, and the block scale d = fp16(amax / 127) used for the sum
// differs from that step by at most 2^-11 relatively, so a code c stands for x with
// |d c - x| <= amax/127 (1/2 + 127 * 2^-11) (1 + 2^-20) = d' per element; the bound is
// sum_k |w_k| d'_b plus the float bound of both paths.
class GemmQ8_0Activations : public ::testing::TestWithParam<DType> {};

TEST_P(GemmQ8_0Activations, ErrorStaysWithinTheCodeRoundingBound) {
  const DType t = GetParam();
  const size_t M = 3, N = 40, K = 768;
  const std::vector<uint8_t> raw = make_weight(t, N, K, 23);
  const std::vector<float> w = dequantized(t, raw, N, K);
  const std::vector<float> x = random_normal(M * K, 24);
  const PackedWeight pw = PackedWeight::pack(t, raw.data(), N, K);
  const std::vector<float> y = run(x.data(), M, K, pw, nullptr);
  size_t max_code_error_hits = 0;
  for (size_t m = 0; m < M; ++m) {
    std::vector<double> step(K / 32);
    for (size_t b = 0; b < K / 32; ++b) {
      double amax = 0;
      for (size_t k = 0; k < 32; ++k)
        amax = std::max(amax, std::fabs(double(x[m * K + b * 32 + k])));
      step[b] = amax / 127 * (0.5 + 127 * std::ldexp(1.0, -11)) * (1 + std::ldexp(1.0, -20));
    }
    for (size_t n = 0; n < N; ++n) {
      double ref = 0, code_bound = 0, mag = 0;
      for (size_t k = 0; k < K; ++k) {
        ref += double(w[n * K + k]) * x[m * K + k];
        code_bound += std::fabs(w[n * K + k]) * step[k / 32];
        mag += std::fabs(double(w[n * K + k]) * x[m * K + k]);
      }
      const double float_bound = double(K + 8) * std::ldexp(1.0, -24) * mag;
      const double err = std::fabs(y[m * N + n] - ref);
      ASSERT_LE(err, code_bound + float_bound) << "(" << m << ", " << n << ")";
      max_code_error_hits += err > 0.5 * code_bound;
    }
  }
  EXPECT_LT(max_code_error_hits, M * N / 4);  // a worst case; typical errors are far below it
}

INSTANTIATE_TEST_SUITE_P(Types, GemmQ8_0Activations,
                         ::testing::Values(DType::MXFP4, DType::Q8_0, DType::Q5_0),
                         [](const auto& info) { return std::string(dtype_name(info.param)); });

// A q5_0 weight is packed as the q8_0 weight holding the same values (q5_0_as_q8_0): bit-identical
// results to packing that q8_0 weight directly, for decode and for row tiles, whole or as a part
// of a mixed weight.
TEST(Gemm, Q5_0WeightsComputeExactlyAsTheirQ8_0Repack) {
  const size_t N = 40, K = 96;
  const std::vector<uint8_t> raw = make_weight(DType::Q5_0, N, K, 31);
  std::vector<uint8_t> q8(N * K / 32 * sizeof(BlockQ8_0));
  for (size_t i = 0; i < N * K / 32; ++i) {
    BlockQ5_0 b;
    std::memcpy(&b, raw.data() + i * sizeof(BlockQ5_0), sizeof b);
    const BlockQ8_0 q = q5_0_as_q8_0(b);
    std::memcpy(q8.data() + i * sizeof(BlockQ8_0), &q, sizeof q);
  }
  const PackedWeight a = PackedWeight::pack(DType::Q5_0, raw.data(), N, K);
  const PackedWeight b = PackedWeight::pack(DType::Q8_0, q8.data(), N, K);
  EXPECT_EQ(a.type(), DType::Q8_0);
  const PackedWeight mixed = PackedWeight::pack_mixed(
      {{DType::Q5_0, {raw.data(), 16}},
       {DType::Q8_0, {q8.data() + 16 * (K / 32) * sizeof(BlockQ8_0), N - 16}}},
      K);
  EXPECT_EQ(mixed.type(), DType::Q8_0);
  for (size_t M : {size_t(1), size_t(7)}) {
    const std::vector<float> x = random_normal(M * K, 32 + M);
    const std::vector<float> want = run(x.data(), M, K, b, nullptr);
    EXPECT_TRUE(bit_equal(run(x.data(), M, K, a, nullptr), want)) << M;
    EXPECT_TRUE(bit_equal(run(x.data(), M, K, mixed, nullptr), want)) << M;
  }
}

// Every half value through the kernel's F16C path: with K = 1, X = 1 and no bias,
// Y[n] = fma(1, w[n], +0) = w[n] (except -0 -> +0), so the in-kernel conversion must equal the
// scalar fp16_to_f32 for all 65536 bit patterns (NaNs only need to stay NaN).
TEST(Gemm, F16WeightsConvertExactlyForAllHalves) {
  std::vector<uint16_t> h(65536);
  for (size_t i = 0; i < h.size(); ++i) h[i] = uint16_t(i);
  const PackedWeight pw = PackedWeight::pack(DType::F16, h.data(), h.size(), 1);
  const float one = 1.f;
  const std::vector<float> y = run(&one, 1, 1, pw, nullptr);
  for (size_t i = 0; i < h.size(); ++i) {
    const float want = fp16_to_f32(h[i]);
    if (std::isnan(want)) {
      ASSERT_TRUE(std::isnan(y[i])) << "half 0x" << std::hex << i;
    } else {
      ASSERT_EQ(y[i], want == 0 ? 0.f : want) << "half 0x" << std::hex << i;
    }
  }
}

// Packing several sources (the loader's Q|K|V and gate|up fusions) must give exactly the weight
// packed from their concatenation: part boundaries that fall inside a panel (rows 7 and 50 with
// 16- or 32-row panels) as well as on one.
TEST(Gemm, PackingRowPartsEqualsPackingTheirConcatenationBitForBit) {
  for (DType t : kAllTypes) {
    SCOPED_TRACE(dtype_name(t));
    const size_t K = is_kquant(t) ? 512 : 64;
    const size_t rows[] = {7, 43, 64, 1};
    std::vector<std::vector<uint8_t>> parts;
    std::vector<uint8_t> all;
    std::vector<PackedWeight::RowSource> src;
    size_t N = 0;
    for (size_t i = 0; i < std::size(rows); ++i) {
      parts.push_back(make_weight(t, rows[i], K, 40 + i));
      all.insert(all.end(), parts.back().begin(), parts.back().end());
      N += rows[i];
    }
    for (size_t i = 0; i < parts.size(); ++i) src.push_back({parts[i].data(), rows[i]});
    const PackedWeight joined = PackedWeight::pack(t, all.data(), N, K);
    const PackedWeight split = PackedWeight::pack(t, src, K);
    ASSERT_EQ(split.rows(), N);
    ASSERT_EQ(split.bytes(), joined.bytes());
    const std::vector<float> x = random_normal(3 * K, 41);
    EXPECT_TRUE(
        bit_equal(run(x.data(), 3, K, split, nullptr), run(x.data(), 3, K, joined, nullptr)));
  }
}

TEST(Gemm, PackedBytesAndEmptyK) {
  const std::vector<uint8_t> raw = make_weight(DType::Q4_0, 40, 64, 1);
  const PackedWeight pw = PackedWeight::pack(DType::Q4_0, raw.data(), 40, 64);
  EXPECT_EQ(pw.rows(), 40u);
  EXPECT_EQ(pw.cols(), 64u);
  EXPECT_GE(pw.bytes(), raw.size());  // padded to whole panels
  EXPECT_LE(pw.bytes(), 2 * raw.size());
}

}  // namespace
}  // namespace accel
