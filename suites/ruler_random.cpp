// CPython's and numpy's MT19937-based draws (ruler_random.h), transcribed from
// Modules/_randommodule.c and Lib/random.py (CPython 3.11) and numpy's
// random/src/mt19937 + distributions.c (random_bounded_uint64_fill, masked path).
#include "suites/ruler_random.h"

#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <unordered_set>

namespace accel::ruler {

void Mt19937::init_genrand(uint32_t s) {
  mt_[0] = s;
  for (uint32_t i = 1; i < 624; ++i) mt_[i] = 1812433253u * (mt_[i - 1] ^ (mt_[i - 1] >> 30)) + i;
  mti_ = 624;
}

void Mt19937::init_by_array(const std::vector<uint32_t>& key) {
  init_genrand(19650218u);
  size_t i = 1, j = 0;
  for (size_t k = std::max<size_t>(624, key.size()); k; --k) {
    mt_[i] = (mt_[i] ^ ((mt_[i - 1] ^ (mt_[i - 1] >> 30)) * 1664525u)) + key[j] + uint32_t(j);
    ++i, ++j;
    if (i >= 624) mt_[0] = mt_[623], i = 1;
    if (j >= key.size()) j = 0;
  }
  for (size_t k = 623; k; --k) {
    mt_[i] = (mt_[i] ^ ((mt_[i - 1] ^ (mt_[i - 1] >> 30)) * 1566083941u)) - uint32_t(i);
    ++i;
    if (i >= 624) mt_[0] = mt_[623], i = 1;
  }
  mt_[0] = 0x80000000u;
}

uint32_t Mt19937::next() {
  constexpr uint32_t kUpper = 0x80000000u, kLower = 0x7fffffffu, kMatrix = 0x9908b0dfu;
  if (mti_ >= 624) {
    if (mti_ == 625) init_genrand(5489u);
    int k = 0;
    for (; k < 624 - 397; ++k) {
      const uint32_t y = (mt_[k] & kUpper) | (mt_[k + 1] & kLower);
      mt_[k] = mt_[k + 397] ^ (y >> 1) ^ ((y & 1u) ? kMatrix : 0u);
    }
    for (; k < 623; ++k) {
      const uint32_t y = (mt_[k] & kUpper) | (mt_[k + 1] & kLower);
      mt_[k] = mt_[k + (397 - 624)] ^ (y >> 1) ^ ((y & 1u) ? kMatrix : 0u);
    }
    const uint32_t y = (mt_[623] & kUpper) | (mt_[0] & kLower);
    mt_[623] = mt_[396] ^ (y >> 1) ^ ((y & 1u) ? kMatrix : 0u);
    mti_ = 0;
  }
  uint32_t y = mt_[size_t(mti_++)];
  y ^= (y >> 11);
  y ^= (y << 7) & 0x9d2c5680u;
  y ^= (y << 15) & 0xefc60000u;
  y ^= (y >> 18);
  return y;
}

PyRandom::PyRandom(uint64_t seed) {
  // random_seed(): the absolute value's 32-bit words, least significant first; 0 gives [0].
  std::vector<uint32_t> key = {uint32_t(seed)};
  if (seed >> 32) key.push_back(uint32_t(seed >> 32));
  mt_.init_by_array(key);
}

double PyRandom::random() {
  const uint32_t a = mt_.next() >> 5, b = mt_.next() >> 6;
  return (a * 67108864.0 + b) * (1.0 / 9007199254740992.0);
}

uint64_t PyRandom::getrandbits(int k) {
  if (k < 0 || k > 64) throw std::logic_error("getrandbits: k out of range");
  if (k == 0) return 0;
  if (k <= 32) return mt_.next() >> (32 - k);
  const uint64_t lo = mt_.next();
  const uint64_t hi = mt_.next() >> (64 - k);
  return lo | (hi << 32);
}

std::array<uint32_t, 4> PyRandom::getrandbits128() {
  std::array<uint32_t, 4> w{};
  for (auto& x : w) x = mt_.next();
  return w;
}

uint64_t PyRandom::randbelow(uint64_t n) {
  if (n == 0) throw std::logic_error("randbelow(0)");
  int k = 0;
  for (uint64_t v = n; v; v >>= 1) ++k;
  uint64_t r = getrandbits(k);
  while (r >= n) r = getrandbits(k);
  return r;
}

int64_t PyRandom::randint(int64_t a, int64_t b) {
  if (b < a) throw std::logic_error("randint: empty range");
  return a + int64_t(randbelow(uint64_t(b - a) + 1));
}

std::vector<size_t> PyRandom::choices_indices(size_t n, size_t k) {
  std::vector<size_t> out(k);
  const double nf = double(n);
  for (auto& x : out) x = size_t(std::floor(random() * nf));
  return out;
}

std::vector<size_t> PyRandom::sample_indices(size_t n, size_t k) {
  if (k > n) throw std::invalid_argument("Sample larger than population or is negative");
  std::vector<size_t> result(k);
  size_t setsize = 21;
  if (k > 5) setsize += size_t(std::pow(4.0, std::ceil(std::log(double(k * 3)) / std::log(4.0))));
  if (n <= setsize) {
    std::vector<size_t> pool(n);
    for (size_t i = 0; i < n; ++i) pool[i] = i;
    for (size_t i = 0; i < k; ++i) {
      const size_t j = size_t(randbelow(n - i));
      result[i] = pool[j];
      pool[j] = pool[n - i - 1];
    }
  } else {
    std::unordered_set<size_t> selected;
    for (size_t i = 0; i < k; ++i) {
      size_t j = size_t(randbelow(n));
      while (selected.count(j)) j = size_t(randbelow(n));
      selected.insert(j);
      result[i] = j;
    }
  }
  return result;
}

std::string PyRandom::uuid4() {
  std::array<uint32_t, 4> w = getrandbits128();  // w[0] holds bits 0..31
  // int &= ~(0xc000 << 48); int |= 0x8000 << 48  (bits 62..63 of the 128: word 1)
  w[1] = (w[1] & ~(0xc000u << 16)) | (0x8000u << 16);
  // int &= ~(0xf000 << 64); int |= 4 << 76  (bits 76..79: word 2)
  w[2] = (w[2] & ~(0xf000u)) | (4u << 12);
  char hex[33];
  std::snprintf(hex, sizeof hex, "%08x%08x%08x%08x", w[3], w[2], w[1], w[0]);
  const std::string h(hex, 32);
  return h.substr(0, 8) + "-" + h.substr(8, 4) + "-" + h.substr(12, 4) + "-" + h.substr(16, 4) +
         "-" + h.substr(20, 12);
}

int64_t NumpyLegacy::randint(int64_t low, int64_t high) {
  if (high <= low) throw std::logic_error("randint: empty range");
  const uint64_t rng = uint64_t(high - 1 - low);
  if (rng == 0) return low;
  if (rng > 0xffffffffull) throw std::logic_error("randint: only 32-bit ranges are used");
  uint64_t mask = rng;
  for (int s = 1; s <= 32; s <<= 1) mask |= mask >> s;
  uint64_t v;
  while ((v = (mt_.next() & mask)) > rng) {
  }
  return low + int64_t(v);
}

}  // namespace accel::ruler
