// Tests of kernels/q8_0_panel.h through accel::gemm: the q8_0 integer-dot path against the
// independent scalar model of tests/support/kquant_dot_reference.h (ggml's blocks read by byte
// offset, activations through quantize_activations_q8_0), bit for bit, on random and edge blocks.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "kernels/dtype.h"
#include "kernels/gemm.h"
#include "kernels/threading.h"
#include "tests/support/kquant_dot_reference.h"
#include "tests/support/test_support.h"

namespace accel {
namespace {

constexpr size_t kBlock = 34;  // ggml's block_q8_0: fp16 d, then 32 int8 codes

void set_half(uint8_t* p, uint16_t h) {
  p[0] = uint8_t(h & 0xFF);
  p[1] = uint8_t(h >> 8);
}

// Random codes (every int8, -128 included) and finite random scales.
std::vector<uint8_t> random_blocks(size_t n_blocks, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<uint8_t> raw(n_blocks * kBlock);
  for (auto& x : raw) x = uint8_t(rng());
  for (size_t i = 0; i < n_blocks; ++i) {
    uint16_t h;
    do h = uint16_t(rng());
    while ((h & 0x7C00) == 0x7C00);  // inf/NaN scales are not finite weights: excluded
    set_half(raw.data() + i * kBlock, h);
  }
  return raw;
}

// One block per kind: every code -128 (the code whose magnitude only fits as u8) at d = 65504,
// every code +127 at d = -65504, a subnormal d (2^-24) with alternating extremes, d = 0.
void put_edges(std::vector<uint8_t>& raw) {
  uint8_t* b = raw.data();
  set_half(b, 0x7BFF);
  std::memset(b + 2, 0x80, 32);
  b += kBlock;
  set_half(b, 0xFBFF);
  std::memset(b + 2, 0x7F, 32);
  b += kBlock;
  set_half(b, 0x0001);
  for (int j = 0; j < 32; ++j) b[2 + j] = j % 2 ? 0x80 : 0x7F;
  b += kBlock;
  set_half(b, 0x0000);
}

// M = 1 (decode's whole-panel tile), 3 and 5 (row tiles of 1 to 4 rows), 37 (several tiles and
// items, on 1 and 2 threads), with a bias; N = 70 spans two AVX-512 panels with padding; K = 256.
// Rows 0..3 start with the edge blocks; each row's first activation block is zero (d = 0) and its
// second holds an element of magnitude amax, so codes of +-127 meet codes of -128.
TEST(Q8_0Panel, GemmEqualsTheIntegerDotModelBitForBit) {
  const size_t K = 256, N = 70, nb = K / 32;
  std::vector<uint8_t> raw = random_blocks(N * nb, 2);
  for (size_t r = 0; r < 4; ++r) {
    std::vector<uint8_t> edges(4 * kBlock);
    put_edges(edges);
    std::memcpy(raw.data() + r * nb * kBlock + (r % 2) * kBlock, edges.data(), edges.size());
  }
  const PackedWeight pw = PackedWeight::pack(DType::Q8_0, raw.data(), N, K);
  const std::vector<float> bias = test::random_normal(N, 4);
  for (int threads : {1, 2}) {
    set_num_threads(threads);
    for (size_t M : {size_t(1), size_t(3), size_t(5), size_t(37)}) {
      std::vector<float> x = test::random_normal(M * K, 3 + M);
      for (size_t m = 0; m < M; ++m) {
        for (size_t k = 0; k < 32; ++k) x[m * K + k] = 0;
        x[m * K + 40] = -8.f;
      }
      std::vector<float> y(M * N);
      gemm(x.data(), M, K, pw, y.data(), N, bias.data());
      for (size_t m = 0; m < M; ++m)
        for (size_t n = 0; n < N; ++n) {
          const float want = test::kquant_dot_reference(DType::Q8_0, raw.data() + n * nb * kBlock,
                                                        x.data() + m * K, K, &bias[n])
                                 .model;
          const float got = y[m * N + n];
          if (std::isnan(want)) {  // inf - inf at the extreme scales only needs to stay NaN
            ASSERT_TRUE(std::isnan(got)) << "M=" << M << " (" << m << ", " << n << ")";
            continue;
          }
          ASSERT_EQ(std::bit_cast<uint32_t>(got), std::bit_cast<uint32_t>(want))
              << "threads " << threads << " M=" << M << " (" << m << ", " << n << "): got " << got
              << ", model " << want;
        }
    }
  }
  set_num_threads(default_num_threads());
}

}  // namespace
}  // namespace accel
