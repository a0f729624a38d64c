// Tests of kernels/stream_memory.h: alignment on both sides of the huge-page threshold, memory
// that is whole and writable, the std::vector allocator, and the huge page mode's parsing on
// hand-written sysfs lines. Whether the system grants huge pages is its choice and not tested.
#include "kernels/stream_memory.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>

namespace accel {
namespace {

uintptr_t address(const void* p) {
  return reinterpret_cast<uintptr_t>(p);
}

TEST(StreamMemory, SmallBuffersAreCacheLineAlignedAndLargeOnesHugePageAligned) {
  for (size_t bytes : {size_t(1), size_t(100), size_t(4096), kStreamHugePageBytes - 1}) {
    void* p = stream_alloc(bytes);
    EXPECT_EQ(address(p) % 64, 0u) << bytes;
    std::memset(p, 0xab, bytes);  // every byte asked for is there (ASan checks the bounds)
    stream_free(p);
  }
  for (size_t bytes : {kStreamHugePageBytes, kStreamHugePageBytes + 1, 3 * kStreamHugePageBytes}) {
    void* p = stream_alloc(bytes);
    EXPECT_EQ(address(p) % kStreamHugePageBytes, 0u) << bytes;
    std::memset(p, 0xcd, bytes);
    EXPECT_EQ(static_cast<unsigned char*>(p)[bytes - 1], 0xcd);
    stream_free(p);
  }
}

TEST(StreamMemory, ZeroBytesStillGiveAPointerToFree) {
  void* p = stream_alloc(0);
  EXPECT_NE(p, nullptr);
  stream_free(p);
}

TEST(StreamMemory, VectorsValueInitialiseAndKeepTheirContentsAcrossGrowth) {
  StreamVector<uint16_t> v(3 * kStreamHugePageBytes / 2 / sizeof(uint16_t));
  EXPECT_EQ(address(v.data()) % kStreamHugePageBytes, 0u);
  EXPECT_EQ(v.front(), 0);
  EXPECT_EQ(v.back(), 0);
  v.back() = 7;
  const size_t n = v.size();
  v.resize(2 * n, 9);
  EXPECT_EQ(v[n - 1], 7);
  EXPECT_EQ(v.back(), 9);
}

TEST(StreamMemory, OversizedArraysAreRefused) {
  StreamAllocator<uint64_t> a;
  EXPECT_THROW((void)a.allocate(SIZE_MAX / 4), std::bad_array_new_length);
}

TEST(StreamMemory, HugePageModeIsTheBracketedWord) {
  EXPECT_EQ(parse_hugepage_mode("always [madvise] never"), "madvise");
  EXPECT_EQ(parse_hugepage_mode("[always] madvise never"), "always");
  EXPECT_EQ(parse_hugepage_mode("always madvise [never]"), "never");
  EXPECT_EQ(parse_hugepage_mode("always madvise never"), "unknown");
  EXPECT_EQ(parse_hugepage_mode("[]"), "unknown");
  EXPECT_EQ(parse_hugepage_mode(""), "unknown");
}

}  // namespace
}  // namespace accel
