// The random draws RULER's generators make, reproduced bit for bit: CPython's `random.Random`
// (MT19937 seeded by init_by_array from an int; getrandbits, _randbelow, randint, choice, choices,
// shuffle, sample and random() as in CPython 3.11's random.py/_randommodule.c) and numpy's legacy
// `np.random.seed(int)` + `np.random.randint(low, high)` (init_genrand, masked rejection). RULER
// samples are a fixed function of these streams, so matching them is what makes a seed mean the
// same data here and in RULER's scripts.
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace accel::ruler {

// MT19937, the generator both libraries use.
class Mt19937 {
 public:
  void init_genrand(uint32_t s);
  void init_by_array(const std::vector<uint32_t>& key);
  uint32_t next();

 private:
  std::array<uint32_t, 624> mt_{};
  int mti_ = 625;
};

// CPython's random.Random.
class PyRandom {
 public:
  explicit PyRandom(uint64_t seed);          // random.seed(seed) / random.Random(seed), seed >= 0
  double random();                           // 53-bit float in [0, 1)
  uint64_t getrandbits(int k);               // 0 <= k <= 64
  std::array<uint32_t, 4> getrandbits128();  // little-endian 32-bit words
  uint64_t randbelow(uint64_t n);            // _randbelow_with_getrandbits, n >= 1
  int64_t randint(int64_t a, int64_t b);     // inclusive
  size_t choice_index(size_t n) { return size_t(randbelow(n)); }
  // random.choices(population, k=k) without weights: indices floor(random() * n).
  std::vector<size_t> choices_indices(size_t n, size_t k);
  // random.sample(population, k): the indices into the population it returns, in order.
  std::vector<size_t> sample_indices(size_t n, size_t k);
  template <class T>
  void shuffle(std::vector<T>& x) {
    for (size_t i = x.size(); i-- > 1;) std::swap(x[i], x[size_t(randbelow(i + 1))]);
  }
  // str(uuid.UUID(int=getrandbits(128), version=4)).
  std::string uuid4();

 private:
  Mt19937 mt_;
};

// numpy's legacy global RandomState after np.random.seed(seed), seed < 2^32.
class NumpyLegacy {
 public:
  explicit NumpyLegacy(uint32_t seed) { mt_.init_genrand(seed); }
  int64_t randint(int64_t low, int64_t high);  // [low, high), high > low

 private:
  Mt19937 mt_;
};

}  // namespace accel::ruler
