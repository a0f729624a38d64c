// KVCache's capacity and layer checks fire in release builds (they were asserts, compiled out
// under NDEBUG): a batch past the staged capacity, a commit past it, a layer out of range and a
// default-constructed cache abort with their message instead of writing outside the storage.
#include <gtest/gtest.h>

#include <cstdint>
#include <numeric>
#include <vector>

#include "models/kv_cache.h"

namespace accel {
namespace {

class KVCacheCheckDeath : public ::testing::Test {
 protected:
  void SetUp() override { GTEST_FLAG_SET(death_test_style, "threadsafe"); }
  // One layer, one head of 32: staging 4 positions grows the capacity to 64 entries.
  KVCache staged_cache(KVDType t) {
    KVCache c(1, 1, 32, t);
    std::vector<int32_t> pos(4);
    std::iota(pos.begin(), pos.end(), 0);
    c.stage(pos.data(), pos.size());
    return c;
  }
};

TEST_F(KVCacheCheckDeath, AttendPastTheCapacityAborts) {
  for (KVDType t : {KVDType::F32, KVDType::Q8_0, KVDType::Kivi4}) {
    KVCache c = staged_cache(t);
    ASSERT_EQ(c.capacity(), 64u);
    const size_t n = 65;  // one more row than the storage holds
    std::vector<float> q(n * 32), kv(n * 32), out(n * 32);
    std::vector<int32_t> pos(n);
    std::iota(pos.begin(), pos.end(), 0);
    const AttentionShape s{1, 1, 32, 0.2f};
    EXPECT_DEATH(
        c.attend(0, s, q.data(), 32, pos.data(), kv.data(), kv.data(), 32, n, out.data(), 32),
        "a batch of 65 entries after 0: capacity 64")
        << kv_dtype_name(t);
  }
}

TEST_F(KVCacheCheckDeath, StorePastTheCapacityAborts) {
  KVCache c = staged_cache(KVDType::F16);
  std::vector<float> kv(100 * 32);
  EXPECT_DEATH(c.store(0, kv.data(), kv.data(), 32, 100), "a batch of 100 entries after 0");
}

TEST_F(KVCacheCheckDeath, CommitPastTheCapacityAborts) {
  KVCache c = staged_cache(KVDType::F32);
  c.commit(4);
  EXPECT_DEATH(c.commit(61), "commit of 61 entries after 4: capacity 64");
}

TEST_F(KVCacheCheckDeath, LayerOutOfRangeAborts) {
  KVCache c = staged_cache(KVDType::F32);
  std::vector<float> kv(32);
  EXPECT_DEATH(c.store(1, kv.data(), kv.data(), 32, 1), "layer 1 of 1");
}

TEST_F(KVCacheCheckDeath, ADefaultConstructedCacheCannotGrow) {
  KVCache c;
  EXPECT_DEATH(c.reserve(8), "has no storage");
}

}  // namespace
}  // namespace accel
