// The thread's stack of reusable buffers behind ForwardScratch (forward_scratch.h). Owns the
// buffers' lifetime (the thread's); must not hand one buffer to two live takers.
#include "models/forward_scratch.h"

#include <algorithm>
#include <memory>
#include <vector>

#include "kernels/check.h"

namespace accel {

namespace {

struct ThreadBuffers {
  // One vector per buffer, held by pointer so that growing the list never moves a buffer a
  // caller still holds.
  std::vector<std::unique_ptr<std::vector<float>>> buffers;
  size_t in_use = 0;
  size_t depth = 0;  // scratches alive on this thread
};

ThreadBuffers& thread_buffers() {
  thread_local ThreadBuffers b;
  return b;
}

}  // namespace

ForwardScratch::ForwardScratch()
    : mark_(thread_buffers().in_use), depth_(++thread_buffers().depth) {}

ForwardScratch::~ForwardScratch() {
  ThreadBuffers& b = thread_buffers();
  b.in_use = mark_;
  --b.depth;
}

std::span<float> ForwardScratch::take(size_t n) {
  ThreadBuffers& b = thread_buffers();
  // Only the innermost scratch may take: an outer one's buffer taken while an inner one is alive
  // would be handed out again once the inner one ends.
  ACCEL_CHECK(depth_ == b.depth, "forward scratch: take() at depth %zu while depth %zu is open",
              depth_, b.depth);
  if (b.in_use == b.buffers.size()) b.buffers.push_back(std::make_unique<std::vector<float>>());
  std::vector<float>& v = *b.buffers[b.in_use++];
  if (v.size() < n) v.resize(n);
  return {v.data(), n};
}

std::span<float> ForwardScratch::take_filled(size_t n, float v) {
  const std::span<float> s = take(n);
  std::fill(s.begin(), s.end(), v);
  return s;
}

}  // namespace accel
