// Memory for the buffers the kernels stream from DRAM: packed weights (read whole every decode
// step), KV caches and the read-bandwidth probes that bound them. Owns their allocation and the
// record of the system's huge-page mode; must not be used for scratch, which stays in cache.
#pragma once
#include <cstddef>
#include <cstdlib>
#include <limits>
#include <new>
#include <string>
#include <vector>

namespace accel {

// Buffers of at least this many bytes are placed on 2 MiB boundaries and advised for transparent
// huge pages (madvise(MADV_HUGEPAGE)); smaller ones are only 64-byte aligned.
constexpr size_t kStreamHugePageBytes = size_t(2) << 20;

// `bytes` of uninitialised memory (0 counts as 1), 64-byte aligned, and on huge pages as above
// where the system grants them (in its "madvise" or "always" mode; "never" leaves 4 KiB pages).
// Release with stream_free. Throws std::bad_alloc.
//
// Why: a stream on 4 KiB pages changes page every 64 cache lines. On a 2-core AMD Zen 5 VM
// (2026-11-29, interleaved medians) Q4_K_M decode of `medium` on one thread read its weights at
// 33.3 GB/s on 4 KiB pages and 36.6 on 2 MiB ones (bench_engine BM_DecodeQ4KM, 4 runs each), and
// bench_memory_bandwidth's 1 GiB read went from 38.7 to 40.7 GB/s (3 runs each).
void* stream_alloc(size_t bytes);
void stream_free(void* p) noexcept;

// The system's transparent huge page mode, as /sys/kernel/mm/transparent_hugepage/enabled marks
// it ("always", "madvise" or "never"), or "unknown" where that file cannot be read: for the run
// record, since it decides whether stream_alloc's advice takes effect.
std::string transparent_hugepage_mode();
// The bracketed word of such a line ("always [madvise] never" -> "madvise"), or "unknown".
std::string parse_hugepage_mode(const std::string& line);

// std::vector's allocator for streamed buffers (value-initialising, like the default one).
template <class T>
struct StreamAllocator {
  using value_type = T;
  StreamAllocator() = default;
  template <class U>
  StreamAllocator(const StreamAllocator<U>&) noexcept {}
  T* allocate(size_t n) {
    if (n > std::numeric_limits<size_t>::max() / sizeof(T)) throw std::bad_array_new_length();
    return static_cast<T*>(stream_alloc(n * sizeof(T)));
  }
  void deallocate(T* p, size_t) noexcept { stream_free(p); }
  template <class U>
  bool operator==(const StreamAllocator<U>&) const noexcept {
    return true;
  }
};

template <class T>
using StreamVector = std::vector<T, StreamAllocator<T>>;

}  // namespace accel
