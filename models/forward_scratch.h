// Per-thread scratch for the forward passes: float buffers reused across calls instead of fresh
// zero-filled vectors (memset and page faults were ~7% of an f32 prefill of 512 tokens and ~10%
// of small-nemotron-h-moe's, on a 2-core Zen 5, 2026-11-28). Hands out uninitialised memory: a
// caller must write every element before reading it. Must not be shared between threads.
#pragma once

#include <cstddef>
#include <span>

namespace accel {

// Buffers taken through a ForwardScratch stay valid until it ends. A scratch opened while another
// is alive on the same thread (a nested forward, or a helper inside a forward) takes buffers after
// the outer one's, and only the innermost scratch may take (checked: an outer take would be handed
// out again when the inner one ends). The same sequence of take() calls gets the
// same buffers back on the next call, so after the first forward nothing is allocated.
class ForwardScratch {
 public:
  ForwardScratch();
  ~ForwardScratch();
  ForwardScratch(const ForwardScratch&) = delete;
  ForwardScratch& operator=(const ForwardScratch&) = delete;

  // n floats, contents unspecified (stale from an earlier call).
  std::span<float> take(size_t n);
  // n floats set to v.
  std::span<float> take_filled(size_t n, float v);

 private:
  size_t mark_;   // the thread's buffer count in use when this scratch opened
  size_t depth_;  // 1 + the scratches alive on this thread when it opened
};

}  // namespace accel
