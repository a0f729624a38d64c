// The FMA and int8 dot-product peak probes run for about the time it is given and reports a
// plausible rate. Guards the calibration: when the compiler reused a const kernel call's result,
// calibration timed nothing and one measurement ran for many minutes (seen only in the AVX2-only
// build).
#include "kernels/fma_peak.h"

#include <gtest/gtest.h>

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
