// The engine's threads: one process-wide thread count and the pool every kernel's parallel loop
// runs on (ARCHITECTURE.md: threading lives in kernels). Must not decide how an output is computed:
// items are claimed dynamically, so a kernel's result may depend only on the item, never on which
// thread or how many ran it (batch invariance). Callers never include <omp.h> themselves.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>

namespace accel {

// n >= 1 (smaller values mean 1); also sets OpenMP's count for code that still uses it. Not while
// another thread is inside parallel_for (the pool is replaced on the next call).
void set_num_threads(int n);
int num_threads();
// Threads OpenMP would use by default on this machine (before any set_num_threads call).
int default_num_threads();

// A non-owning reference to a callable (no allocation per region). It refers to the argument, so
// it is only for passing a lambda down a call, never for storing one.
template <class Sig>
class FunctionRef;
template <class R, class... Args>
class FunctionRef<R(Args...)> {
 public:
  template <class F, class = std::enable_if_t<!std::is_same_v<std::decay_t<F>, FunctionRef>>>
  FunctionRef(F&& f)  // NOLINT(google-explicit-constructor): a lambda at every call site
      : obj_(const_cast<void*>(static_cast<const void*>(&f))), call_([](void* o, Args... a) -> R {
          return (*static_cast<std::remove_reference_t<F>*>(o))(std::forward<Args>(a)...);
        }) {}
  R operator()(Args... a) const { return call_(obj_, std::forward<Args>(a)...); }

 private:
  void* obj_;
  R (*call_)(void*, Args...);
};
using ItemFn = FunctionRef<void(size_t item, int slot)>;
using RangeFn = FunctionRef<void(size_t begin, size_t end, int slot)>;

// Runs body(item, slot) exactly once for every item in [0, n_items) and returns when all have
// finished. The calling thread works too; pool threads that are not running (descheduled by a
// busy machine) simply claim nothing, so a region never waits for a thread that has not started
// an item. `slot` is in [0, parallel_slots()) and is distinct for threads running concurrently in
// this call: index per-call scratch with it. A call from inside a body, from a second thread
// while the pool is busy, with one thread, or while the pool is backing off (see
// parallel_backoffs) runs every item inline on the caller (slot 0), in ascending order. An
// exception from a body is rethrown here once no thread is still running an item of this call;
// which other items ran is then unspecified.
void parallel_for(size_t n_items, ItemFn body);

// As above, but the whole loop runs inline when `work` (the region's arithmetic in flop-like
// units: multiply-adds count 2) is below min_parallel_work(): handing out a region takes about
// half that much arithmetic's time, so below it two threads save less than they cost.
void parallel_for(size_t n_items, double work, ItemFn body);

// Cuts [0, n) into contiguous ranges (a few per thread, so a descheduled thread holds up little)
// and runs body(begin, end, slot) on each, through parallel_for(items, work, ...).
void parallel_ranges(size_t n, double work, RangeFn body);

// The most slots any parallel_for call started now may use (its per-call scratch size).
int parallel_slots();

// How many times the pool has stopped using its threads for a while because a region took longer
// than one thread would have (a busy machine descheduled a pool thread mid-item); see
// threading.cpp. For benchmarks and tests.
uint64_t parallel_backoffs();
// Back-off is on by default; tests turn it off so that every region really uses the pool.
void set_parallel_backoff(bool enabled);
bool parallel_backoff_enabled();

// Sets whether the pool may back off for the guard's lifetime and restores the previous setting
// when it ends (also on an exception). Off, every region uses the pool's threads, including right
// after a region lost to a descheduled thread: on a loaded machine that costs time, which is why
// back-off is on by default.
class ScopedParallelBackoff {
 public:
  explicit ScopedParallelBackoff(bool enabled);
  ~ScopedParallelBackoff();
  ScopedParallelBackoff(const ScopedParallelBackoff&) = delete;
  ScopedParallelBackoff& operator=(const ScopedParallelBackoff&) = delete;

 private:
  bool previous_;
};

// Counts the back-off periods that overlap a timed region, from construction to events(): those
// that began inside it, plus one still running when it began (its regions ran on one thread
// too). Zero means every region in the window could use all threads.
class BackoffWindow {
 public:
  BackoffWindow();
  int64_t events() const;

 private:
  uint64_t backoffs_at_start_;
  bool began_inside_backoff_;
};

// The work threshold used by parallel_for(n, work, body); see threading.cpp for how it was set.
double min_parallel_work();
// How long an idle pool thread (and a caller waiting for one) polls before sleeping, in
// microseconds: ACCELBENCH_SPIN_US when set to 0..1000000, else the default. For the run record.
int pool_spin_us();

}  // namespace accel
