// ACCEL_CHECK stays on in release builds: the macro itself aborts with file:line, the condition and
// the formatted message, and kernel preconditions that used to be asserts (compiled out under
// NDEBUG, so never checked in CI) now abort with their message. Death tests; tests only.
#include "kernels/check.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "kernels/attention.h"
#include "kernels/attention_quant.h"
#include "kernels/gemm.h"

namespace accel {
namespace {

// The kernels may have started worker threads: re-run the test binary for each death test
// instead of forking a threaded process.
class CheckDeath : public ::testing::Test {
 protected:
  void SetUp() override { GTEST_FLAG_SET(death_test_style, "threadsafe"); }
};

int checked_half(int n) {
  ACCEL_CHECK(n % 2 == 0, "n = %d is odd", n);
  return n / 2;
}

TEST_F(CheckDeath, PassingCheckReturnsNormally) {
  EXPECT_EQ(checked_half(8), 4);
}

TEST_F(CheckDeath, FailingCheckPrintsFileLineConditionAndValues) {
  EXPECT_DEATH(checked_half(7),
               R"(check_test\.cpp:[0-9]+: check failed: n % 2 == 0: n = 7 is odd)");
}

TEST_F(CheckDeath, CheckIsOnWhateverNDEBUGSays) {
#ifdef NDEBUG
  RecordProperty("ndebug", "defined");  // the release configuration CI runs
#endif
  EXPECT_DEATH(checked_half(-3), "n = -3 is odd");
}

TEST_F(CheckDeath, AttentionRefusesHeadsThatDoNotDivideIntoKvHeads) {
  const AttentionShape s{3, 2, 8, 0.35f};
  std::vector<float> q(24), kv(16), out(24);
  const int32_t pos = 0;
  EXPECT_DEATH(
      attention_causal(s, q.data(), 24, &pos, 1, kv.data(), kv.data(), 16, &pos, 1, out.data(), 24),
      "shape: 3 heads, 2 kv heads, head_dim 8");
}

TEST_F(CheckDeath, GemmRefusesARowStrideShorterThanTheRow) {
  const std::vector<float> w(4 * 64, 0.5f);
  const PackedWeight W = PackedWeight::pack(DType::F32, w.data(), 4, 64);
  std::vector<float> x(2 * 64), y(2 * 4);
  EXPECT_DEATH(gemm(x.data(), 2, 32, W, y.data(), 4),
               "2 rows: row strides ldx 32 / ldy 4 are shorter than the rows \\(64 / 4\\)");
}

// head_dim 48 has no instantiated kernel: this used to return without writing `out` in release.
TEST_F(CheckDeath, QuantAttentionRefusesAHeadDimWithoutAKernel) {
  const AttentionShape s{1, 1, 48, 0.1f};
  std::vector<float> q(48), out(48, -1.f);
  const int32_t pos = 0;
  const QuantKV kv{KVQuant::Q8_0, nullptr, nullptr, 0, 0};
  EXPECT_DEATH(attention_quant(s, q.data(), 48, &pos, 1, kv, &pos, 1, out.data(), 48),
               "head_dim 48 is not instantiated \\(multiples of 32 up to 256\\)");
  const AttentionShape wide{1, 1, 288, 0.1f};
  std::vector<float> q2(288), out2(288);
  EXPECT_DEATH(attention_quant(wide, q2.data(), 288, &pos, 1, kv, &pos, 1, out2.data(), 288),
               "head_dim 288 is not instantiated");
}

}  // namespace
}  // namespace accel
