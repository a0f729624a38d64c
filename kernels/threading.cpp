// The thread pool behind parallel_for (see threading.h). Owns the worker threads, how they wait
// (a short spin, then a futex sleep) and how items are handed out (one atomic claim per item).
// Must not know what an item computes, and must never make a caller wait for a thread that has not
// claimed an item: that wait is what made OpenMP's barriers collapse on a loaded machine.
//
// The job being run is published through a seqlock-like word `state_` = (epoch << 32 | 0 when open,
// kClosed when closed). A caller closes the previous job, writes the job description and opens
// every slot's share (below) at the new epoch, then opens state_. A pool thread reads the
// description between two reads of state_ and keeps it only if the epoch did not change; it then
// claims items by compare-and-swap on the shares' words (epoch << 32 | next item), which fails
// once the epoch has moved on, so a late thread can never run an item of the wrong job.
//
// Items are cut into one contiguous share per slot, claimed front to back by its slot first; a
// thread whose share is done takes items from the others' (so a descheduled thread still holds up
// nothing). Contiguous shares keep each thread's stream of a weight in address order: with one
// shared counter the two threads of a decode step took alternate items, and each thread's stream
// jumped at every item (Q4_K_M decode on 2 threads of a Zen 5, bench_engine BM_DecodeQ4KM: 42.4
// GB/s with one counter, 44.8 with shares, medians of 6 interleaved runs, 2026-11-29).
#include "kernels/threading.h"

#include <immintrin.h>
#include <linux/futex.h>
#include <omp.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <climits>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace accel {

namespace {

const int kDefaultThreads = omp_get_max_threads();

// How long an idle pool thread (or a caller waiting for the last items) polls before it sleeps:
// long enough to bridge the serial gaps between a decode step's regions (a few microseconds),
// short enough that a thread spinning beside the one it waits for (or, with autogroup scheduling,
// inside the same CPU share) gives the CPU back soon. 2-thread decode of the small target on a
// busy host (load average ~11), median tok/s without / with a busy process: spin 0 us 15.4 / 11.7,
// 50 us 13.5 / 12.6, 500 us 10.3 / 7.3 (bench_threads_under_load). 0 and 50 are within noise
// there; 50 is kept because on a quiet machine every region would otherwise pay a futex wake-up.
// ACCELBENCH_SPIN_US overrides it (read once, when a pool is made).
constexpr int kDefaultSpinUs = 50;

// Work (flop-like units, where GEMM's multiply-add is 2) below which a region runs inline: twice
// the wall time of handing out one region, so that a region that goes parallel saves at least
// as much as it costs. Measured with tests/bench/bench_threads_under_load (2 threads, 2-core
// Xeon, AVX-512): BM_Region 0.8-1.0 us per region; BM_GemmSize M=64 N=K=1024 on 1 thread 0.0080 ns
// per flop of CPU time; 2 x 0.8 us / 0.0080 ns = 2.0e5.
constexpr double kMinParallelWork = 2.0e5;

// Ranges per thread in parallel_ranges: enough that a thread delayed by the scheduler leaves the
// others most of the work to take, few enough that claiming costs nothing next to a range
// (chosen, not swept).
constexpr size_t kRangesPerThread = 4;

constexpr uint32_t kClosed = 0xffffffffu;

using Clock = std::chrono::steady_clock;
// Back-off after a region lost to one thread (see Pool::judge): the first pause is a few decode
// regions long, the longest keeps the cost of probing a loaded machine to one region in hundreds.
// Chosen, not swept; with them 2 threads stayed within 1-4% of 1 thread under load (issue 9).
constexpr Clock::duration kMinBackoff = std::chrono::milliseconds(2);
constexpr Clock::duration kMaxBackoff = std::chrono::milliseconds(256);
constexpr int64_t kWaitItems = 2;

int spin_us_from_env() {
  const char* s = std::getenv("ACCELBENCH_SPIN_US");
  if (!s || !*s) return kDefaultSpinUs;
  char* end = nullptr;
  const long v = std::strtol(s, &end, 10);
  return (end && *end == 0 && v >= 0 && v <= 1000000) ? int(v) : kDefaultSpinUs;
}

void futex_wait(std::atomic<uint32_t>* word, uint32_t expected) {
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAIT_PRIVATE, expected, nullptr,
          nullptr, 0);
}
void futex_wake_all(std::atomic<uint32_t>* word) {
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAKE_PRIVATE, INT_MAX, nullptr,
          nullptr, 0);
}

// Polls `ready` for about spin_us microseconds; true as soon as it holds.
template <class Ready>
bool spin_until(Ready ready, int spin_us) {
  if (ready()) return true;
  const auto end = std::chrono::steady_clock::now() + std::chrono::microseconds(spin_us);
  for (;;) {
    for (int i = 0; i < 64; ++i) {
      _mm_pause();
      if (ready()) return true;
    }
    if (std::chrono::steady_clock::now() >= end) return false;
  }
}

std::atomic<uint64_t> g_backoffs{0};
std::atomic<bool> g_backoff_enabled{true};
// The end of the latest back-off period (steady clock, ns since its epoch), for BackoffWindow.
std::atomic<int64_t> g_solo_until_ns{0};

int64_t steady_ns(Clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
}

thread_local bool t_inside_pool = false;  // this thread is running a body (nesting runs inline)

class Pool {
 public:
  explicit Pool(int n_threads)
      : spin_us_(spin_us_from_env()), shares_(size_t(std::max(n_threads, 1))) {
    for (int slot = 1; slot < n_threads; ++slot)
      workers_.emplace_back([this, slot] { work(slot, 0); });
  }
  ~Pool() {
    stop_.store(true);
    wake_.fetch_add(1);
    futex_wake_all(&wake_);
    for (auto& w : workers_) w.join();
  }
  int size() const { return int(workers_.size()) + 1; }

  // Runs the job with the caller as slot 0; false (nothing run) when another call holds the pool
  // or the pool is backing off after a region that lost to one thread (see judge()).
  bool run(size_t n_items, const ItemFn& body) {
    bool idle = false;
    if (!busy_.compare_exchange_strong(idle, true, std::memory_order_acquire)) return false;
    const Clock::time_point t0 = Clock::now();
    if (t0 < solo_until_ && g_backoff_enabled.load(std::memory_order_relaxed)) {
      busy_.store(false, std::memory_order_release);
      return false;
    }
    // 32-bit epochs wrap (after days of decoding); a wrapped epoch only has to differ from the
    // previous one, which it does.
    const uint64_t epoch = ((state_.load(std::memory_order_relaxed) >> 32) + 1) & 0xffffffffu;
    publish(epoch, n_items, body);
    const uint32_t own = drain(epoch, n_items, body, 0);
    const Clock::time_point t1 = Clock::now();
    wait_done(uint32_t(n_items));
    judge(t0, t1, Clock::now(), own, n_items);
    std::exception_ptr error = std::exchange(error_, nullptr);  // every item has finished
    busy_.store(false, std::memory_order_release);
    if (error) std::rethrow_exception(error);
    return true;
  }

 private:
  void publish(uint64_t epoch, size_t n_items, const ItemFn& body) {
    // Close: every item of the previous epoch is done, so no claim can succeed from here on.
    state_.store(epoch << 32 | kClosed, std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_release);
    body_.store(&body, std::memory_order_relaxed);
    n_items_.store(uint32_t(n_items), std::memory_order_relaxed);
    done_.store(0, std::memory_order_relaxed);
    for (int s = 0; s < size(); ++s)
      shares_[size_t(s)].next.store(epoch << 32 | share_begin(uint32_t(n_items), s),
                                    std::memory_order_relaxed);
    state_.store(epoch << 32, std::memory_order_release);  // open
    wake_.fetch_add(1, std::memory_order_seq_cst);
    if (sleepers_.load(std::memory_order_seq_cst) > 0) futex_wake_all(&wake_);
  }

  // An item that throws still counts as done (so the caller is not left waiting); the first
  // exception is kept and rethrown by the caller once every item has finished.
  void run_item(const ItemFn& body, size_t item, int slot) {
    try {
      body(item, slot);
    } catch (...) {
      std::lock_guard<std::mutex> lock(error_mutex_);
      if (!error_) error_ = std::current_exception();
    }
  }

  // A region the caller spent waiting for another thread's item (t1 to t2), long enough that the
  // whole region (t0 to t2) took longer than the caller alone would have (its own items' time
  // scaled to all items), means a pool thread was descheduled mid-item: the machine is busy. Then
  // regions run on the caller alone for a while, doubling from kMinBackoff up to kMaxBackoff
  // while it lasts, so a loaded machine costs about one lost region per back-off period. A wait
  // of up to kWaitItems items is normal imbalance (a late thread took the last item) and is not
  // counted, so a quiet machine does not back off.
  void judge(Clock::time_point t0, Clock::time_point t1, Clock::time_point t2, uint32_t own,
             size_t n_items) {
    if (own == 0 || !g_backoff_enabled.load(std::memory_order_relaxed)) return;
    const auto own_time = t1 - t0, waited = t2 - t1;
    const auto serial_estimate = own_time * int64_t(n_items) / int64_t(own);
    const bool lost = t2 - t0 > serial_estimate && waited > own_time * kWaitItems / int64_t(own);
    if (!lost) {
      backoff_ = Clock::duration::zero();
      return;
    }
    backoff_ =
        backoff_ == Clock::duration::zero() ? kMinBackoff : std::min(2 * backoff_, kMaxBackoff);
    solo_until_ = t2 + backoff_;
    g_solo_until_ns.store(steady_ns(solo_until_), std::memory_order_relaxed);
    g_backoffs.fetch_add(1, std::memory_order_relaxed);
  }

  // Slot s's share of n items: [share_begin(n, s), share_begin(n, s + 1)).
  uint32_t share_begin(uint32_t n, int s) const {
    return uint32_t(uint64_t(n) * uint64_t(s) / uint64_t(size()));
  }

  // Claims and runs items of `epoch`, its own share first and then the others' in slot order,
  // until none is left (or the epoch has moved on); returns how many this thread ran.
  uint32_t drain(uint64_t epoch, uint32_t n_items, const ItemFn& body, int slot) {
    uint32_t ran = 0;
    for (int k = 0; k < size(); ++k) {
      const int s = (slot + k) % size();
      const uint32_t end = share_begin(n_items, s + 1);
      std::atomic<uint64_t>& word = shares_[size_t(s)].next;
      uint64_t w = word.load(std::memory_order_relaxed);
      for (;;) {
        if ((w >> 32) != epoch) return ran;
        if (uint32_t(w) >= end) break;  // this share is taken; on to the next
        if (!word.compare_exchange_weak(w, w + 1, std::memory_order_acquire)) continue;
        ++ran;
        run_item(body, size_t(uint32_t(w)), slot);
        if (done_.fetch_add(1, std::memory_order_seq_cst) + 1 == n_items &&
            caller_sleeping_.load(std::memory_order_seq_cst))
          futex_wake_all(&done_);
        w = word.load(std::memory_order_relaxed);
      }
    }
    return ran;
  }

  void wait_done(uint32_t n_items) {
    auto finished = [&] { return done_.load(std::memory_order_acquire) == n_items; };
    if (spin_until(finished, spin_us_)) return;
    for (;;) {
      caller_sleeping_.store(true, std::memory_order_seq_cst);
      const uint32_t d = done_.load(std::memory_order_seq_cst);
      if (d == n_items) break;
      futex_wait(&done_, d);
    }
    caller_sleeping_.store(false, std::memory_order_relaxed);
  }

  // seen_wake is wake_'s value when the pool was made (0), not when this thread first runs: a
  // job published in between (the first region right after set_num_threads) would otherwise
  // never wake it, and the caller ran that region alone.
  void work(int slot, uint32_t seen_wake) {
    t_inside_pool = true;
    uint64_t done_epoch = 0;
    while (!stop_.load(std::memory_order_relaxed)) {
      if (!spin_until([&] { return wake_.load(std::memory_order_acquire) != seen_wake; }, spin_us_))
        sleep_until_woken(seen_wake);
      seen_wake = wake_.load(std::memory_order_acquire);
      // Seqlock read of the job; retry while a caller is mid-publish.
      const uint64_t s1 = state_.load(std::memory_order_acquire);
      const ItemFn* body = body_.load(std::memory_order_relaxed);
      const uint32_t n = n_items_.load(std::memory_order_relaxed);
      std::atomic_thread_fence(std::memory_order_acquire);
      const uint64_t s2 = state_.load(std::memory_order_relaxed);
      const uint64_t epoch = s1 >> 32;
      if (epoch != (s2 >> 32) || uint32_t(s1) == kClosed || epoch == done_epoch) continue;
      drain(epoch, n, *body, slot);
      done_epoch = epoch;
    }
  }

  void sleep_until_woken(uint32_t seen_wake) {
    sleepers_.fetch_add(1, std::memory_order_seq_cst);
    while (wake_.load(std::memory_order_seq_cst) == seen_wake && !stop_.load())
      futex_wait(&wake_, seen_wake);
    sleepers_.fetch_sub(1, std::memory_order_seq_cst);
  }

  const int spin_us_;
  std::vector<std::thread> workers_;
  std::atomic<bool> busy_{false}, stop_{false}, caller_sleeping_{false};
  std::atomic<uint64_t> state_{0};
  struct alignas(64) Share {  // a cache line each: the slots claim from their own
    std::atomic<uint64_t> next{0};
  };
  std::vector<Share> shares_;  // [size()]
  std::atomic<const ItemFn*> body_{nullptr};
  std::atomic<uint32_t> n_items_{0}, done_{0}, wake_{0};
  std::atomic<int> sleepers_{0};
  std::mutex error_mutex_;
  std::exception_ptr error_;
  // Back-off state; touched only by the thread holding busy_.
  Clock::time_point solo_until_{};
  Clock::duration backoff_{};
};

std::atomic<int> g_threads{kDefaultThreads < 1 ? 1 : kDefaultThreads};
std::mutex g_pool_mutex;  // guards replacing the pool (set_num_threads), not running it
std::unique_ptr<Pool> g_pool;

Pool* pool_for(int n_threads) {
  std::lock_guard<std::mutex> lock(g_pool_mutex);
  if (!g_pool || g_pool->size() != n_threads) {
    g_pool.reset();
    g_pool = std::make_unique<Pool>(n_threads);
  }
  return g_pool.get();
}

void run_inline(size_t n_items, const ItemFn& body) {
  for (size_t i = 0; i < n_items; ++i) body(i, 0);
}

}  // namespace

void set_num_threads(int n) {
  n = std::max(n, 1);
  g_threads.store(n);
  omp_set_num_threads(n);  // for the code that still uses OpenMP directly
}
int num_threads() {
  return g_threads.load();
}
int default_num_threads() {
  return kDefaultThreads;
}
int parallel_slots() {
  return num_threads();
}
void set_parallel_backoff(bool enabled) {
  g_backoff_enabled.store(enabled);
}
bool parallel_backoff_enabled() {
  return g_backoff_enabled.load();
}
uint64_t parallel_backoffs() {
  return g_backoffs.load(std::memory_order_relaxed);
}

ScopedParallelBackoff::ScopedParallelBackoff(bool enabled) : previous_(parallel_backoff_enabled()) {
  set_parallel_backoff(enabled);
}
ScopedParallelBackoff::~ScopedParallelBackoff() {
  set_parallel_backoff(previous_);
}

// A period still running counts only while back-off is enabled: disabled, the pool ignores it.
BackoffWindow::BackoffWindow()
    : backoffs_at_start_(parallel_backoffs()),
      began_inside_backoff_(parallel_backoff_enabled() &&
                            g_solo_until_ns.load(std::memory_order_relaxed) >
                                steady_ns(Clock::now())) {}
int64_t BackoffWindow::events() const {
  return int64_t(parallel_backoffs() - backoffs_at_start_) + (began_inside_backoff_ ? 1 : 0);
}
int pool_spin_us() {
  return spin_us_from_env();
}
double min_parallel_work() {
  return kMinParallelWork;
}

void parallel_for(size_t n_items, ItemFn body) {
  const int n = num_threads();
  if (n_items == 0) return;
  if (n_items == 1 || n == 1 || t_inside_pool || n_items > size_t(kClosed - 1))
    return run_inline(n_items, body);
  Pool* pool = pool_for(n);
  bool ran = false;
  {
    struct InsidePool {  // restored on every exit, also when an item's exception comes through
      InsidePool() { t_inside_pool = true; }
      ~InsidePool() { t_inside_pool = false; }
    } inside;
    ran = pool->run(n_items, body);
  }
  if (!ran) run_inline(n_items, body);
}

void parallel_for(size_t n_items, double work, ItemFn body) {
  if (work < kMinParallelWork) return run_inline(n_items, body);
  parallel_for(n_items, body);
}

void parallel_ranges(size_t n, double work, RangeFn body) {
  if (n == 0) return;
  const size_t chunks = std::min(n, kRangesPerThread * size_t(num_threads()));
  parallel_for(chunks, work,
               [&](size_t c, int slot) { body(n * c / chunks, n * (c + 1) / chunks, slot); });
}

}  // namespace accel
