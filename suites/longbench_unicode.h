// LongBench's names for Python's str semantics: the one implementation is python_text.h. This
// header only brings those names into accel::longbench, where the metrics call them unqualified;
// it must not define anything of its own.
#pragma once
#include "suites/python_text.h"

namespace accel::longbench {

using pytext::py_isdecimal;
using pytext::py_isspace;
using pytext::py_isword;
using pytext::py_lower;
using pytext::U32;
using pytext::utf8_decode_lossy;
using pytext::utf8_encode;
using pytext::utf8_invalid_at;
using pytext::utf8_sanitize;

}  // namespace accel::longbench
