// Tests of kernel_variant(): the record names the build's vector width and integer-dot sequence,
// the blocking agrees with the shapes gemm() is documented to use, and the pool's spin is read from
// ACCELBENCH_SPIN_US the way the pool reads it (bad values fall back to the default).
#include "kernels/kernel_variant.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>
#include <string>

#include "kernels/decode_prefetch.h"
#include "kernels/simd.h"
#include "kernels/stream_memory.h"
#include "kernels/threading.h"

namespace accel {
namespace {

// Sets (or, with nullopt, unsets) ACCELBENCH_SPIN_US for one scope and restores it after.
class ScopedSpinEnv {
 public:
  explicit ScopedSpinEnv(const std::optional<std::string>& v) {
    if (const char* old = std::getenv(kName)) old_ = old;
    if (v)
      setenv(kName, v->c_str(), 1);
    else
      unsetenv(kName);
  }
  ~ScopedSpinEnv() {
    if (old_)
      setenv(kName, old_->c_str(), 1);
    else
      unsetenv(kName);
  }

 private:
  static constexpr const char* kName = "ACCELBENCH_SPIN_US";
  std::optional<std::string> old_;
};

TEST(KernelVariant, NamesTheVectorWidthAndIntegerDotOfThisBuild) {
  const KernelVariant v = kernel_variant();
  EXPECT_EQ(v.simd_width, simd::W);
#if defined(__AVX512F__)
  EXPECT_EQ(v.simd_width, 16);
#else
  EXPECT_EQ(v.simd_width, 8);
#endif
  EXPECT_TRUE(v.int8_dot == "vpdpbusd" || v.int8_dot == "vpmaddubsw+vpmaddwd") << v.int8_dot;
}

// The float micro-kernel is 6 rows by kNV vectors (4 of 16 with AVX-512, 2 of 8 with AVX2: 64 or
// 16 columns); its K block is a multiple of 256 so quantized blocks never straddle it.
TEST(KernelVariant, GemmBlockingIsTheDocumentedOne) {
  const KernelVariant v = kernel_variant();
  EXPECT_EQ(v.gemm_tile_rows, 6);
  EXPECT_EQ(v.gemm_tile_cols, simd::W == 16 ? 64 : 16);
  EXPECT_EQ(v.gemm_k_block % 256, 0u);
  EXPECT_EQ(v.gemm_row_block % size_t(v.gemm_tile_rows), 0u);
  EXPECT_GE(v.gemm_panels_per_chunk, 1u);
  EXPECT_EQ(v.intdot_rows_per_tile, simd::W == 16 ? 4 : 3);
}

// The prefetch distances recorded are the ones the decode kernels read, with how they were chosen.
TEST(KernelVariant, RecordsTheDecodePrefetchChoice) {
  const KernelVariant v = kernel_variant();
  EXPECT_EQ(v.kquant_prefetch_superblocks, decode_prefetch().kquant_superblocks);
  EXPECT_EQ(v.block_prefetch_blocks, decode_prefetch().blocks);
  EXPECT_EQ(v.decode_prefetch_source, decode_prefetch().source);
  EXPECT_FALSE(v.decode_prefetch_source.empty());
}

// The huge page mode recorded is the system's, as stream_memory.h reads it.
TEST(KernelVariant, RecordsTheHugePageMode) {
  const std::string mode = kernel_variant().transparent_hugepages;
  EXPECT_EQ(mode, transparent_hugepage_mode());
  EXPECT_TRUE(mode == "always" || mode == "madvise" || mode == "never" || mode == "unknown")
      << mode;
}

TEST(KernelVariant, PoolSpinFollowsTheEnvironment) {
  int unset = 0;
  {
    ScopedSpinEnv e(std::nullopt);
    unset = kernel_variant().pool_spin_us;
    EXPECT_EQ(unset, pool_spin_us());
  }
  EXPECT_GT(unset, 0);
  {
    ScopedSpinEnv e(std::string("1234"));
    EXPECT_EQ(kernel_variant().pool_spin_us, 1234);
  }
  {
    ScopedSpinEnv e(std::string("0"));
    EXPECT_EQ(kernel_variant().pool_spin_us, 0);
  }
  for (const char* bad : {"", "abc", "12x", "-5", "1000001"}) {
    ScopedSpinEnv e{std::string(bad)};
    EXPECT_EQ(kernel_variant().pool_spin_us, unset) << "ACCELBENCH_SPIN_US=\"" << bad << "\"";
  }
}

}  // namespace
}  // namespace accel
