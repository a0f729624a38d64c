// fuzz.ratio with a chosen backend (fuzz_ratio.h).
#include "suites/fuzz_ratio.h"

#include <cmath>
#include <stdexcept>

#include "suites/levenshtein.h"
#include "suites/sequence_matcher.h"

namespace accel {

const char* fuzz_backend_name(FuzzBackend b) {
  return b == FuzzBackend::Levenshtein ? "levenshtein" : "difflib";
}

FuzzBackend parse_fuzz_backend(std::string_view name) {
  if (name == "difflib") return FuzzBackend::Difflib;
  if (name == "levenshtein") return FuzzBackend::Levenshtein;
  throw std::invalid_argument("fuzz backend '" + std::string(name) +
                              "' is unknown (known: difflib, levenshtein)");
}

double py_round(double x) {
  double r = std::round(x);  // halves away from zero
  if (std::fabs(x - r) == 0.5) r = 2.0 * std::round(x / 2.0);
  return r;
}

int fuzz_ratio(std::u32string_view s1, std::u32string_view s2, FuzzBackend backend) {
  if (s1 == s2) return 100;
  if (s1.empty() || s2.empty()) return 0;
  const double r = backend == FuzzBackend::Levenshtein ? levenshtein_ratio(s1, s2)
                                                       : SequenceMatcher(s1, s2).ratio();
  return int(py_round(100.0 * r));
}

}  // namespace accel
