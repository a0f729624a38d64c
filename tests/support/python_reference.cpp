// Implementations of python_reference.h.
#include "tests/support/python_reference.h"

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "tests/support/test_support.h"

namespace accel::test {

std::string missing_python(const std::vector<std::string>& modules) {
  if (access(kPython3, X_OK) != 0) return std::string(kPython3) + " is not installed";
  std::string missing;
  for (const std::string& m : modules) {
    std::string out;
    if (run_command(std::string(kPython3) + " -c 'import " + m + "' 2>&1", &out) != 0)
      missing += (missing.empty() ? "" : ", ") + m;
  }
  if (missing.empty()) return "";
  return std::string(kPython3) + " cannot import " + missing;
}

int run_python(const std::string& args, std::string* out, std::string* err) {
  TempDir dir;
  const std::string err_file = dir.file("stderr.txt");
  const int code = run_command(std::string(kPython3) + " " + args + " 2>" + err_file, out);
  if (err) {
    std::ifstream f(err_file);
    std::ostringstream ss;
    ss << f.rdbuf();
    *err = ss.str();
  }
  return code;
}

}  // namespace accel::test
