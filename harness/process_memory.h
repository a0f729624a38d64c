// Peak resident memory of this process, resettable between trials (Linux: /proc/self/clear_refs
// value 5 resets the high-water mark; VmHWM in /proc/self/status reads it).
#pragma once
#include <cstdint>

namespace accel {

void reset_peak_rss();     // best effort; no-op where the kernel does not allow it
int64_t peak_rss_bytes();  // VmHWM, 0 when unavailable

}  // namespace accel
