// PldDrafter and its presets (see pld_drafter.h). Sources of each preset, read at the commits of
// specs/methods.md: HF transformers PromptLookupCandidateGenerator.get_candidates; apoorvumang
// README find_candidate_pred_tokens; vLLM v1 _find_longest_matched_ngram_and_propose_tokens;
// llama.cpp common/ngram-map.cpp common_ngram_simple_draft; atveit pld-gemma4-mlx/pld_drafter.py.
#include "methods/pld_drafter.h"

#include <algorithm>
#include <array>
#include <stdexcept>

namespace accel {

namespace {

constexpr int kMaxN = 64;  // n-gram sizes beyond this buy nothing and cost O(n_max) per token
constexpr int kMaxK = 1024;
constexpr uint64_t kSeed = 0x243f6a8885a308d3ull;

// One step of the n-gram hash, fed tokens from the newest backwards so that the hashes of every
// size ending at one position come out of a single pass.
uint64_t mix(uint64_t h, int32_t tok) {
  uint64_t z = h ^ (uint64_t(uint32_t(tok)) * 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

}  // namespace

const std::vector<std::string>& pld_preset_names() {
  static const std::vector<std::string> names = {"hf", "apoorvumang", "vllm_v1", "llamacpp_simple",
                                                 "atveit"};
  return names;
}

PldDrafterConfig pld_preset(const std::string& name) {
  using M = PldMatch;
  using C = PldContinuation;
  using S = PldSelf;
  // HF: n = min(max_matching_ngram_size = 2, len-1)..1, first match with >= 1 continuation token,
  // num_output_tokens (README suggests 10), draft cut at the first EOS.
  if (name == "hf") return {M::First, 2, 1, 10, C::ShortOk, S::ExcludeSelf, true, false};
  // apoorvumang README: n = 3..1, first match with end_idx <= len and start_idx < len - n.
  // (The demo notebook copies min(end, len) tokens and drafts token 100 on no match; the README
  // function, which the spec names, returns exactly k or nothing.)
  if (name == "apoorvumang")
    return {M::First, 3, 1, 10, C::ExactK, S::ExcludeOverlap, false, false};
  // vLLM v1: prompt_lookup_min = max = 5 when neither is set; num_speculative_tokens has no
  // default, 5 is the value of vLLM's n-gram documentation example.
  if (name == "vllm_v1") return {M::Longest, 5, 5, 5, C::ShortOk, S::ExcludeSelf, false, false};
  // llama.cpp ngram-simple: n = --spec-ngram-size-n (12), m = --spec-ngram-size-m (48), backward
  // scan from cur_len - n - 1 down to 1, copy_max = min(m, cur_len - (match + n)) >= n; check_rate
  // 1 (every step). The later --draft-max cap is the caller's k, not the drafter's.
  if (name == "llamacpp_simple")
    return {M::MostRecent, 12, 12, 48, C::AtLeastN, S::ExcludeSelf, false, true};
  // atveit propose(): n = min(4, H-1)..2, right-to-left scan of h[:H-n], up to k = 2 tokens that
  // may run into the current suffix.
  if (name == "atveit") return {M::MostRecent, 4, 2, 2, C::ShortOk, S::ExcludeSelf, false, false};
  std::string known;
  for (const auto& n : pld_preset_names()) known += (known.empty() ? "" : ", ") + n;
  throw std::invalid_argument("unknown PLD preset '" + name + "' (known: " + known + ")");
}

void validate(const PldDrafterConfig& c) {
  auto bad = [](const std::string& what) { throw std::invalid_argument("pld drafter: " + what); };
  if (c.n_min < 1 || c.n_min > kMaxN) bad("n_min must be in [1, 64]");
  if (c.n_max < c.n_min || c.n_max > kMaxN) bad("n_max must be in [n_min, 64]");
  if (c.k < 1 || c.k > kMaxK) bad("k must be in [1, 1024]");
}

std::string to_string(PldMatch m) {
  switch (m) {
    case PldMatch::First:
      return "first";
    case PldMatch::MostRecent:
      return "most_recent";
    case PldMatch::Longest:
      return "longest";
  }
  return "?";
}
std::string to_string(PldContinuation c) {
  switch (c) {
    case PldContinuation::ShortOk:
      return "short_ok";
    case PldContinuation::ExactK:
      return "exact_k";
    case PldContinuation::AtLeastN:
      return "at_least_n";
  }
  return "?";
}
std::string to_string(PldSelf s) {
  switch (s) {
    case PldSelf::Allow:
      return "allow";
    case PldSelf::ExcludeSelf:
      return "exclude_self";
    case PldSelf::ExcludeOverlap:
      return "exclude_overlap";
  }
  return "?";
}

PldDrafter::PldDrafter(PldDrafterConfig cfg, int32_t eos) : cfg_(cfg), eos_(eos) {
  validate(cfg_);
  index_.resize(size_t(cfg_.n_max - cfg_.n_min + 1));
  for (Index& ix : index_) ix.slots.resize(1024);
}

const PldDrafter::Slot* PldDrafter::find(const Index& ix, uint64_t key) const {
  const size_t mask = ix.slots.size() - 1;
  for (size_t i = key & mask;; i = (i + 1) & mask) {
    const Slot& s = ix.slots[i];
    if (s.first < 0) return nullptr;
    if (s.key == key) return &s;
  }
}

void PldDrafter::insert(Index& ix, uint64_t key, int32_t end) {
  if (2 * (ix.used + 1) > ix.slots.size()) {  // keep the load under 1/2: short probe runs
    std::vector<Slot> old(ix.slots.size() * 2);
    old.swap(ix.slots);
    ix.used = 0;
    const size_t mask = ix.slots.size() - 1;
    for (const Slot& s : old) {
      if (s.first < 0) continue;
      size_t i = s.key & mask;
      while (ix.slots[i].first >= 0) i = (i + 1) & mask;
      ix.slots[i] = s;
      ++ix.used;
    }
  }
  const size_t mask = ix.slots.size() - 1;
  size_t i = key & mask;
  while (ix.slots[i].first >= 0 && ix.slots[i].key != key) i = (i + 1) & mask;
  Slot& s = ix.slots[i];
  if (s.first < 0) {
    s = {key, end, end};
    ++ix.used;
    return;
  }
  ix.prev[size_t(end)] = s.last;
  ix.next[size_t(s.last)] = end;
  s.last = end;
}

void PldDrafter::append(std::span<const int32_t> tokens) {
  // Geometric growth: an exact reserve per one-token append would copy the context every step.
  const size_t need = t_.size() + tokens.size();
  auto grow = [need](auto& v) {
    if (v.capacity() < need) v.reserve(std::max(need, 2 * v.capacity()));
  };
  grow(t_);
  for (Index& ix : index_) {
    grow(ix.prev);
    grow(ix.next);
  }
  for (const int32_t tok : tokens) {
    const int32_t end = int32_t(t_.size());
    t_.push_back(tok);
    for (Index& ix : index_) {
      ix.prev.push_back(-1);
      ix.next.push_back(-1);
    }
    const int top = std::min<int>(cfg_.n_max, end + 1);
    uint64_t h = kSeed;
    for (int n = 1; n <= top; ++n) {
      h = mix(h, t_[size_t(end - n + 1)]);
      if (n >= cfg_.n_min) insert(index_[size_t(n - cfg_.n_min)], h, end);
    }
  }
}

bool PldDrafter::window_equals(int32_t end, int n) const {
  const size_t L = t_.size();
  return std::equal(t_.begin() + (end - n + 1), t_.begin() + end + 1,
                    t_.begin() + ptrdiff_t(L) - n);
}

int32_t PldDrafter::choose(int n, uint64_t key, int32_t lo, int32_t hi) const {
  if (lo > hi) return -1;
  const Index& ix = index_[size_t(n - cfg_.n_min)];
  const Slot* s = find(ix, key);
  if (!s) return -1;
  if (cfg_.match == PldMatch::MostRecent) {
    // Walk back from the latest end past those above hi (the trailing n-gram itself and, under
    // ExactK/ExcludeOverlap, the last k or n+1 ends at most) and past hash collisions.
    for (int32_t e = s->last; e >= lo; e = ix.prev[size_t(e)])
      if (e <= hi && window_equals(e, n)) return e;
    return -1;
  }
  // First and Longest (the same occurrence, see PldMatch::Longest): walk forward from the earliest.
  for (int32_t e = s->first; e >= 0 && e <= hi; e = ix.next[size_t(e)])
    if (e >= lo && window_equals(e, n)) return e;
  return -1;
}

void PldDrafter::draft(std::vector<int32_t>& out) const {
  out.clear();
  const int64_t L = int64_t(t_.size());
  const int64_t cend = cfg_.llamacpp_bounds ? L - 1 : L;
  if (L < 2) return;
  if (cfg_.llamacpp_bounds && L - 1 <= int64_t(cfg_.n_max) + cfg_.k + 1) return;
  const int top = int(std::min<int64_t>(cfg_.n_max, L - 1));
  if (top < cfg_.n_min) return;
  std::array<uint64_t, kMaxN + 1> key{};  // key[n]: hash of the trailing n-gram
  uint64_t h = kSeed;
  for (int n = 1; n <= top; ++n) key[size_t(n)] = h = mix(h, t_[size_t(L - n)]);

  for (int n = top; n >= cfg_.n_min; --n) {
    const int64_t lo = n - 1 + (cfg_.llamacpp_bounds ? 1 : 0);
    int64_t hi = L - 1;
    if (cfg_.self == PldSelf::ExcludeSelf) hi = cend - 2;
    if (cfg_.self == PldSelf::ExcludeOverlap) hi = L - n - 2;
    if (cfg_.continuation == PldContinuation::ExactK) hi = std::min(hi, cend - 1 - cfg_.k);
    const int32_t e = choose(n, key[size_t(n)], int32_t(lo), int32_t(std::max<int64_t>(hi, -1)));
    if (e < 0) continue;
    const int64_t c = std::max<int64_t>(0, std::min<int64_t>(cfg_.k, cend - e - 1));
    if (cfg_.continuation == PldContinuation::AtLeastN && c < n) return;
    out.assign(t_.begin() + e + 1, t_.begin() + e + 1 + c);
    if (cfg_.truncate_at_eos && eos_ >= 0)
      out.erase(std::find(out.begin(), out.end(), eos_), out.end());
    return;
  }
}

}  // namespace accel
