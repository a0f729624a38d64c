// Bit-parallel LCS (levenshtein.h): one bit per code point of the longer string ("pattern"), one
// pass over the shorter string per chunk of 4096 pattern code points, so memory stays bounded
// (the chunk's masks, at most 2 MiB, and one carry byte per code point of the shorter string)
// however long the lines are. Time: len(short) * ceil(len(long) / 64) word steps.
#include "suites/levenshtein.h"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <vector>

namespace accel {

namespace {

constexpr size_t kChunkWords = 64;
constexpr size_t kChunkChars = 64 * kChunkWords;

// For each distinct code point of one chunk of the pattern, the bit mask of where it occurs.
class ChunkMasks {
 public:
  explicit ChunkMasks(std::u32string_view chunk) : words_((chunk.size() + 63) / 64) {
    std::fill(std::begin(ascii_), std::end(ascii_), -1);
    for (char32_t c : chunk)
      if (c >= 0x80) other_.push_back(c);
    std::sort(other_.begin(), other_.end());
    other_.erase(std::unique(other_.begin(), other_.end()), other_.end());
    size_t n = other_.size();
    for (char32_t c : chunk)
      if (c < 0x80 && ascii_[c] < 0) ascii_[c] = int32_t(n++);
    masks_.assign(n * words_, 0);
    for (size_t j = 0; j < chunk.size(); ++j)
      masks_[index(chunk[j]) * words_ + j / 64] |= uint64_t(1) << (j % 64);
  }
  size_t words() const { return words_; }
  // The mask of c, or nullptr when c does not occur in the chunk.
  const uint64_t* find(char32_t c) const {
    if (c < 0x80) return ascii_[c] < 0 ? nullptr : &masks_[size_t(ascii_[c]) * words_];
    const auto it = std::lower_bound(other_.begin(), other_.end(), c);
    if (it == other_.end() || *it != c) return nullptr;
    return &masks_[size_t(it - other_.begin()) * words_];
  }

 private:
  size_t index(char32_t c) const {
    if (c < 0x80) return size_t(ascii_[c]);
    return size_t(std::lower_bound(other_.begin(), other_.end(), c) - other_.begin());
  }
  size_t words_;
  int32_t ascii_[0x80];
  std::vector<char32_t> other_;  // sorted distinct code points >= 0x80; their index is their rank
  std::vector<uint64_t> masks_;
};

// Hyyrö's LCS recurrence V' = (V + (V & M[c])) | (V & ~M[c]) on one chunk's words, the addition's
// carry entering from the chunk below (per row of `text`) and leaving for the chunk above.
// Returns the LCS of `text` and the chunk: the zero bits of V after the last row.
size_t lcs_chunk(std::u32string_view text, std::u32string_view chunk, std::vector<uint8_t>& carry) {
  static const uint64_t kNone[kChunkWords] = {};
  const ChunkMasks masks(chunk);
  const size_t w = masks.words();
  std::vector<uint64_t> v(w, ~uint64_t(0));
  for (size_t i = 0; i < text.size(); ++i) {
    const uint64_t* m = masks.find(text[i]);
    if (!m) m = kNone;
    uint64_t c = carry[i];
    for (size_t k = 0; k < w; ++k) {
      const uint64_t u = v[k] & m[k];
      const uint64_t s1 = v[k] + u;
      const uint64_t s2 = s1 + c;
      c = uint64_t(s1 < u) | uint64_t(s2 < s1);
      v[k] = s2 | (v[k] & ~m[k]);
    }
    carry[i] = uint8_t(c);
  }
  size_t ones = 0;
  for (size_t k = 0; k + 1 < w; ++k) ones += size_t(std::popcount(v[k]));
  const size_t tail = chunk.size() - 64 * (w - 1);
  const uint64_t valid = tail == 64 ? ~uint64_t(0) : (uint64_t(1) << tail) - 1;
  ones += size_t(std::popcount(v[w - 1] & valid));
  return chunk.size() - ones;
}

}  // namespace

size_t lcs_length(std::u32string_view a, std::u32string_view b) {
  // A common prefix or suffix is part of some longest common subsequence.
  size_t same = 0;
  while (!a.empty() && !b.empty() && a.front() == b.front()) {
    a.remove_prefix(1), b.remove_prefix(1), ++same;
  }
  while (!a.empty() && !b.empty() && a.back() == b.back()) {
    a.remove_suffix(1), b.remove_suffix(1), ++same;
  }
  if (a.empty() || b.empty()) return same;
  if (a.size() > b.size()) std::swap(a, b);  // the longer string is the bit pattern
  std::vector<uint8_t> carry(a.size(), 0);
  for (size_t at = 0; at < b.size(); at += kChunkChars)
    same += lcs_chunk(a, b.substr(at, kChunkChars), carry);
  return same;
}

size_t indel_distance(std::u32string_view a, std::u32string_view b) {
  return a.size() + b.size() - 2 * lcs_length(a, b);
}

double levenshtein_ratio(std::u32string_view a, std::u32string_view b) {
  const size_t lensum = a.size() + b.size();
  if (lensum == 0) return 1.0;
  return double(lensum - indel_distance(a, b)) / double(lensum);
}

}  // namespace accel
