// A compiled PCRE2 pattern for tests that check printed text (reports, prompts, environment).
// Replaces std::regex in the test programs (tests/architecture, which links nothing of ours, keeps
// it): libstdc++'s <regex> costs ~30 s of compile time per file under the sanitizer build, and
// PCRE2 is already a dependency (the tokenizers' pre-tokenizers). Owns matching only; what the
// match means stays in each test.
#pragma once
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace accel::test {

// One match: the whole match as [begin, end) byte offsets and the capture groups' text
// (groups[0] is group 1; a group that did not participate is empty).
struct PatternMatch {
  size_t begin = 0;
  size_t end = 0;
  std::vector<std::string> groups;
};

class Pattern {
 public:
  // Throws std::invalid_argument naming the pattern and PCRE2's message when it does not compile.
  explicit Pattern(std::string_view pattern);
  ~Pattern();
  Pattern(Pattern&&) noexcept;
  Pattern& operator=(Pattern&&) noexcept;

  // The whole subject matches (as std::regex_match).
  bool full_match(std::string_view subject) const;
  // The first match anywhere in the subject (as std::regex_search).
  std::optional<PatternMatch> search(std::string_view subject) const;
  // A match that starts exactly at `offset` (as regex_search with match_continuous).
  std::optional<PatternMatch> match_at(std::string_view subject, size_t offset) const;
  // Every non-overlapping match, left to right (as std::sregex_iterator, except that after an empty
  // match the search simply resumes one byte later).
  std::vector<PatternMatch> find_all(std::string_view subject) const;

 private:
  std::optional<PatternMatch> match(std::string_view subject, size_t offset,
                                    unsigned options) const;
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace accel::test
