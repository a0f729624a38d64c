// Tests of the thread pool (kernels/threading.h): every item runs exactly once per call, also over
// thousands of back-to-back calls (a late pool thread must never run an item of the wrong call);
// slots are in range and never shared by concurrent items; nesting, the work threshold and a busy
// pool run inline on the caller; exceptions reach the caller; and GEMM results are bit-identical
// across 1-4 threads for the splits the pool makes (by panels, by row blocks, both).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "kernels/dtype.h"
#include "kernels/gemm.h"
#include "kernels/quant.h"
#include "kernels/threading.h"
#include "tests/support/test_support.h"

namespace accel {
namespace {

// Restores the default thread count when a test changes it, and turns the pool's back-off off for
// the test's duration: on a busy machine a back-off would run the regions inline, and these tests
// are about the pool.
struct ThreadGuard {
  ThreadGuard() { set_parallel_backoff(false); }
  ~ThreadGuard() {
    set_num_threads(default_num_threads());
    set_parallel_backoff(true);
  }
};

std::vector<int> run_counting(size_t n) {
  std::unique_ptr<std::atomic<int>[]> count(new std::atomic<int>[n]());
  parallel_for(n, [&](size_t i, int) { count[i].fetch_add(1); });
  std::vector<int> out(n);
  for (size_t i = 0; i < n; ++i) out[i] = count[i].load();
  return out;
}

TEST(ParallelFor, RunsEveryItemExactlyOnceForAnyThreadAndItemCount) {
  ThreadGuard guard;
  for (int threads : {1, 2, 3, 8}) {
    set_num_threads(threads);
    for (size_t n : {0, 1, 2, 3, 7, 64, 1000}) {
      const std::vector<int> count = run_counting(n);
      for (size_t i = 0; i < n; ++i)
        ASSERT_EQ(count[i], 1) << "item " << i << " of " << n << ", threads " << threads;
    }
  }
}

// Back-to-back small calls are where a pool thread that wakes late could pick up a stale job
// description; each call has its own counters, so an item run by the wrong call shows up as a
// count of 0 or 2 somewhere.
TEST(ParallelFor, BackToBackCallsEachRunTheirOwnItemsExactlyOnce) {
  ThreadGuard guard;
  set_num_threads(2);
  for (int call = 0; call < 20000; ++call) {
    const size_t n = 2 + size_t(call % 3);
    int count[4] = {0, 0, 0, 0};
    std::atomic<int> ran{0};
    parallel_for(n, [&](size_t i, int) {
      ++count[i];  // distinct items never share a counter
      ran.fetch_add(1);
    });
    ASSERT_EQ(ran.load(), int(n)) << "call " << call;
    for (size_t i = 0; i < n; ++i) ASSERT_EQ(count[i], 1) << "call " << call << " item " << i;
  }
}

// The pool really uses its threads: the caller's item waits until the other item has run, which
// only another thread can do. The wait gives up after 10 s: on a heavily loaded machine the
// scheduler can starve the pool thread that long, and the test then reports a skip, not a pass.
TEST(ParallelFor, TwoItemsRunOnTwoThreadsWhenOneItemWaitsForTheOther) {
  ThreadGuard guard;
  set_num_threads(2);
  std::atomic<int> finished{0};
  std::atomic<bool> gave_up{false};
  std::thread::id ran_on[2];
  parallel_for(2, [&](size_t i, int) {
    ran_on[i] = std::this_thread::get_id();
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    finished.fetch_add(1);
    while (finished.load() < 2) {
      if (std::chrono::steady_clock::now() > give_up) {
        gave_up.store(true);
        break;
      }
      std::this_thread::yield();
    }
  });
  if (gave_up.load()) GTEST_SKIP() << "the pool thread did not run within 10 s (machine too busy)";
  EXPECT_NE(ran_on[0], ran_on[1]);
}

// Runs regions that lose to one thread (with 2 threads), at most 20: item 0 waits until item 1
// has started; item 1, when a pool thread has it, then sleeps 50 ms as if descheduled, so the
// caller waits far longer than its own work. If the threads take the items the other way round
// nothing is lost: try again. Stops at the first back-off, or with back-off off at the first loss.
struct LostRegions {
  bool lost = false;        // a pool thread held up the caller
  bool backed_off = false;  // the pool counted a back-off
};
LostRegions lose_a_region_to_one_thread() {
  const uint64_t before = parallel_backoffs();
  LostRegions out;
  for (int attempt = 0; attempt < 20; ++attempt) {
    std::atomic<bool> started{false}, slept{false};
    parallel_for(2, [&](size_t i, int slot) {
      if (i == 0) {
        const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
        while (!started.load() && std::chrono::steady_clock::now() < give_up)
          std::this_thread::yield();
        return;
      }
      started.store(true);
      if (slot != 0) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        slept.store(true);
      }
    });
    out.lost = out.lost || slept.load();
    out.backed_off = parallel_backoffs() > before;
    if (out.backed_off || (out.lost && !parallel_backoff_enabled())) break;
  }
  return out;
}

// Back-off: with it on, a region in which the caller waited far longer than the whole region
// would have taken alone makes the next regions run inline, and parallel_backoffs() counts it.
TEST(ParallelFor, RegionThatLosesToOneThreadMakesThePoolBackOff) {
  ThreadGuard guard;
  set_num_threads(2);
  set_parallel_backoff(true);
  ASSERT_TRUE(lose_a_region_to_one_thread().backed_off);
  const std::thread::id me = std::this_thread::get_id();
  bool inline_run = true;
  parallel_for(8,
               [&](size_t, int) { inline_run = inline_run && std::this_thread::get_id() == me; });
  EXPECT_TRUE(inline_run) << "the region right after a back-off must run on the caller";
}

TEST(ParallelFor, SlotsAreInRangeAndNeverSharedByConcurrentItems) {
  ThreadGuard guard;
  set_num_threads(3);
  const int slots = parallel_slots();
  ASSERT_EQ(slots, 3);
  std::vector<std::atomic<bool>> in_use(static_cast<size_t>(slots));
  std::atomic<int> bad_slot{0}, shared{0};
  parallel_for(3000, [&](size_t, int slot) {
    if (slot < 0 || slot >= slots) {
      bad_slot.fetch_add(1);
      return;
    }
    if (in_use[size_t(slot)].exchange(true)) shared.fetch_add(1);
    for (int spin = 0; spin < 200; ++spin) __asm__ __volatile__("");  // hold the slot a while
    in_use[size_t(slot)].store(false);
  });
  EXPECT_EQ(bad_slot.load(), 0);
  EXPECT_EQ(shared.load(), 0);
}

TEST(ParallelFor, NestedCallRunsInlineOnTheThreadThatMadeIt) {
  ThreadGuard guard;
  set_num_threads(2);
  std::atomic<int> inner_items{0}, foreign{0};
  parallel_for(8, [&](size_t, int) {
    const std::thread::id me = std::this_thread::get_id();
    parallel_for(5, [&](size_t, int slot) {
      if (std::this_thread::get_id() != me || slot != 0) foreign.fetch_add(1);
      inner_items.fetch_add(1);
    });
  });
  EXPECT_EQ(inner_items.load(), 8 * 5);
  EXPECT_EQ(foreign.load(), 0);
}

TEST(ParallelFor, WorkBelowThresholdRunsInlineInAscendingOrder) {
  ThreadGuard guard;
  set_num_threads(2);
  const std::thread::id me = std::this_thread::get_id();
  std::vector<size_t> order;
  bool all_on_caller = true;
  parallel_for(50, min_parallel_work() / 2, [&](size_t i, int) {
    all_on_caller = all_on_caller && std::this_thread::get_id() == me;
    order.push_back(i);  // safe only because the region must be inline
  });
  EXPECT_TRUE(all_on_caller);
  ASSERT_EQ(order.size(), 50u);
  for (size_t i = 0; i < order.size(); ++i) EXPECT_EQ(order[i], i);
}

TEST(ParallelFor, ExceptionFromAnItemReachesTheCallerAndThePoolStaysUsable) {
  ThreadGuard guard;
  set_num_threads(2);
  EXPECT_THROW(parallel_for(100,
                            [&](size_t i, int) {
                              if (i == 37) throw std::runtime_error("item 37");
                            }),
               std::runtime_error);
  const std::vector<int> count = run_counting(100);
  for (size_t i = 0; i < count.size(); ++i) ASSERT_EQ(count[i], 1) << "item " << i;
}

// Two threads of the process calling at once: one gets the pool, the other runs inline; both
// finish all their items.
TEST(ParallelFor, ConcurrentCallersFromTwoThreadsBothComplete) {
  ThreadGuard guard;
  set_num_threads(2);
  std::atomic<int> a{0}, b{0};
  auto many = [](std::atomic<int>& c) {
    for (int call = 0; call < 2000; ++call) parallel_for(4, [&](size_t, int) { c.fetch_add(1); });
  };
  std::thread other([&] { many(b); });
  many(a);
  other.join();
  EXPECT_EQ(a.load(), 2000 * 4);
  EXPECT_EQ(b.load(), 2000 * 4);
}

TEST(ParallelRanges, CoverTheRangeExactlyOnceInContiguousPieces) {
  ThreadGuard guard;
  for (int threads : {1, 2, 3}) {
    set_num_threads(threads);
    for (size_t n : {1, 2, 5, 11, 1000}) {
      std::vector<int> hit(n, 0);
      std::atomic<int> bad{0};
      parallel_ranges(n, min_parallel_work() * 2, [&](size_t b, size_t e, int) {
        if (b >= e || e > n) bad.fetch_add(1);
        for (size_t i = b; i < e && i < n; ++i) ++hit[i];
      });
      EXPECT_EQ(bad.load(), 0);
      for (size_t i = 0; i < n; ++i) ASSERT_EQ(hit[i], 1) << "index " << i << " of " << n;
    }
  }
}

// GEMM outputs must not depend on how the pool split them (batch invariance). Shapes: decode
// (M = 1, items are single panels), a prefill with many panels (items are panel groups), and few
// panels with many rows (items are row blocks); K a multiple of 32 for q8_0. 3 and 4 threads are
// more than this machine's cores, so threads are descheduled mid-region too.
TEST(ParallelGemm, OutputsAreBitIdenticalForOneToFourThreads) {
  ThreadGuard guard;
  struct Shape {
    size_t M, N, K;
  };
  const Shape shapes[] = {{1, 2049, 768}, {200, 1030, 544}, {700, 40, 256}, {97, 300, 64}};
  for (DType t : {DType::F32, DType::Q8_0}) {
    for (const Shape& s : shapes) {
      const std::vector<float> w = test::random_normal(s.N * s.K, 11);
      std::vector<uint8_t> raw(dtype_row_bytes(t, s.K) * s.N);
      quantize_row(t, w.data(), raw.data(), s.N * s.K);
      const PackedWeight pw = PackedWeight::pack(t, raw.data(), s.N, s.K);
      const std::vector<float> x = test::random_normal(s.M * s.K, 12);
      std::vector<float> want(s.M * s.N), got(s.M * s.N);
      set_num_threads(1);
      gemm(x.data(), s.M, s.K, pw, want.data(), s.N);
      for (int threads : {2, 3, 4}) {
        set_num_threads(threads);
        gemm(x.data(), s.M, s.K, pw, got.data(), s.N);
        ASSERT_TRUE(test::bit_equal(got, want)) << dtype_name(t) << " M=" << s.M << " N=" << s.N
                                                << " K=" << s.K << " threads=" << threads;
      }
    }
  }
}

// A timed region records the back-off that happened inside it; one that ran none records 0.
TEST(BackoffWindow, CountsABackOffInsideTheWindow) {
  ThreadGuard guard;
  set_num_threads(2);
  set_parallel_backoff(true);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // outlast any earlier back-off
  const BackoffWindow quiet;
  EXPECT_EQ(quiet.events(), 0);
  const BackoffWindow window;
  ASSERT_TRUE(lose_a_region_to_one_thread().backed_off);
  const auto lost_at = std::chrono::steady_clock::now();
  EXPECT_GE(window.events(), 1);
  // A window opened during that back-off period (at least 2 ms) counts it: its first regions run
  // on one thread.
  const BackoffWindow during;
  if (std::chrono::steady_clock::now() - lost_at > std::chrono::milliseconds(1))
    GTEST_SKIP() << "descheduled for over 1 ms after the lost region (machine too busy)";
  EXPECT_EQ(during.events(), 1);
}

// With back-off off for a window, a lost region leaves the pool's threads in use and the window
// records nothing; the guard then restores the setting it found.
TEST(BackoffWindow, RecordsNothingWhileBackOffIsOff) {
  ThreadGuard guard;
  set_num_threads(2);
  set_parallel_backoff(true);
  {
    const ScopedParallelBackoff off(false);
    EXPECT_FALSE(parallel_backoff_enabled());
    const BackoffWindow window;
    const LostRegions r = lose_a_region_to_one_thread();
    ASSERT_TRUE(r.lost) << "no pool thread took item 1 in 20 tries";
    EXPECT_FALSE(r.backed_off);
    EXPECT_EQ(window.events(), 0);
  }
  EXPECT_TRUE(parallel_backoff_enabled());
}

TEST(ScopedParallelBackoff, RestoresThePreviousSettingAlsoWhenNestedOrUnwound) {
  ThreadGuard guard;  // back-off off
  {
    const ScopedParallelBackoff on(true);
    EXPECT_TRUE(parallel_backoff_enabled());
    {
      const ScopedParallelBackoff off(false);
      EXPECT_FALSE(parallel_backoff_enabled());
    }
    EXPECT_TRUE(parallel_backoff_enabled());
  }
  EXPECT_FALSE(parallel_backoff_enabled());
  try {
    const ScopedParallelBackoff on(true);
    throw std::runtime_error("unwind");
  } catch (const std::runtime_error&) {
  }
  EXPECT_FALSE(parallel_backoff_enabled());
}

}  // namespace
}  // namespace accel
