// The Prompt Lookup Decoding drafter: over the committed token sequence (prompt + generated), it
// finds an earlier occurrence of the sequence's trailing n-gram and proposes the tokens that
// followed it, with one switch per way the public implementations differ (specs/methods.md §3.1)
// and presets reproducing each. Owns the n-gram index only; knows nothing of models, caches or
// verification (pld.h does that), and never rescans the whole context per step.
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace accel {

// Definitions every switch refers to. Context t[0..L). An occurrence of size n ends at e when
// t[e-n+1..e] == t[L-n..L-1] (the trailing n-gram); the trailing n-gram itself is the occurrence
// e = L-1. Tokens are copied from t[e+1..cend), where cend = L, or L-1 under llamacpp_bounds;
// a(e) = cend - e - 1 is how many tokens follow the occurrence.
//
// Drafting: for n = min(n_max, L-1) down to n_min, collect the occurrences of size n allowed by
// `self` and `continuation` and starting at index >= (llamacpp_bounds ? 1 : 0). The first n that
// has any is used: choose one by `match`, copy c = min(k, a(e)) tokens, and that is the draft,
// after the post-selection rules (AtLeastN, truncate_at_eos). A post-selection rule that empties
// the draft ends the search (no back-off to a shorter n): HF and llama.cpp behave so.
enum class PldMatch {
  First,       // earliest occurrence (HF, apoorvumang)
  MostRecent,  // latest occurrence (llama.cpp ngram-simple, atveit)
  // vLLM v1: the longest suffix match with length in [n_min, n_max] (capped at n_max), earliest
  // among equally long. This selects the same occurrence as First: the largest n that has an
  // occurrence is the longest capped match length, and the earliest occurrence of that size is
  // the earliest among equally long. Kept as its own name so results record which rule was meant.
  Longest,
};

enum class PldContinuation {
  ShortOk,   // a(e) >= 1 suffices; copy min(k, a(e)) (HF, vLLM, atveit)
  ExactK,    // occurrences with a(e) < k are skipped: exactly k tokens (apoorvumang README)
  AtLeastN,  // after choosing, no draft if fewer than n tokens can be copied (llama.cpp)
};

enum class PldSelf {
  Allow,        // the trailing n-gram may match itself (a naive search: when it is chosen the
                // draft is empty, the pitfall of specs §3.5)
  ExcludeSelf,  // only occurrences with a(e) >= 1 (HF, vLLM, atveit, llama.cpp)
  // The continuation must start before the trailing n-gram: e + 1 < L - n (apoorvumang's
  // `start_idx < input_length - ngram_size`, "avoid self-match").
  ExcludeOverlap,
};

struct PldDrafterConfig {
  PldMatch match = PldMatch::First;
  int n_max = 2, n_min = 1;  // n-gram sizes, tried longest first; 1 <= n_min <= n_max
  int k = 10;                // most tokens drafted (llama.cpp: m)
  PldContinuation continuation = PldContinuation::ShortOk;
  PldSelf self = PldSelf::ExcludeSelf;
  bool truncate_at_eos = false;  // HF: cut the draft before its first EOS (an empty result ends)
  // llama.cpp ngram-simple's bounds: position 0 never matches, the newest token is never copied
  // (cend = L-1: it searches `tokens` and appends the sampled token only to the pattern), and no
  // draft unless L-1 > n_max + k + 1 (`cur_len <= n + m + 1` returns empty).
  bool llamacpp_bounds = false;
};

// Presets: hf, apoorvumang, vllm_v1, llamacpp_simple, atveit (see pld_drafter.cpp for sources).
const std::vector<std::string>& pld_preset_names();
PldDrafterConfig pld_preset(const std::string& name);  // throws std::invalid_argument
// Throws std::invalid_argument naming the field when a config is out of range.
void validate(const PldDrafterConfig& c);

std::string to_string(PldMatch m);
std::string to_string(PldContinuation c);
std::string to_string(PldSelf s);

// The incremental drafter. append() indexes every window of sizes n_min..n_max that ends at a new
// token; draft() looks the trailing n-grams up. Index: per n, a hash table from the n-gram's hash
// to its earliest and latest end, and per end the previous and next end with the same hash (a
// doubly linked chain in position order); candidates are verified token by token, so a hash
// collision costs time, never a wrong draft.
// Cost: append O(n_max) per token (one backward hash pass, one table insert per n); draft
// O(sum over n of (n + steps)) where steps walks the chain from its first or last entry past
// occurrences outside the allowed range (at most ~ k + n + 1 of them for MostRecent, 1 for First)
// and past hash collisions; nothing is proportional to L. Memory O(L * (n_max - n_min + 1)).
class PldDrafter {
 public:
  explicit PldDrafter(PldDrafterConfig cfg, int32_t eos = -1);

  void append(std::span<const int32_t> tokens);
  void append(int32_t token) { append({&token, 1}); }

  // The draft for the current context (possibly empty), written into `out` (cleared first).
  void draft(std::vector<int32_t>& out) const;
  std::vector<int32_t> draft() const {
    std::vector<int32_t> d;
    draft(d);
    return d;
  }

  const std::vector<int32_t>& tokens() const { return t_; }
  const PldDrafterConfig& config() const { return cfg_; }

 private:
  // Open-addressing table: n-gram hash -> earliest and latest end position of that hash.
  struct Slot {
    uint64_t key = 0;
    int32_t first = -1, last = -1;  // first == -1: empty slot
  };
  struct Index {
    std::vector<Slot> slots;  // power-of-two size
    size_t used = 0;
    std::vector<int32_t> prev, next;  // [L] same-hash chain by end position; -1 = none
  };
  void insert(Index& ix, uint64_t key, int32_t end);
  const Slot* find(const Index& ix, uint64_t key) const;
  bool window_equals(int32_t end, int n) const;  // t[end-n+1..end] == trailing n-gram
  // The chosen end for size n within [lo, hi], or -1.
  int32_t choose(int n, uint64_t key, int32_t lo, int32_t hi) const;

  PldDrafterConfig cfg_;
  int32_t eos_;
  std::vector<int32_t> t_;
  std::vector<Index> index_;  // [n - n_min]
};

}  // namespace accel
