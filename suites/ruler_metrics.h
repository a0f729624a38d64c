// RULER's scoring (scripts/eval/evaluate.py postprocess_pred and
// scripts/eval/synthetic/constants.py string_match_all / string_match_part), exactly: the
// prediction is stripped, every character in [\x00-\x1f] becomes '\n', it is stripped again, and a
// reference matches when its str.lower() is a substring of the prediction's str.lower(). Nothing
// else is normalized (no punctuation or article removal).
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace accel::ruler {

// Invalid UTF-8 in `pred` (a model's raw bytes) is first replaced as bytes.decode("utf-8",
// "replace") does, which is what a Python client receives.
std::string postprocess_pred(std::string_view pred);

// One sample: the fraction of references found (string_match_all's term) and whether any is
// (string_match_part's). `pred` as postprocess_pred returns it; references must not be empty.
double match_all(std::string_view pred, const std::vector<std::string>& refs);
double match_part(std::string_view pred, const std::vector<std::string>& refs);

// The task scores: round(sum(per-sample) / len(preds) * 100, 2), summed left to right as
// Python's sum() does for floats up to 3.11 (3.12's sum() compensates; the last digit can differ).
double string_match_all(const std::vector<std::string>& preds,
                        const std::vector<std::vector<std::string>>& refs);
double string_match_part(const std::vector<std::string>& preds,
                         const std::vector<std::vector<std::string>>& refs);

double py_round(double x, int ndigits);  // Python's round(x, ndigits): correctly rounded

}  // namespace accel::ruler
