// Tests that compare against the reference Python packages themselves, run with Debian's
// /usr/bin/python3 (never needed by the harness). What is missing decides the outcome:
// under CI=true a missing interpreter or module fails the test, elsewhere it skips naming it.
#pragma once
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/support/test_support.h"  // in_ci()

namespace accel::test {

inline constexpr const char* kPython3 = "/usr/bin/python3";

// "" when kPython3 exists and imports every module; otherwise a sentence naming what is missing.
std::string missing_python(const std::vector<std::string>& modules);
// Runs kPython3 with `args` (shell words), stdout into *out and stderr into *err; the exit code.
int run_python(const std::string& args, std::string* out, std::string* err);

}  // namespace accel::test

// Fails (CI=true) or skips the current test unless /usr/bin/python3 imports the named modules.
#define ACCEL_REQUIRE_PYTHON(...) ACCEL_REQUIRE(::accel::test::missing_python({__VA_ARGS__}))
