// Decode's software-prefetch distances (kquant_panel.h, q8_0_panel.h, mxfp4_panel.h), chosen once
// per process for the CPU kind it runs on: ACCELBENCH_DECODE_PREFETCH if set, else a table of
// settings measured per CPU kind, else a default. A distance moves when bytes are asked for, never
// which bytes are read or how they are summed, so no choice here can change a result's bits.
#pragma once
#include <cstddef>
#include <string>

namespace accel {

struct DecodePrefetch {
  size_t kquant_superblocks = 0;  // k-quant panels: super-blocks ahead (0: no software prefetch)
  size_t blocks = 0;              // q8_0 and MXFP4 panels: 32-element blocks ahead (0: none)
  std::string source;             // how they were chosen, for the run record
};

// The largest distance either setting accepts (a k-quant super-block of a 64-column panel is
// 9-12 KB, so 16 of them is already far beyond what L1 or the line-fill buffers hold).
inline constexpr size_t kMaxPrefetchDistance = 64;

// "<vendor> family F model M" of the CPU this runs on, read with the cpuid instruction and formed
// as Linux forms /proc/cpuinfo's fields (extended family and model folded in), e.g.
// "AuthenticAMD family 26 model 2".
std::string cpu_kind();

// The setting for a CPU kind: `env` (ACCELBENCH_DECODE_PREFETCH's value, or null) if given, as
// "K,B" (super-blocks, blocks; each in [0, kMaxPrefetchDistance]); else the table's entry for the
// kind; else the default. Throws std::invalid_argument naming the variable for a malformed value.
DecodePrefetch choose_decode_prefetch(const std::string& kind, const char* env);

// This process's setting: choose_decode_prefetch(cpu_kind(), getenv(...)) on first use.
const DecodePrefetch& decode_prefetch();

}  // namespace accel
