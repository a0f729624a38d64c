// Tests of the test library itself: a test that needs ../shared/data fails under CI=true when the
// data is missing (so a checkout without it cannot pass green) and otherwise skips naming the path.
#include "tests/support/test_support.h"

#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>
#include <string>

namespace accel::test {
namespace {

// Sets CI for the scope and restores what the process had (CI itself runs with CI=true).
class ScopedCi {
 public:
  explicit ScopedCi(const char* value) {
    if (const char* old = std::getenv("CI")) old_ = old;
    if (value)
      setenv("CI", value, 1);
    else
      unsetenv("CI");
  }
  ~ScopedCi() {
    if (old_)
      setenv("CI", old_->c_str(), 1);
    else
      unsetenv("CI");
  }

 private:
  std::optional<std::string> old_;
};

constexpr const char* kAbsent = "no-such-dir/no-such-file.gguf";

TEST(SharedData, MissingDataFailsTheTestUnderCi) {
  ScopedCi ci("true");
  EXPECT_TRUE(in_ci());
  EXPECT_NONFATAL_FAILURE(EXPECT_FALSE(shared_data(kAbsent)), "no-such-dir/no-such-file.gguf");
}

TEST(SharedData, MissingDataOutsideCiIsAbsentWithoutAFailure) {
  ScopedCi ci(nullptr);
  EXPECT_FALSE(in_ci());
  EXPECT_FALSE(shared_data(kAbsent).has_value());  // a recorded failure would fail this test
  const std::string msg = missing_shared_data(kAbsent);
  EXPECT_NE(msg.find(kAbsent), std::string::npos) << msg;
  EXPECT_EQ(msg.find("shared test data /"), 0u) << "the message names an absolute path: " << msg;
}

TEST(SharedData, OnlyTheExactValueTrueMeansCi) {
  ScopedCi ci("1");
  EXPECT_FALSE(in_ci());
}

}  // namespace
}  // namespace accel::test
