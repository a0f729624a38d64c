// PCRE2 behind accel::test::Pattern (see pattern.h). UTF mode is off: the tests match ASCII
// structure in byte strings, and offsets are bytes.
#include "tests/support/pattern.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <memory>
#include <new>
#include <stdexcept>

namespace accel::test {

struct Pattern::Impl {
  std::string source;
  pcre2_code* code = nullptr;
  ~Impl() { pcre2_code_free(code); }
};

Pattern::Pattern(std::string_view pattern) : impl_(std::make_unique<Impl>()) {
  impl_->source = std::string(pattern);
  int error = 0;
  PCRE2_SIZE error_offset = 0;
  impl_->code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(), 0,
                              &error, &error_offset, nullptr);
  if (impl_->code == nullptr) {
    PCRE2_UCHAR message[256];
    pcre2_get_error_message(error, message, sizeof message);
    throw std::invalid_argument("pattern '" + impl_->source + "' does not compile at offset " +
                                std::to_string(error_offset) + ": " +
                                reinterpret_cast<const char*>(message));
  }
}

Pattern::~Pattern() = default;
Pattern::Pattern(Pattern&&) noexcept = default;
Pattern& Pattern::operator=(Pattern&&) noexcept = default;

std::optional<PatternMatch> Pattern::match(std::string_view subject, size_t offset,
                                           unsigned options) const {
  const std::unique_ptr<pcre2_match_data, decltype(&pcre2_match_data_free)> data(
      pcre2_match_data_create_from_pattern(impl_->code, nullptr), &pcre2_match_data_free);
  if (!data) throw std::bad_alloc();
  const int rc = pcre2_match(impl_->code, reinterpret_cast<PCRE2_SPTR>(subject.data()),
                             subject.size(), offset, options, data.get(), nullptr);
  if (rc == PCRE2_ERROR_NOMATCH) return std::nullopt;
  if (rc <= 0)
    throw std::runtime_error("pattern '" + impl_->source + "': pcre2_match failed with code " +
                             std::to_string(rc));
  const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(data.get());
  PatternMatch m{ov[0], ov[1], {}};
  const uint32_t pairs = pcre2_get_ovector_count(data.get());
  for (uint32_t g = 1; g < pairs; ++g) {
    const bool set = int(g) < rc && ov[2 * g] != PCRE2_UNSET;
    m.groups.push_back(set ? std::string(subject.substr(ov[2 * g], ov[2 * g + 1] - ov[2 * g]))
                           : std::string());
  }
  return m;
}

bool Pattern::full_match(std::string_view subject) const {
  const auto m = match(subject, 0, PCRE2_ANCHORED | PCRE2_ENDANCHORED);
  return m.has_value();
}

std::optional<PatternMatch> Pattern::search(std::string_view subject) const {
  return match(subject, 0, 0);
}

std::optional<PatternMatch> Pattern::match_at(std::string_view subject, size_t offset) const {
  if (offset > subject.size()) return std::nullopt;
  return match(subject, offset, PCRE2_ANCHORED);
}

std::vector<PatternMatch> Pattern::find_all(std::string_view subject) const {
  std::vector<PatternMatch> out;
  size_t at = 0;
  while (at <= subject.size()) {
    auto m = match(subject, at, 0);
    if (!m) break;
    // After an empty match the search resumes one byte later (simpler than sregex_iterator, which
    // first retries a non-empty match at the same place; no test pattern here matches empty).
    at = m->end > m->begin ? m->end : m->end + 1;
    out.push_back(std::move(*m));
  }
  return out;
}

}  // namespace accel::test
