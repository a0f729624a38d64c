// difflib.SequenceMatcher port and fuzz.ratio. Expected ratios and matching blocks were computed
// with CPython 3.11's difflib at development time and pasted here as constants (Python is not
// used when building or testing); the comments say what each case exercises. A plain
// longest-common-block search (no index, no autojunk) checks the port on generated strings.
#include "suites/sequence_matcher.h"

#include <gtest/gtest.h>

#include <random>
#include <tuple>

#include "suites/fuzz_ratio.h"

namespace accel {
namespace {

struct Case {
  std::u32string a, b;
  double ratio;  // difflib.SequenceMatcher(None, a, b).ratio()
  int fuzz;      // int(round(100 * ratio)) with fuzzywuzzy's empty/equal rules
};

TEST(SequenceMatcher, RatiosEqualDifflibOnHandCheckedStrings) {
  const std::vector<Case> cases = {
      {U"abcd", U"bcde", 0.75, 75},
      {U"private Thread currentThread;", U"private volatile Thread currentThread;",
       0.8656716417910447, 87},
      {U" abcd", U"abcd abcd", 0.7142857142857143, 71},  // difflib's own docstring example
      {U"qabxcd", U"abycdf", 0.6666666666666666, 67},
      {U"return self.name", U"return self._name", 0.9696969696969697, 97},
      {U"xxxxxxxxxx", U"yyyyyyyyyy", 0.0, 0},
      {U"for i in range(10):", U"for (int i = 0; i < 10; ++i) {", 0.4489795918367347, 45},
      {U"é中文x", U"中文éx", 0.75, 75},  // code points, not bytes
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(c.a.begin(), c.a.end()).substr(0, 20));
    EXPECT_EQ(SequenceMatcher(c.a, c.b).ratio(), c.ratio);  // bit for bit
    EXPECT_EQ(fuzz_ratio(c.a, c.b), c.fuzz);
  }
}

TEST(SequenceMatcher, MatchingBlocksEqualDifflib) {
  using T = std::tuple<size_t, size_t, size_t>;
  const auto blocks = [](std::u32string_view a, std::u32string_view b) {
    std::vector<T> out;
    for (const MatchBlock& m : SequenceMatcher(a, b).matching_blocks())
      out.emplace_back(m.a, m.b, m.size);
    return out;
  };
  EXPECT_EQ(blocks(U"qabxcd", U"abycdf"), (std::vector<T>{{1, 0, 2}, {4, 3, 2}, {6, 6, 0}}));
  EXPECT_EQ(blocks(U" abcd", U"abcd abcd"), (std::vector<T>{{0, 4, 5}, {5, 9, 0}}));
  EXPECT_EQ(blocks(U"private Thread currentThread;", U"private volatile Thread currentThread;"),
            (std::vector<T>{{0, 0, 6}, {6, 15, 23}, {29, 38, 0}}));
  EXPECT_EQ(blocks(U"", U""), (std::vector<T>{{0, 0, 0}}));
  // find_longest_match's docstring: the longest block, earliest in a.
  const MatchBlock m = SequenceMatcher(U" abcd", U"abcd abcd").find_longest_match(0, 5, 0, 9);
  EXPECT_EQ(std::tie(m.a, m.b, m.size), std::make_tuple(size_t(0), size_t(4), size_t(5)));
}

TEST(SequenceMatcher, AutojunkDropsPopularElementsOfLongB) {
  // len(b) = 270 >= 200: ntest = 270 // 100 + 1 = 3, and 'a', 'b', 'c' each occur more often, so
  // all are popular and nothing can start a match: ratio 0 (difflib: 0.0). Without autojunk
  // difflib gives 0.4897959183673469.
  std::u32string a, b;
  for (int i = 0; i < 60; ++i) a += U"ab";
  a += std::u32string(100, U'c');
  b.assign(150, U'c');
  for (int i = 0; i < 60; ++i) b += U"ab";
  const SequenceMatcher sm(a, b);
  EXPECT_EQ(sm.popular(), (std::vector<char32_t>{U'a', U'b', U'c'}));
  EXPECT_EQ(sm.ratio(), 0.0);
  EXPECT_EQ(SequenceMatcher(a, b, /*autojunk=*/false).ratio(), 0.4897959183673469);
  // The heuristic starts at exactly 200 elements.
  EXPECT_TRUE(SequenceMatcher(U"aaaa", std::u32string(199, U'a')).popular().empty());
  EXPECT_EQ(SequenceMatcher(U"aaaa", std::u32string(200, U'a')).popular(),
            std::vector<char32_t>{U'a'});
}

TEST(SequenceMatcher, PopularElementsAreNotJunkSoMatchesExtendOverThem) {
  // b = "q" + 250 x "e": 'e' is popular, 'q' is not. The match found at 'q' is extended over the
  // equal (popular, not junk) 'e's: difflib's blocks (0, 0, 4), ratio 8/255.
  const std::u32string b = U"q" + std::u32string(250, U'e');
  const auto blocks = SequenceMatcher(U"qeee", b).matching_blocks();
  ASSERT_EQ(blocks.size(), 2u);
  EXPECT_EQ(blocks[0].size, 4u);
  EXPECT_EQ(SequenceMatcher(U"qeee", b).ratio(), 0.03137254901960784);
  // Extension backwards: "eeeq" against 250 x "e" + "q" matches at (0, 247, 4).
  const std::u32string b2 = std::u32string(250, U'e') + U"q";
  const auto back = SequenceMatcher(U"eeeq", b2).matching_blocks();
  EXPECT_EQ(std::tie(back[0].a, back[0].b, back[0].size),
            std::make_tuple(size_t(0), size_t(247), size_t(4)));
  // Near-identical 215-character strings score only 0.0744... because 26 of their characters
  // are popular (difflib: 0.07441860465116279; fuzz 7).
  std::u32string x, y;
  for (int i = 0; i < 5; ++i) {
    x += U"The quick brown fox jumps over the lazy dog";
    y += U"The quick brown cat jumps over the lazy dog";
  }
  EXPECT_EQ(SequenceMatcher(x, y).ratio(), 0.07441860465116279);
  EXPECT_EQ(fuzz_ratio(x, y), 7);
}

TEST(FuzzRatio, EqualEmptyAndRoundHalfToEven) {
  EXPECT_EQ(fuzz_ratio(U"", U""), 100);  // equality is checked before emptiness
  EXPECT_EQ(fuzz_ratio(U"a", U""), 0);
  EXPECT_EQ(fuzz_ratio(U"", U"a"), 0);
  EXPECT_EQ(fuzz_ratio(U"same", U"same"), 100);
  // 100 * ratio exactly x.5: Python's round goes to the even neighbour.
  EXPECT_EQ(fuzz_ratio(U"abcdefgh", U"aXXXXXXX"), 12);  // 12.5
  EXPECT_EQ(fuzz_ratio(U"abcdefgh", U"abcXXXXX"), 38);  // 37.5
  EXPECT_EQ(fuzz_ratio(U"abczzzzz", U"zzzzzabc"), 62);  // 62.5
  EXPECT_EQ(py_round(2.5), 2.0);
  EXPECT_EQ(py_round(3.5), 4.0);
  EXPECT_EQ(py_round(-0.5), -0.0);
  EXPECT_EQ(py_round(0.49999999999999994), 0.0);
}

// The plain definition: recursively take a longest common block (earliest in a, then in b) of
// each region, with no index and no autojunk. Equal to difflib whenever b has fewer than 200
// elements (no element can be popular).
size_t plain_matches(std::u32string_view a, std::u32string_view b) {
  size_t best = 0, bi = 0, bj = 0;
  for (size_t i = 0; i < a.size(); ++i)
    for (size_t j = 0; j < b.size(); ++j) {
      size_t k = 0;
      while (i + k < a.size() && j + k < b.size() && a[i + k] == b[j + k]) ++k;
      if (k > best) {
        best = k;
        bi = i;
        bj = j;
      }
    }
  if (best == 0) return 0;
  return best + plain_matches(a.substr(0, bi), b.substr(0, bj)) +
         plain_matches(a.substr(bi + best), b.substr(bj + best));
}

TEST(SequenceMatcher, AgreesWithAPlainLongestBlockRecursionOnGeneratedStrings) {
  std::mt19937_64 rng(7);
  const std::u32string alphabet = U"ab c(x)=é中";
  for (int t = 0; t < 400; ++t) {
    std::u32string a, b;
    const size_t la = rng() % 40, lb = rng() % 40;
    const size_t k = 1 + rng() % alphabet.size();  // small alphabets make many ties
    for (size_t i = 0; i < la; ++i) a += alphabet[rng() % k];
    for (size_t i = 0; i < lb; ++i) b += alphabet[rng() % k];
    const size_t m = plain_matches(a, b);
    const double want = a.empty() && b.empty() ? 1.0 : 2.0 * double(m) / double(la + lb);
    ASSERT_EQ(SequenceMatcher(a, b).ratio(), want) << "case " << t;
  }
}

}  // namespace
}  // namespace accel
