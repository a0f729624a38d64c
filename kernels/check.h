// ACCEL_CHECK: internal invariants that stay checked in every build, release included (assert is
// compiled out under NDEBUG). On failure it prints file:line, the condition and a printf-style
// message with the offending values, then aborts. For invariants only: bad input from a user or a
// file throws at the boundary instead. The lowest layer, so every library may use it.
#pragma once

namespace accel::detail {

// The failure path, out of line and cold so the checked code pays one compare and one branch.
[[noreturn, gnu::cold, gnu::noinline, gnu::format(printf, 4, 5)]] void check_failed(
    const char* file, int line, const char* condition, const char* format, ...);

}  // namespace accel::detail

// ACCEL_CHECK(cond, "format", args...): aborts with the message when cond is false.
#define ACCEL_CHECK(cond, ...)                                               \
  do {                                                                       \
    if (!(cond)) [[unlikely]]                                                \
      ::accel::detail::check_failed(__FILE__, __LINE__, #cond, __VA_ARGS__); \
  } while (0)

// ACCEL_FAIL("format", args...): a path that must never be reached (e.g. past an exhaustive
// switch).
#define ACCEL_FAIL(...) \
  ::accel::detail::check_failed(__FILE__, __LINE__, "unreachable", __VA_ARGS__)
