// Implementations of test_support.h.
#include "tests/support/test_support.h"

#include <sys/wait.h>
#include <unistd.h>
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <sstream>

namespace accel::test {

::testing::AssertionResult near_all(std::span<const float> got, std::span<const double> want,
                                    double atol, double rtol) {
  if (got.size() != want.size())
    return ::testing::AssertionFailure()
           << "size mismatch: got " << got.size() << " want " << want.size();
  size_t bad = 0, worst = 0;
  double worst_excess = -1;
  for (size_t i = 0; i < got.size(); ++i) {
    const double err = std::fabs(double(got[i]) - want[i]);
    const double tol = atol + rtol * std::fabs(want[i]);
    const double excess = std::isnan(err) ? INFINITY : err - tol;
    if (excess > 0) ++bad;
    if (excess > worst_excess) {
      worst_excess = excess;
      worst = i;
    }
  }
  if (bad == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << bad << " of " << got.size() << " elements out of tolerance (atol " << atol << ", rtol "
         << rtol << "); worst at index " << worst << ": expected " << want[worst] << ", got "
         << got[worst];
}

::testing::AssertionResult bit_equal(std::span<const float> a, std::span<const float> b) {
  if (a.size() != b.size())
    return ::testing::AssertionFailure() << "size mismatch: " << a.size() << " vs " << b.size();
  for (size_t i = 0; i < a.size(); ++i) {
    uint32_t x, y;
    std::memcpy(&x, &a[i], 4);
    std::memcpy(&y, &b[i], 4);
    if (x != y)
      return ::testing::AssertionFailure()
             << "first difference at index " << i << ": " << a[i] << " vs " << b[i];
  }
  return ::testing::AssertionSuccess();
}

namespace {
std::filesystem::path shared_data_path(const std::string& rel) {
  const char* env = std::getenv("ACCELBENCH_SHARED_DATA");
  return std::filesystem::absolute(std::filesystem::path(env ? env : ACCELBENCH_SHARED_DATA) / rel);
}
}  // namespace

bool in_ci() {
  const char* ci = std::getenv("CI");
  return ci && std::string(ci) == "true";
}

std::string missing_shared_data(const std::string& rel) {
  return "shared test data " + shared_data_path(rel).string() +
         " is absent (set ACCELBENCH_SHARED_DATA to the data directory; under CI=true this fails)";
}

std::optional<std::filesystem::path> shared_data(const std::string& rel) {
  std::filesystem::path p = shared_data_path(rel);
  if (std::filesystem::exists(p)) return p;
  // Benchmarks and static initialisers call this outside a test: nothing to fail there.
  if (in_ci() && ::testing::UnitTest::GetInstance()->current_test_info() != nullptr)
    ADD_FAILURE() << "CI=true and " << missing_shared_data(rel);
  return std::nullopt;
}

TempDir::TempDir() {
  std::string tmpl = (std::filesystem::temp_directory_path() / "accelbench-test-XXXXXX").string();
  if (!mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
  path_ = tmpl;
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

std::vector<int32_t> seeded_tokens(size_t n, int vocab, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<int32_t> t(n);
  for (auto& x : t) x = int32_t(rng() % uint64_t(vocab));
  return t;
}

std::string dashes_to_underscores(std::string s) {
  std::replace(s.begin(), s.end(), '-', '_');
  return s;
}

std::vector<float> random_normal(size_t n, uint64_t seed, float stddev) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> d(0.f, stddev);
  std::vector<float> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

std::string accelbench_binary() {
  return ACCELBENCH_BINARY;
}

int run_cli(const std::string& args, std::string* output) {
  return run_command(accelbench_binary() + " " + args + " 2>&1", output);
}

int run_command(const std::string& cmd, std::string* output) {
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return -1;
  std::string out;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) out.append(buf.data(), n);
  const int status = pclose(p);
  if (output) *output = out;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace accel::test
