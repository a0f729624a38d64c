// The FMA and int8 dot-product peak probes run for about the time it is given and reports a
// plausible rate. Guards the calibration: when the compiler reused a const kernel call's result,
// calibration timed nothing and one measurement ran for many minutes (seen only in the AVX2-only
// build).
#include "kernels/fma_peak.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>

namespace {

TEST(FmaPeak, MeasurementTakesRoughlyItsBudgetAndReportsAPlausibleRate) {
  const auto t0 = std::chrono::steady_clock::now();
  const double gflops = accel::measure_fma_peak_gflops(1, 0.05);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  // Budget: 0.05 s per vector width after a few ms of calibration; 20 s allows a machine slowed
  // ~100x by other load while still failing on a runaway measurement.
  EXPECT_LT(s, 20.0);
  // Any x86-64 core with AVX2+FMA sustains far more than 1 GFLOP/s, and none 10 TFLOP/s.
  EXPECT_GT(gflops, 1.0);
  EXPECT_LT(gflops, 10000.0);
}

}  // namespace

namespace {

// The int8 dot probe: the same runaway guard, a plausible rate, and the instruction it names
// matches the build (VNNI exactly when the kernels compile it in).
TEST(Int8DotPeak, MeasurementTakesRoughlyItsBudgetAndReportsAPlausibleRate) {
  const auto t0 = std::chrono::steady_clock::now();
  const double gops = accel::measure_int8_dot_peak_gops(1, 0.05);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_LT(s, 20.0);
  // One 256-bit step per cycle at 1 GHz is 32 G multiply-adds/s; any AVX2 core does more than 1,
  // and none 100,000.
  EXPECT_GT(gops, 1.0);
  EXPECT_LT(gops, 100000.0);
#if defined(__AVX512F__) ? defined(__AVX512VNNI__) : defined(__AVXVNNI__)
  EXPECT_STREQ(accel::int8_dot_instruction(), "vpdpbusd");
#else
  EXPECT_STREQ(accel::int8_dot_instruction(), "vpmaddubsw");
#endif
}

}  // namespace

namespace {

// The shared fraction on hand-worked times: separate ports (a pair costs the slower kind's time)
// give 0, fully shared ones (the sum) 1, half the smaller kind's time on top 0.5; out-of-range
// measurements clamp, and a missing time gives 0.
TEST(FmaInt8Overlap, SharedFractionOnHandWorkedTimes) {
  EXPECT_DOUBLE_EQ(accel::fma_int8_shared_fraction(1.0, 2.0, 2.0), 0.0);
  EXPECT_DOUBLE_EQ(accel::fma_int8_shared_fraction(1.0, 2.0, 3.0), 1.0);
  EXPECT_DOUBLE_EQ(accel::fma_int8_shared_fraction(2.0, 1.0, 2.5), 0.5);
  EXPECT_DOUBLE_EQ(accel::fma_int8_shared_fraction(1.0, 1.0, 0.9), 0.0);  // noise below the max
  EXPECT_DOUBLE_EQ(accel::fma_int8_shared_fraction(1.0, 1.0, 2.4), 1.0);  // noise above the sum
  EXPECT_DOUBLE_EQ(accel::fma_int8_shared_fraction(0.0, 1.0, 1.0), 0.0);
}

// The probe runs in its budget and its three rates agree with the fraction it reports; AVX-512
// VNNI builds measure it, others say they did not.
TEST(FmaInt8Overlap, MeasurementIsConsistentWithItsRates) {
  const auto t0 = std::chrono::steady_clock::now();
  const accel::FmaInt8Overlap o = accel::measure_fma_int8_overlap(1, 0.05);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_LT(s, 20.0);
#if defined(__AVX512F__) && defined(__AVX512VNNI__)
  ASSERT_TRUE(o.measured);
  EXPECT_GT(o.fma_per_s, 1e8);
  EXPECT_GT(o.dot_per_s, 1e8);
  // A pair takes at least as long as its slower instruction would (up to a noisy machine's 2x)
  // and at most both plus the same allowance.
  EXPECT_GT(o.mixed_pairs_per_s, 0.5 * std::min(o.fma_per_s, o.dot_per_s) / 2);
  EXPECT_LT(o.mixed_pairs_per_s, 2.0 * std::min(o.fma_per_s, o.dot_per_s));
  EXPECT_DOUBLE_EQ(o.shared, accel::fma_int8_shared_fraction(1 / o.fma_per_s, 1 / o.dot_per_s,
                                                             1 / o.mixed_pairs_per_s));
#else
  EXPECT_FALSE(o.measured);
  EXPECT_EQ(o.shared, 0.0);
#endif
}

}  // namespace
