// RULER's random draws against CPython 3.11 and numpy 1.24 on the same seeds (the expected values
// were printed by those interpreters: random.Random(seed).getrandbits/random/randint/shuffle/
// sample/choices, uuid.UUID(int=getrandbits(128), version=4), np.random.seed + randint), and the
// 40 needle depths of niah.py.
#include "suites/ruler_random.h"

#include <gtest/gtest.h>

#include "suites/ruler_niah.h"

namespace accel::ruler {
namespace {

TEST(RulerRandom, MatchesCPythonOnEveryDrawTheGeneratorsUse) {
  PyRandom a(42);
  EXPECT_EQ(a.getrandbits(32), 2746317213u);
  EXPECT_EQ(a.getrandbits(32), 478163327u);
  EXPECT_EQ(a.getrandbits(32), 107420369u);
  PyRandom b(0);
  EXPECT_EQ(b.random(), 0.8444218515250481);
  EXPECT_EQ(b.random(), 0.7579544029403025);
  PyRandom big((uint64_t(1) << 40) + 5);  // a seed of two 32-bit words
  EXPECT_EQ(big.randint(1000000, 9999999), 9462097);
  EXPECT_EQ(big.randint(1000000, 9999999), 9672503);
  EXPECT_EQ(big.randint(1000000, 9999999), 5506434);
  PyRandom c(42);
  for (int64_t want : {2867825, 1419610, 5614226, 5108603})
    EXPECT_EQ(c.randint(1000000, 9999999), want);
  PyRandom d(42);
  std::vector<int> x = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
  d.shuffle(x);
  EXPECT_EQ(x, (std::vector<int>{7, 3, 2, 8, 5, 6, 9, 4, 0, 1}));
  // sample(): the set branch for a large population, the pool branch for a small one.
  PyRandom e(7);
  EXPECT_EQ(e.sample_indices(40, 4), (std::vector<size_t>{20, 9, 25, 3}));
  EXPECT_EQ(e.sample_indices(100000, 8),
            (std::vector<size_t>{9494, 70239, 12337, 47931, 76387, 7602, 66510, 28140}));
  EXPECT_EQ(e.sample_indices(30, 7), (std::vector<size_t>{1, 2, 13, 27, 28, 7, 25}));
  EXPECT_THROW(e.sample_indices(3, 4), std::invalid_argument);
  PyRandom f(7);
  std::string letters;
  for (size_t i : f.choices_indices(26, 5)) letters += char('A' + i);
  EXPECT_EQ(letters, "IDQBN");
  EXPECT_EQ(PyRandom(3).uuid4(), "21636369-8b52-4b4a-97b7-50923ceb3ffd");
  EXPECT_EQ(PyRandom(3).getrandbits(40), 649562111997u);
}

TEST(RulerRandom, MatchesNumpyLegacyRandint) {
  NumpyLegacy a(42);
  for (int64_t want : {25795, 10860, 86820, 64886}) EXPECT_EQ(a.randint(10000, 99999), want);
  EXPECT_EQ(NumpyLegacy(0).randint(10000, 99999), 78268);
}

TEST(RulerRandom, NeedleDepthsAreNumpysRoundedLinspace) {
  const std::vector<int> want = {0,  3,  5,  8,  10, 13, 15, 18, 21, 23, 26, 28, 31, 33,
                                 36, 38, 41, 44, 46, 49, 51, 54, 56, 59, 62, 64, 67, 69,
                                 72, 74, 77, 79, 82, 85, 87, 90, 92, 95, 97, 100};
  EXPECT_EQ(niah_depths(), want);
}

}  // namespace
}  // namespace accel::ruler
