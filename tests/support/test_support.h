// Shared test helpers: numeric comparison against double references that reports the worst
// element, paths to optional real data in ../shared/data, scratch directories and seeded data.
#pragma once
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <vector>

namespace accel::test {

// True in the sanitizer build, where the libraries run 5 to 15 times slower: the longest parity
// sweeps run a stated subset of their cases there (the release build runs them all), so that CI's
// sanitizer phase covers the same code paths within its time.
constexpr bool under_sanitizers() {
#ifdef ACCELBENCH_SANITIZED
  return true;
#else
  return false;
#endif
}

// Compares `got` to `want` element-wise with |got - want| <= atol + rtol * |want|. On failure the
// assertion message names how many elements were out, the worst index, expected and actual.
::testing::AssertionResult near_all(std::span<const float> got, std::span<const double> want,
                                    double atol, double rtol);
// Bit-exact equality of two float arrays, naming the first differing index.
::testing::AssertionResult bit_equal(std::span<const float> a, std::span<const float> b);

// `ACCELBENCH_SHARED_DATA/<rel>` (the environment variable, else the build's ../shared/data) if it
// exists, else nullopt. A missing file must not pass CI green: under CI=true a call from inside a
// running test also records a non-fatal failure naming the path, so the caller's skip still fails
// the test. Outside CI the caller skips with missing_shared_data(rel) as its message.
std::optional<std::filesystem::path> shared_data(const std::string& rel);
// "shared test data <absolute path> is absent (...)": the skip message, naming the path looked for.
std::string missing_shared_data(const std::string& rel);
// Whether this is a CI run (CI=true in the environment, as .ci/run is started).
bool in_ci();

// A fresh empty directory under the system temp dir, removed when the object dies.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

// n token ids uniform in [0, vocab) from a seeded mt19937_64.
std::vector<int32_t> seeded_tokens(size_t n, int vocab, uint64_t seed);

// n floats from N(0, stddev) with a fixed seed.
std::vector<float> random_normal(size_t n, uint64_t seed, float stddev = 1.f);

// A parameter's text as a gtest name: '-' (in family and vocabulary names) becomes '_', which gtest
// accepts. NameWithUnderscores is the name generator for tests parameterised by such a name.
std::string dashes_to_underscores(std::string s);
struct NameWithUnderscores {
  std::string operator()(const ::testing::TestParamInfo<const char*>& info) const {
    return dashes_to_underscores(info.param);
  }
};

// Path of the built `accelbench` binary and a helper that runs it with arguments, capturing
// stdout+stderr; returns the exit code.
std::string accelbench_binary();
int run_cli(const std::string& args, std::string* output = nullptr);
// Runs a shell command, capturing its stdout (redirect stderr in `cmd` to capture it too);
// returns the exit code, -1 when it did not exit normally.
int run_command(const std::string& cmd, std::string* output = nullptr);

}  // namespace accel::test

// Fails (under CI=true) or skips the current test when `missing` (an expression giving a
// std::string that names what is absent) is not empty: the one rule for tests that need something
// from outside the tree.
#define ACCEL_REQUIRE(missing)                                              \
  do {                                                                      \
    const std::string accel_missing_ = (missing);                           \
    if (!accel_missing_.empty()) {                                          \
      if (::accel::test::in_ci()) FAIL() << accel_missing_ << " (CI=true)"; \
      GTEST_SKIP() << accel_missing_ << " (this test fails under CI=true)"; \
    }                                                                       \
  } while (0)
