// fuzzywuzzy 0.18.0's fuzz.ratio over code points, with either of its two backends: difflib's
// SequenceMatcher (sequence_matcher.h; what fuzzywuzzy falls back to without python-Levenshtein,
// LongBench's official setup) or python-Levenshtein 0.12.2's ratio (levenshtein.h; what it uses
// when that package is installed). Only the similarity; which lines are compared is the caller's.
#pragma once
#include <string>
#include <string_view>

namespace accel {

enum class FuzzBackend { Difflib, Levenshtein };

// "difflib" / "levenshtein", the names of the LongBench suite's `fuzz` parameter.
const char* fuzz_backend_name(FuzzBackend b);
// The inverse; throws std::invalid_argument naming the known backends.
FuzzBackend parse_fuzz_backend(std::string_view name);

// fuzz.ratio(s1, s2): its decorators first (check_for_none, then check_for_equivalence: 100 when
// the strings are equal, two empty strings included, then check_empty_string: 0 when either is
// empty), else utils.intr(100 * ratio) = int(round(...)) with Python's round-half-even on the
// double product.
int fuzz_ratio(std::u32string_view s1, std::u32string_view s2,
               FuzzBackend backend = FuzzBackend::Difflib);

// Python's round(x) for a float: nearest integer, ties to even.
double py_round(double x);

}  // namespace accel
