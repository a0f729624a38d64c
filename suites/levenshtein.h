// python-Levenshtein 0.12.2's `ratio` over code points: the similarity fuzzywuzzy's fuzz.ratio
// uses when python-Levenshtein is installed. Its distance weighs a substitution 2 (an insertion
// plus a deletion), so it is the indel distance len(a) + len(b) - 2 * LCS(a, b). Computed with a
// bit-parallel LCS in bounded memory; nothing here knows about suites or scoring rules.
#pragma once
#include <cstddef>
#include <string_view>

namespace accel {

// Length of a longest common subsequence of a and b.
size_t lcs_length(std::u32string_view a, std::u32string_view b);
// Levenshtein distance with substitution cost 2 (python-Levenshtein's xcost = 1).
size_t indel_distance(std::u32string_view a, std::u32string_view b);
// Levenshtein.ratio(a, b): (lensum - indel_distance) / lensum in double, as the C extension
// divides; 1.0 when both are empty.
double levenshtein_ratio(std::u32string_view a, std::u32string_view b);

}  // namespace accel
