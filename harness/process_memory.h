// Peak resident memory of this process, resettable between trials (Linux: /proc/self/clear_refs
// value 5 resets the high-water mark; VmHWM in /proc/self/status reads it).
#pragma once
#include <cstdint>
#include <string>

namespace accel {

void reset_peak_rss();        // best effort; no-op where the kernel does not allow it
int64_t peak_rss_bytes();     // VmHWM, 0 when unavailable
int64_t current_rss_bytes();  // VmRSS, 0 when unavailable
// Any "Name:  N kB" field of /proc/self/status (e.g. "RssFile:"), in bytes; 0 when absent.
int64_t status_field_bytes(const std::string& name);

}  // namespace accel
