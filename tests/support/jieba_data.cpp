// Implementations of jieba_data.h.
#include "tests/support/jieba_data.h"

#include <cstdlib>
#include <filesystem>

#include "suites/jieba_data.h"

namespace accel::test {

std::string missing_jieba_data() {
  const jieba::DataLocation at = jieba::locate_data();
  std::string missing;
  for (const char* f :
       {"dict.txt", "finalseg/prob_start.py", "finalseg/prob_trans.py", "finalseg/prob_emit.py"})
    if (!std::filesystem::is_regular_file(std::filesystem::path(at.dir) / f))
      missing += (missing.empty() ? "" : ", ") + (std::filesystem::path(at.dir) / f).string();
  if (missing.empty()) return "";
  return "jieba's data is missing (" + missing + "; install python3-jieba or set " +
         jieba::kDirEnv + ")";
}

std::string missing_python_jieba() {
  if (!std::filesystem::exists("/usr/bin/python3")) return "/usr/bin/python3 is missing";
  if (std::system("/usr/bin/python3 -c 'import jieba' >/dev/null 2>&1") != 0)
    return "/usr/bin/python3 cannot import jieba (install python3-jieba)";
  return "";
}

}  // namespace accel::test
