// RULER's metrics (ruler_metrics.h).
#include "suites/ruler_metrics.h"

#include <charconv>
#include <cmath>
#include <stdexcept>

#include "suites/python_text.h"
#include "suites/ruler_text.h"

namespace accel::ruler {

std::string postprocess_pred(std::string_view pred) {
  const std::string text = pytext::utf8_sanitize(pred);
  std::string s(py_strip(text));
  for (char& c : s)
    if (uint8_t(c) <= 0x1f) c = '\n';
  return std::string(py_strip(s));
}

namespace {

void check(const std::vector<std::string>& refs) {
  if (refs.empty()) throw std::invalid_argument("ruler metrics: a sample has no reference");
}

std::vector<double> per_sample(const std::vector<std::string>& preds,
                               const std::vector<std::vector<std::string>>& refs, bool all) {
  if (preds.size() != refs.size() || preds.empty())
    throw std::invalid_argument("ruler metrics: need as many references as predictions (>= 1)");
  std::vector<double> v;
  for (size_t i = 0; i < preds.size(); ++i)
    v.push_back(all ? match_all(preds[i], refs[i]) : match_part(preds[i], refs[i]));
  return v;
}

double task_score(const std::vector<double>& v) {
  double sum = 0;
  for (double x : v) sum += x;
  return py_round(sum / double(v.size()) * 100, 2);
}

}  // namespace

double match_all(std::string_view pred, const std::vector<std::string>& refs) {
  check(refs);
  const std::string p = pytext::py_lower(pred);
  double hits = 0;
  for (const auto& r : refs)
    hits += p.find(pytext::py_lower(pytext::utf8_sanitize(r))) != std::string::npos ? 1.0 : 0.0;
  return hits / double(refs.size());
}

double match_part(std::string_view pred, const std::vector<std::string>& refs) {
  check(refs);
  const std::string p = pytext::py_lower(pred);
  for (const auto& r : refs)
    if (p.find(pytext::py_lower(pytext::utf8_sanitize(r))) != std::string::npos) return 1.0;
  return 0.0;
}

double string_match_all(const std::vector<std::string>& preds,
                        const std::vector<std::vector<std::string>>& refs) {
  return task_score(per_sample(preds, refs, true));
}

double string_match_part(const std::vector<std::string>& preds,
                         const std::vector<std::vector<std::string>>& refs) {
  return task_score(per_sample(preds, refs, false));
}

double py_round(double x, int ndigits) {
  if (!std::isfinite(x)) return x;
  // The exact binary value rounded half-to-even to `ndigits` decimals (to_chars is exact), read
  // back to the nearest double: what CPython's float.__round__ computes with _Py_dg_dtoa.
  char buf[512];
  const auto res = std::to_chars(buf, buf + sizeof buf, x, std::chars_format::fixed, ndigits);
  double out = 0;
  std::from_chars(buf, res.ptr, out);
  return out;
}

}  // namespace accel::ruler
