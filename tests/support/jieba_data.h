// What the tests of Chinese scoring need from outside the tree, and the rule for when it is
// absent: jieba's data (Debian's python3-jieba, which scripts/setup.sh installs) and, for the
// comparisons with Python, /usr/bin/python3 able to import jieba. Absent: the test fails under
// CI=true and is skipped otherwise, with a message naming what is missing.
#pragma once
#include <gtest/gtest.h>

#include <string>

#include "tests/support/test_support.h"  // ACCEL_REQUIRE

namespace accel::test {

// "" when jieba's data is at jieba::locate_data()'s folder, else what is missing there.
std::string missing_jieba_data();
// "" when /usr/bin/python3 imports jieba, else what is missing.
std::string missing_python_jieba();

}  // namespace accel::test
