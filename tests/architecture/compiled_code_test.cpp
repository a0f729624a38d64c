// The compiled libraries that compute a model's numbers hold no vfmaddsub, vfmsubadd or vaddsubp*:
// what GCC 12 makes of a subtract and an add of products on alternating elements, fused in a
// loop's wide versions and unfused in its 128-bit one, whatever -ffp-contract says
// (kernels/rope_rotate.h). Reads the built archives with objdump (binutils, which g++ needs);
// links nothing of ours.

// At -O1 (the sanitizer build) GCC 12 reports a maybe-uninitialized std::function inside
// libstdc++'s std::regex compiler; a false positive, silenced for this file only.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <cstdio>
#include <regex>
#include <string>
#include <vector>

namespace {

struct Scan {
  size_t lines = 0;
  std::vector<std::string> hits;  // "function: instruction"
  int status = -1;
};

Scan scan(const std::string& archive) {
  Scan s;
  const std::string cmd = "objdump -d --no-show-raw-insn -C '" + archive + "' 2>&1";
  FILE* f = popen(cmd.c_str(), "r");
  if (!f) return s;
  static const std::regex function(R"(^[0-9a-f]+ <(.*)>:$)");
  static const std::regex addsub(R"(\s(vfmaddsub\w*|vfmsubadd\w*|vaddsubp[sd])\s)");
  std::string current, line;
  char buf[4096];
  while (std::fgets(buf, sizeof buf, f)) {
    line = buf;
    if (!line.empty() && line.back() == '\n') line.pop_back();
    ++s.lines;
    std::smatch m;
    if (std::regex_match(line, m, function))
      current = m[1];
    else if (std::regex_search(line, m, addsub))
      s.hits.push_back(current + ": " + m[1].str());
  }
  const int st = pclose(f);
  s.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return s;
}

TEST(CompiledCode, NoAlternatingAddSubOfProductsInTheComputingLibraries) {
  for (const char* archive :
       {ACCELBENCH_KERNELS_LIB, ACCELBENCH_MODELS_LIB, ACCELBENCH_METHODS_LIB}) {
    SCOPED_TRACE(archive);
    const Scan s = scan(archive);
    ASSERT_EQ(s.status, 0) << "objdump failed on the archive";
    EXPECT_GT(s.lines, 10000u) << "too little disassembly to have read the archive";
    std::string list;
    for (const std::string& h : s.hits) list += "\n  " + h;
    EXPECT_TRUE(s.hits.empty()) << s.hits.size() << " instructions:" << list;
  }
}

}  // namespace
