// Environment capture for provenance: the git commit, dirty state and version the binary was BUILT
// from (captured by CMake, never read from the tree checked out at run time), build type, compiler
// and flags, CPU model, identity and ISA flags, the kernel variant, thread count, host name, and
// the machine's FMA peak. Owns only reading these facts; never decides what is stored where.
#pragma once
#include <nlohmann/json.hpp>
#include <string>

#include "kernels/kernel_variant.h"

namespace accel {

// Written at build time by cmake/provenance.cmake into the build tree's generated sources.
struct BuildProvenance {
  const char* git_commit;  // `git rev-parse HEAD` of the source tree; "unknown" outside git
  bool git_dirty;          // tracked files differed from HEAD when the binary was built
  const char* version;     // the CMake project version
  // sha256 of `git diff HEAD` (tracked files) when git_dirty, else "": the dirty tree's state.
  const char* git_diff_sha256;
};
const BuildProvenance& build_provenance();

struct Environment {
  std::string git_commit;  // "unknown" when the source was not a git checkout at build time
  bool git_dirty = false;
  std::string git_diff_sha256;  // see BuildProvenance
  std::string build_type, compiler, compile_flags;
  std::string cpu_model, cpu_flags;  // cpu_flags: the SIMD-relevant subset (avx2, avx512f, ...)
  // "<vendor_id> family F model M stepping S" from /proc/cpuinfo: names the CPU kind where the
  // model name does not (a VM may report only "AMD EPYC"); a per-CPU setting would key on it.
  std::string cpu_id;
  KernelVariant kernels;
  int threads = 0;
  int cores = 0;  // logical CPUs online (what a load average is compared with)
  std::string hostname;
  std::string accelbench_version;

  nlohmann::json to_json() const;
};

Environment capture_environment();

// FP32 FMA peak in GFLOP/s on `threads` threads (kernels/fma_peak.h), measured the first time it is
// asked for a thread count in this process (about half a second) and returned from then on, so a
// run records one figure however often it asks. For runs.fma_peak_gflops.
double run_fma_peak_gflops(int threads);

}  // namespace accel
