// fuzz.ratio under both backends and LongBench's code_sim_score on top of it. Hand-worked cases
// (values printed by fuzzywuzzy 0.18.0 at development time), then the seeded cases of
// fixtures/make_code_sim_cases.py scored by fuzzywuzzy itself, run when /usr/bin/python3 has
// fuzzywuzzy and python-Levenshtein: every case must be equal under both backends.
#include "suites/fuzz_ratio.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "suites/longbench_metrics.h"
#include "suites/python_text.h"
#include "tests/support/python_reference.h"

namespace accel {
namespace {

constexpr FuzzBackend kDifflib = FuzzBackend::Difflib, kLev = FuzzBackend::Levenshtein;

TEST(FuzzRatio, DecoratorsComeBeforeEitherBackend) {
  for (FuzzBackend b : {kDifflib, kLev}) {
    EXPECT_EQ(fuzz_ratio(U"", U"", b), 100);  // check_for_equivalence before check_empty_string
    EXPECT_EQ(fuzz_ratio(U"a", U"", b), 0);
    EXPECT_EQ(fuzz_ratio(U"", U"a", b), 0);
    EXPECT_EQ(fuzz_ratio(U"same", U"same", b), 100);
  }
}

TEST(FuzzRatio, LevenshteinBackendRoundsHalvesToEven) {
  EXPECT_EQ(fuzz_ratio(U"abcdefgh", U"aXXXXXXX", kLev), 12);  // 12.5
  EXPECT_EQ(fuzz_ratio(U"abcdefgh", U"abcXXXXX", kLev), 38);  // 37.5
  EXPECT_EQ(fuzz_ratio(U"abczzzzz", U"zzzzzabc", kLev), 62);  // 62.5
  EXPECT_EQ(fuzz_ratio(U"kitten", U"sitting", kLev), 62);
}

TEST(FuzzRatio, BackendsDifferWhereDifflibIsGreedyOrJunksPopularCharacters) {
  // difflib takes the longest block first ("x" or "a + b"-like pieces); LCS takes any order.
  EXPECT_EQ(fuzz_ratio(U"x = a + b", U"b + a = x", kDifflib), 33);
  EXPECT_EQ(fuzz_ratio(U"x = a + b", U"b + a = x", kLev), 56);
  // 260 code points: difflib's autojunk drops the popular characters from b's index.
  std::u32string a, b;
  for (int i = 0; i < 20; ++i) a += U"x = foo(bar) ", b += U"x = foo(baz) ";
  EXPECT_EQ(fuzz_ratio(a, b, kDifflib), 4);
  EXPECT_EQ(fuzz_ratio(a, b, kLev), 92);
}

TEST(FuzzRatio, BackendNamesRoundTrip) {
  for (FuzzBackend b : {kDifflib, kLev}) EXPECT_EQ(parse_fuzz_backend(fuzz_backend_name(b)), b);
  EXPECT_THROW(parse_fuzz_backend("rapidfuzz"), std::invalid_argument);
}

TEST(FuzzRatio, CodeSimScoreTakesTheFirstLineWithoutBacktickHashOrSlashes) {
  using longbench::code_sim_score;
  // The line containing '#' anywhere is skipped, not only comment lines.
  EXPECT_EQ(code_sim_score(U"\n```\nx = 1  # set\nb + a = x", U"x = a + b", kLev), 0.56);
  EXPECT_EQ(code_sim_score(U"\n```\nx = 1  # set\nb + a = x", U"x = a + b", kDifflib), 0.33);
  EXPECT_EQ(code_sim_score(U"// only", U"", kLev), 1.0);  // no line qualifies: "" == ""
}

TEST(FuzzRatio, CodeSimScoreEqualsFuzzywuzzyUnderBothBackendsOnGeneratedCases) {
  ACCEL_REQUIRE_PYTHON("fuzzywuzzy", "Levenshtein");
  std::string out, err;
  const int code = test::run_python(
      std::string(ACCELBENCH_SOURCE_DIR) + "/tests/suites/fixtures/make_code_sim_cases.py", &out,
      &err);
  ASSERT_EQ(code, 0) << err;
  const nlohmann::json j = nlohmann::json::parse(out);
  const auto& cases = j.at("cases");
  ASSERT_GE(cases.size(), 5000u);
  size_t differ = 0, bad_difflib = 0, bad_lev = 0;
  for (size_t i = 0; i < cases.size(); ++i) {
    const auto& c = cases[i];
    const pytext::U32 pred = pytext::utf8_decode_lossy(c[0].get<std::string>());
    const pytext::U32 gt = pytext::utf8_decode_lossy(c[1].get<std::string>());
    const double want_difflib = c[2].get<double>(), want_lev = c[3].get<double>();
    differ += want_difflib != want_lev;
    const double got_difflib = longbench::code_sim_score(pred, gt, kDifflib);
    const double got_lev = longbench::code_sim_score(pred, gt, kLev);
    bad_difflib += got_difflib != want_difflib;
    bad_lev += got_lev != want_lev;
    EXPECT_EQ(got_difflib, want_difflib) << "case " << i << " (difflib)";
    EXPECT_EQ(got_lev, want_lev) << "case " << i << " (levenshtein)";
    if (bad_difflib + bad_lev > 20) FAIL() << "stopping after 20 differences";
  }
  // The backends must disagree somewhere, or the levenshtein comparison proves nothing new.
  EXPECT_GT(differ, 0u);
  std::cout << cases.size() << " cases (" << j.at("versions").dump() << "): " << differ
            << " differ between the backends; C++ differs from difflib in " << bad_difflib
            << ", from levenshtein in " << bad_lev << "\n";
}

}  // namespace
}  // namespace accel
