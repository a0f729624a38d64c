// python-Levenshtein's ratio (levenshtein.h). Expected ratios were printed by python-Levenshtein
// 0.12.2 (Debian 12) at development time; the bit-parallel LCS is checked against the textbook
// two-row dynamic programme on seeded strings, including lengths that cross the 64-bit word and
// the 4096-code-point chunk boundaries.
#include "suites/levenshtein.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

namespace accel {
namespace {

struct Case {
  std::u32string a, b;
  double ratio;  // Levenshtein.ratio, bit for bit
};

TEST(Levenshtein, RatioEqualsPythonLevenshteinOnHandCheckedStrings) {
  const std::vector<Case> cases = {
      {U"kitten", U"sitting", 0.6153846153846154},  // indel distance 5: 2 substitutions
      {U"abc", U"axc", 0.6666666666666666},
      {U"return self.name", U"return self._name", 0.9696969696969697},
      {U"abcd", U"dcba", 0.25},
      {U"é中文x", U"中文éx", 0.75},                // code points, not bytes
      {U"\U0001F600a", U"a", 0.6666666666666666},  // one code point outside the BMP
      {U"ab", U"", 0.0},
      {U"", U"", 1.0},
      {U"x = a + b", U"b + a = x", 0.5555555555555556},  // difflib says 0.333...
      {U"private Thread currentThread;", U"private volatile Thread currentThread;",
       0.8656716417910447},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(c.a.begin(), c.a.end()));
    EXPECT_EQ(levenshtein_ratio(c.a, c.b), c.ratio);
    EXPECT_EQ(levenshtein_ratio(c.b, c.a), c.ratio);  // symmetric
  }
}

TEST(Levenshtein, SubstitutionCostsTwo) {
  EXPECT_EQ(indel_distance(U"abc", U"axc"), 2u);
  EXPECT_EQ(indel_distance(U"kitten", U"sitting"), 5u);
  EXPECT_EQ(indel_distance(U"", U"abc"), 3u);
  EXPECT_EQ(lcs_length(U"abcbdab", U"bdcaba"), 4u);  // CLRS's example
  EXPECT_EQ(lcs_length(U"aaaa", U"aa"), 2u);
}

// The textbook LCS, one row at a time.
size_t plain_lcs(const std::u32string& a, const std::u32string& b) {
  std::vector<size_t> prev(b.size() + 1, 0), cur(b.size() + 1, 0);
  for (size_t i = 1; i <= a.size(); ++i) {
    for (size_t j = 1; j <= b.size(); ++j)
      cur[j] = a[i - 1] == b[j - 1] ? prev[j - 1] + 1 : std::max(prev[j], cur[j - 1]);
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::u32string random_text(std::mt19937_64& rng, size_t n, const std::u32string& alphabet) {
  std::u32string s(n, U' ');
  for (char32_t& c : s) c = alphabet[rng() % alphabet.size()];
  return s;
}

TEST(Levenshtein, BitParallelLcsEqualsTheDynamicProgramme) {
  std::mt19937_64 rng(29);
  // Small alphabets make long common subsequences; mixed ASCII and wide code points exercise
  // both mask lookups.
  const std::vector<std::u32string> alphabets = {U"ab", U"acgt", U"abcdefghij (){};=",
                                                 U"aé中\U0001F600b"};
  const std::vector<size_t> lengths = {1, 2, 5, 63, 64, 65, 127, 128, 129, 300};
  for (size_t n : lengths) {
    for (size_t m : lengths) {
      const std::u32string& alpha = alphabets[(n + m) % alphabets.size()];
      const std::u32string a = random_text(rng, n, alpha), b = random_text(rng, m, alpha);
      ASSERT_EQ(lcs_length(a, b), plain_lcs(a, b)) << "n=" << n << " m=" << m;
    }
  }
}

TEST(Levenshtein, ChunksPastFourThousandCodePointsCarryCorrectly) {
  std::mt19937_64 rng(4096);
  for (size_t m : {4095u, 4096u, 4097u, 8192u, 9001u}) {
    const std::u32string a = random_text(rng, 700, U"abc\u00e9");
    const std::u32string b = random_text(rng, m, U"abc\u00e9");
    ASSERT_EQ(lcs_length(a, b), plain_lcs(a, b)) << "m=" << m;
    ASSERT_EQ(lcs_length(b, a), plain_lcs(a, b)) << "m=" << m;
  }
}

TEST(Levenshtein, CommonPrefixAndSuffixAreMatches) {
  const std::u32string core(5000, U'x');
  EXPECT_EQ(lcs_length(U"pre" + core + U"post", U"pre" + core + U"post"), 5007u);
  EXPECT_EQ(lcs_length(U"pre" + core, U"pre"), 3u);
}

}  // namespace
}  // namespace accel
