// capture_environment (see environment.h). Reads /proc/cpuinfo and asks git about the source tree.
#include "harness/environment.h"

#include <unistd.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <set>
#include <sstream>

#include "kernels/threading.h"

#ifndef ACCELBENCH_SOURCE_DIR
#define ACCELBENCH_SOURCE_DIR "."
#endif
#ifndef ACCELBENCH_BUILD_TYPE
#define ACCELBENCH_BUILD_TYPE "unknown"
#endif
#ifndef ACCELBENCH_COMPILE_FLAGS
#define ACCELBENCH_COMPILE_FLAGS ""
#endif

namespace accel {

namespace {

std::string run(const std::string& cmd) {
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return out;
  std::array<char, 512> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) out.append(buf.data(), n);
  pclose(p);
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
  return out;
}

}  // namespace

nlohmann::json Environment::to_json() const {
  return {{"git_commit", git_commit},       {"git_dirty", git_dirty},
          {"build_type", build_type},       {"compiler", compiler},
          {"compile_flags", compile_flags}, {"cpu_model", cpu_model},
          {"cpu_flags", cpu_flags},         {"threads", threads},
          {"hostname", hostname},           {"accelbench_version", accelbench_version}};
}

Environment capture_environment() {
  Environment e;
  const std::string src = ACCELBENCH_SOURCE_DIR;
  e.git_commit = run("git -C '" + src + "' rev-parse HEAD 2>/dev/null");
  if (e.git_commit.empty()) e.git_commit = "unknown";
  e.git_dirty =
      !run("git -C '" + src + "' status --porcelain --untracked-files=no 2>/dev/null").empty();
  e.build_type = ACCELBENCH_BUILD_TYPE;
  e.compile_flags = ACCELBENCH_COMPILE_FLAGS;
#if defined(__clang__)
  e.compiler = std::string("clang ") + __clang_version__;
#elif defined(__GNUC__)
  e.compiler = std::string("gcc ") + __VERSION__;
#else
  e.compiler = "unknown";
#endif
  std::ifstream cpu("/proc/cpuinfo");
  std::string line;
  static const std::set<std::string> simd = {
      "sse4_2",   "avx",      "avx2",        "fma",         "f16c",        "avx512f",
      "avx512bw", "avx512vl", "avx512_bf16", "avx512_vnni", "avx512_fp16", "amx_tile"};
  while (std::getline(cpu, line)) {
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string key = line.substr(0, colon);
    while (!key.empty() && (key.back() == ' ' || key.back() == '\t')) key.pop_back();
    const std::string val = colon + 2 <= line.size() ? line.substr(colon + 2) : "";
    if (key == "model name" && e.cpu_model.empty()) e.cpu_model = val;
    if (key == "flags" && e.cpu_flags.empty()) {
      std::istringstream ss(val);
      std::string f;
      while (ss >> f)
        if (simd.count(f)) e.cpu_flags += (e.cpu_flags.empty() ? "" : " ") + f;
    }
  }
  e.threads = num_threads();
  char host[256] = {0};
  gethostname(host, sizeof host - 1);
  e.hostname = host;
  e.accelbench_version = "0.1.0";
  return e;
}

}  // namespace accel
