// Matching printed reports against expected lines (STYLE.md item 11, after google/benchmark's
// output_test.h): expected lines are literal text except for placeholders — %f a float, %d an
// integer, %* anything — and must appear in order in the output.
#pragma once
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "tests/support/pattern.h"

namespace accel::test {

inline Pattern line_pattern(const std::string& expected) {
  std::string re;
  for (size_t i = 0; i < expected.size(); ++i) {
    const char c = expected[i];
    if (c == '%' && i + 1 < expected.size()) {
      const char k = expected[i + 1];
      if (k == 'f') {
        re += "-?[0-9]+(\\.[0-9]+)?([eE][-+]?[0-9]+)?";
        ++i;
        continue;
      }
      if (k == 'd') {
        re += "-?[0-9]+";
        ++i;
        continue;
      }
      if (k == '*') {
        re += ".*";
        ++i;
        continue;
      }
    }
    if (std::string("\\^$.|?*+()[]{}").find(c) != std::string::npos) re += '\\';
    re += c;
  }
  return Pattern(re);
}

inline std::vector<std::string> split_lines(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

// Each expected line must fully match an output line after the previous match.
inline ::testing::AssertionResult lines_match(const std::string& output,
                                              const std::vector<std::string>& expected) {
  const auto lines = split_lines(output);
  size_t at = 0;
  for (const auto& e : expected) {
    const Pattern re = line_pattern(e);
    bool found = false;
    for (; at < lines.size(); ++at)
      if (re.full_match(lines[at])) {
        found = true;
        ++at;
        break;
      }
    if (!found)
      return ::testing::AssertionFailure()
             << "expected line not found (in order):\n  " << e << "\noutput was:\n"
             << output;
  }
  return ::testing::AssertionSuccess();
}

}  // namespace accel::test
