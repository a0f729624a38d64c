// Environment capture for provenance: git commit and dirty flag of the source tree the binary was
// built from, build type, compiler and flags, CPU model and ISA flags, thread count, host name.
// Owns only reading these facts; never decides what is stored where.
#pragma once
#include <nlohmann/json.hpp>
#include <string>

namespace accel {

struct Environment {
  std::string git_commit;  // "unknown" outside a git checkout
  bool git_dirty = false;
  std::string build_type, compiler, compile_flags;
  std::string cpu_model, cpu_flags;  // cpu_flags: the SIMD-relevant subset (avx2, avx512f, ...)
  int threads = 0;
  std::string hostname;
  std::string accelbench_version;

  nlohmann::json to_json() const;
};

Environment capture_environment();

}  // namespace accel
