// PldDrafter against plain references written here from specs/methods.md §3.1 and the sources it
// cites: one literal port per implementation (HF get_candidates, apoorvumang's README function,
// vLLM v1's KMP, llama.cpp common_ngram_simple_draft, atveit propose) that rescans the whole
// context every call, plus a generic naive drafter for switch combinations no preset uses. They
// share no code with methods/pld_drafter.cpp. Drafts are compared after every appended token of
// hand-worked and random sequences (small alphabets and copied segments, so matches happen).
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "methods/pld_drafter.h"

namespace accel {
namespace {

using Seq = std::vector<int32_t>;

bool window_is(const Seq& t, size_t idx, size_t n, size_t from) {
  for (size_t j = 0; j < n; ++j)
    if (t[idx + j] != t[from + j]) return false;
  return true;
}

// HF PromptLookupCandidateGenerator.get_candidates (max_length unbounded: the budget is the
// method's business). The EOS cut comes after the match is chosen; an empty result is final.
Seq hf_reference(const Seq& ids, int max_ngram, int num_output, int32_t eos) {
  const long L = long(ids.size());
  for (long n = std::min<long>(max_ngram, L - 1); n > 0; --n)
    for (long idx = 0; idx + n <= L; ++idx) {
      if (!window_is(ids, size_t(idx), size_t(n), size_t(L - n))) continue;
      const long start = idx + n, end = std::min(start + num_output, L);
      if (start < end) {
        Seq chosen(ids.begin() + start, ids.begin() + end);
        const auto it = std::find(chosen.begin(), chosen.end(), eos);
        chosen.erase(it, chosen.end());
        return chosen;
      }
    }
  return {};
}

// apoorvumang README find_candidate_pred_tokens. (It raises when max_ngram_size > len; here that
// is "no draft".)
Seq apoorvumang_reference(const Seq& ids, int max_ngram, int num_pred) {
  const long L = long(ids.size());
  if (max_ngram > L) return {};
  for (long n = max_ngram; n > 0; --n)
    for (long idx = 0; idx + n <= L; ++idx) {
      if (!window_is(ids, size_t(idx), size_t(n), size_t(L - n))) continue;
      const long start = idx + n, end = start + num_pred;
      if (end <= L && start < L - n) return Seq(ids.begin() + start, ids.begin() + end);
    }
  return {};
}

// vLLM v1 _find_longest_matched_ngram_and_propose_tokens: KMP over the reversed tokens, lps kept
// for the first max_ngram prefixes, ">=" so the earliest original position wins among equals.
Seq vllm_v1_reference(const Seq& origin, int min_ngram, int max_ngram, int k) {
  const long total = long(origin.size());
  if (total < min_ngram) return {};
  const Seq tokens(origin.rbegin(), origin.rend());
  std::vector<long> lps(size_t(max_ngram), 0);
  long longest = 0, position = 0, prev_lps = 0, i = 1;
  while (i < total) {
    if (tokens[size_t(prev_lps)] == tokens[size_t(i)]) {
      prev_lps += 1;
      if (prev_lps >= longest) {
        longest = prev_lps;
        position = i;
      }
      if (i < max_ngram) lps[size_t(i)] = prev_lps;
      if (prev_lps == max_ngram) prev_lps = lps[size_t(max_ngram - 1)];
      i += 1;
    } else if (prev_lps != 0) {
      prev_lps = lps[size_t(prev_lps - 1)];
    } else {
      i += 1;
    }
  }
  if (longest < min_ngram) return {};
  const long start = total - 1 - position + longest;
  const long kk = std::min<long>(k, total - start);
  return Seq(origin.begin() + start, origin.begin() + start + kk);
}

// llama.cpp common_ngram_simple_draft with check_rate 1: `tokens` is the history, `sampled` the
// newest token (our context is tokens + sampled).
Seq llamacpp_reference(const Seq& context, size_t size_ngram, size_t size_mgram) {
  if (context.empty()) return {};
  const Seq tokens(context.begin(), context.end() - 1);
  const int32_t sampled = context.back();
  const size_t cur_len = tokens.size();
  if (cur_len <= size_ngram + size_mgram + 1) return {};
  Seq pattern(tokens.begin() + long(cur_len - size_ngram + 1), tokens.end());
  pattern.push_back(sampled);
  size_t match_pos = 0;
  for (size_t j = cur_len - size_ngram - 1; j > 0; --j) {
    bool match = true;
    for (size_t q = 0; q < pattern.size(); ++q)
      if (tokens[j + q] != pattern[q]) {
        match = false;
        break;
      }
    if (match) {
      match_pos = j;
      break;
    }
  }
  if (match_pos == 0) return {};
  const size_t copy_max = std::min(size_mgram, cur_len - (match_pos + size_ngram));
  if (copy_max < size_ngram) return {};
  const auto b = tokens.begin() + long(match_pos + size_ngram);
  return Seq(b, b + long(copy_max));
}

// atveit pld_drafter.propose.
Seq atveit_reference(const Seq& h, int k, int n_max, int n_min) {
  const long H = long(h.size());
  if (k <= 0 || H < n_min + 1) return {};
  const long n_max_eff = std::min<long>(n_max, H - 1);
  if (n_max_eff < n_min) return {};
  for (long n = n_max_eff; n >= n_min; --n)
    for (long p = H - n - 1; p >= 0; --p) {
      if (!window_is(h, size_t(p), size_t(n), size_t(H - n))) continue;
      const long start = p + n, end = std::min(start + k, H);
      if (end > start) return Seq(h.begin() + start, h.begin() + end);
      break;  // matched with nothing after it: try a shorter n
    }
  return {};
}

// The generic definition of pld_drafter.h written as a plain rescan: list every allowed
// occurrence of each size, take the front or the back.
Seq generic_reference(const Seq& t, const PldDrafterConfig& c, int32_t eos) {
  const long L = long(t.size());
  if (L < 2) return {};
  const long cend = c.llamacpp_bounds ? L - 1 : L;
  if (c.llamacpp_bounds && L - 1 <= c.n_max + c.k + 1) return {};
  for (long n = std::min<long>(c.n_max, L - 1); n >= c.n_min; --n) {
    std::vector<long> ends;
    for (long e = n - 1; e < L; ++e) {
      const long start = e - n + 1;
      if (c.llamacpp_bounds && start == 0) continue;
      const long after = cend - e - 1;
      if (c.self == PldSelf::ExcludeSelf && after < 1) continue;
      if (c.self == PldSelf::ExcludeOverlap && !(e + 1 < L - n)) continue;
      if (c.continuation == PldContinuation::ExactK && after < c.k) continue;
      if (window_is(t, size_t(start), size_t(n), size_t(L - n))) ends.push_back(e);
    }
    if (ends.empty()) continue;
    const long e = c.match == PldMatch::MostRecent ? ends.back() : ends.front();
    const long copy = std::max<long>(0, std::min<long>(c.k, cend - e - 1));
    if (c.continuation == PldContinuation::AtLeastN && copy < n) return {};
    Seq d(t.begin() + e + 1, t.begin() + e + 1 + copy);
    if (c.truncate_at_eos && eos >= 0) d.erase(std::find(d.begin(), d.end(), eos), d.end());
    return d;
  }
  return {};
}

Seq preset_reference(const std::string& preset, const Seq& t, int32_t eos) {
  if (preset == "hf") return hf_reference(t, 2, 10, eos);
  if (preset == "apoorvumang") return apoorvumang_reference(t, 3, 10);
  if (preset == "vllm_v1") return vllm_v1_reference(t, 5, 5, 5);
  if (preset == "llamacpp_simple") return llamacpp_reference(t, 12, 48);
  return atveit_reference(t, 2, 4, 2);
}

// Drafts of `cfg` after each token of `t` is appended (incremental index).
std::vector<Seq> drafts_along(const PldDrafterConfig& cfg, const Seq& t, int32_t eos) {
  PldDrafter d(cfg, eos);
  std::vector<Seq> out;
  for (int32_t tok : t) {
    d.append(tok);
    out.push_back(d.draft());
  }
  return out;
}

// Random sequences with repeats: tokens from a small alphabet, and now and then a copy of an
// earlier segment (long matches, as text quoting its prompt has), so every preset drafts.
Seq random_sequence(std::mt19937_64& rng, size_t len, int alphabet) {
  Seq t;
  while (t.size() < len) {
    if (t.size() > 8 && rng() % 4 == 0) {
      const size_t from = rng() % t.size(), n = 1 + rng() % 40;
      for (size_t j = 0; j < n && t.size() < len; ++j) t.push_back(t[(from + j) % t.size()]);
    } else {
      t.push_back(int32_t(rng() % uint64_t(alphabet)));
    }
  }
  return t;
}

std::string show(const Seq& s) {
  std::string o = "[";
  for (size_t i = 0; i < s.size(); ++i) {
    if (i > 0) o += ",";
    o += std::to_string(s[i]);
  }
  return o + "]";
}

TEST(PldDrafterHandWorked, AtveitSelfTestsOfItsSource) {
  auto at = [](Seq t, int k) {
    PldDrafterConfig c = pld_preset("atveit");
    c.k = k;
    PldDrafter d(c);
    d.append(t);
    return d.draft();
  };
  EXPECT_EQ(at({1, 2, 3, 4, 5, 1, 2, 3}, 2), (Seq{4, 5}));
  EXPECT_EQ(at({9, 1, 2, 7, 8, 1, 2}, 2), (Seq{7, 8}));  // falls back to n = 2
  EXPECT_EQ(at({10, 20, 30, 40}, 3), Seq{});
  EXPECT_EQ(at({1, 2, 3, 1, 2}, 4), (Seq{3, 1, 2}));  // copy runs into the current suffix
  EXPECT_EQ(at({5}, 2), Seq{});
}

TEST(PldDrafterHandWorked, VllmDocstringExample) {
  // vLLM: [1,2,3,4,2,3], min 2, max 3, k 4: [4,2,3] has no match, [2,3] does -> [4,2,3].
  PldDrafterConfig c = pld_preset("vllm_v1");
  c.n_min = 2, c.n_max = 3, c.k = 4;
  PldDrafter d(c);
  d.append(Seq{1, 2, 3, 4, 2, 3});
  EXPECT_EQ(d.draft(), (Seq{4, 2, 3}));
}

TEST(PldDrafterHandWorked, FirstAndMostRecentCopyFromDifferentOccurrences) {
  // Trailing [1,2] occurs ending at 1 and at 4: first copies [3,1], most recent [4,1].
  const Seq t = {1, 2, 3, 1, 2, 4, 1, 2};
  PldDrafterConfig c = pld_preset("hf");
  c.k = 2;
  PldDrafter first(c);
  first.append(t);
  c.match = PldMatch::MostRecent;
  PldDrafter recent(c);
  recent.append(t);
  EXPECT_EQ(first.draft(), (Seq{3, 1}));
  EXPECT_EQ(recent.draft(), (Seq{4, 1}));
}

TEST(PldDrafterHandWorked, HfEosAtTheStartOfTheCopyMeansNoDraftNotAShorterNgram) {
  // Trailing [5,7] matches at 0; the copy [0,8,5,7] starts with EOS 0 -> empty, and HF does not
  // back off to n = 1 (whose match [7] at 1 would also copy from EOS, so use a 7 elsewhere).
  const Seq t = {5, 7, 0, 8, 7, 9, 5, 7};
  PldDrafter d(pld_preset("hf"), /*eos=*/0);
  d.append(t);
  EXPECT_EQ(d.draft(), Seq{});
  EXPECT_EQ(hf_reference(t, 2, 10, 0), Seq{});
  PldDrafter no_eos(pld_preset("hf"));
  no_eos.append(t);
  EXPECT_EQ(no_eos.draft(), (Seq{0, 8, 7, 9, 5, 7}));
}

TEST(PldDrafterHandWorked, ApoorvumangNeedsExactlyKAndACopyStartingBeforeTheSuffix) {
  PldDrafterConfig c = pld_preset("apoorvumang");
  c.k = 2;
  PldDrafter d(c);
  d.append(Seq{1, 2, 3, 1, 2});
  EXPECT_EQ(d.draft(), (Seq{3, 1}));  // n = 2 at 0: start 2 < 5 - 2, end 4 <= 5
  c.k = 4;
  PldDrafter d4(c);
  d4.append(Seq{1, 2, 3, 1, 2});
  EXPECT_EQ(d4.draft(), Seq{});  // no occurrence has 4 tokens after it
  // Adjacent repeat [1 2][1 2]: the n = 2 occurrence ending at 3 would copy from 4 = L - n, so
  // it is excluded; n = 1 ([2] ending at 0) copies [7].
  c.k = 1;
  PldDrafter adj(c);
  adj.append(Seq{2, 7, 1, 2, 1, 2});
  EXPECT_EQ(adj.draft(), (Seq{7}));
  EXPECT_EQ(apoorvumang_reference({2, 7, 1, 2, 1, 2}, 3, 1), (Seq{7}));
}

TEST(PldDrafterHandWorked, LlamaCppBoundsWithSmallNAndM) {
  PldDrafterConfig c = pld_preset("llamacpp_simple");
  c.n_min = c.n_max = 2;
  c.k = 3;  // m
  auto run = [&](const Seq& t) {
    PldDrafter d(c);
    d.append(t);
    EXPECT_EQ(d.draft(), llamacpp_reference(t, 2, 3)) << show(t);
    return d.draft();
  };
  EXPECT_EQ(run({9, 1, 2, 5, 6, 7, 8, 1, 2}), (Seq{5, 6, 7}));
  EXPECT_EQ(run({1, 2, 5, 6, 7, 8, 9, 1, 2}), Seq{});  // the only match starts at 0
  // Copy stops before the newest token: [3,1], not [3,1,2].
  EXPECT_EQ(run({9, 9, 9, 9, 9, 1, 2, 3, 1, 2}), (Seq{3, 1}));
  // Most recent match at 6 leaves 1 < n tokens to copy: no draft, and the match at 1 (3 tokens
  // to copy) is not tried.
  EXPECT_EQ(run({9, 1, 2, 9, 9, 9, 1, 2, 1, 2}), Seq{});
  EXPECT_EQ(run({9, 1, 2, 5, 6, 1, 2}), Seq{});  // cur_len 6 <= n + m + 1
}

TEST(PldDrafterHandWorked, AllowingTheSelfMatchLeavesOnlyTheSuffixUnderMostRecent) {
  PldDrafterConfig c = pld_preset("atveit");
  c.self = PldSelf::Allow;
  PldDrafter d(c);
  d.append(Seq{1, 2, 3, 4, 5, 1, 2, 3});
  EXPECT_EQ(d.draft(), Seq{});  // the pitfall of specs §3.5
}

TEST(PldDrafterPresets, EveryPresetMatchesItsLiteralPortOnRandomSequences) {
  // 600 sequences x up to 160 tokens, drafts compared after every token: ~10^5 drafts a preset.
  std::mt19937_64 rng(10);
  for (const std::string& preset : pld_preset_names()) {
    size_t drafted = 0, calls = 0;
    for (int s = 0; s < 600; ++s) {
      const int alphabet = 2 + int(rng() % 6);
      const Seq t = random_sequence(rng, 1 + rng() % 160, alphabet);
      const int32_t eos = int32_t(rng() % uint64_t(alphabet));
      const auto got = drafts_along(pld_preset(preset), t, eos);
      for (size_t i = 0; i < t.size(); ++i) {
        const Seq prefix(t.begin(), t.begin() + long(i) + 1);
        const Seq want = preset_reference(preset, prefix, eos);
        ASSERT_EQ(got[i], want) << preset << " context " << show(prefix) << " eos " << eos;
        drafted += !want.empty();
        ++calls;
      }
    }
    // Non-vacuous: every preset drafted on a good share of the contexts.
    EXPECT_GT(drafted, calls / 20) << preset << ": " << drafted << " of " << calls;
  }
}

PldDrafterConfig random_config(std::mt19937_64& rng) {
  PldDrafterConfig c;
  c.match = PldMatch(rng() % 3);
  c.n_min = 1 + int(rng() % 4);
  c.n_max = c.n_min + int(rng() % 4);
  c.k = 1 + int(rng() % 16);
  c.continuation = PldContinuation(rng() % 3);
  c.self = PldSelf(rng() % 3);
  c.truncate_at_eos = rng() % 2;
  c.llamacpp_bounds = rng() % 4 == 0;
  return c;
}

TEST(PldDrafterSwitches, EverySwitchCombinationMatchesTheGenericRescan) {
  std::mt19937_64 rng(11);
  for (int s = 0; s < 1500; ++s) {
    const PldDrafterConfig c = random_config(rng);
    const int alphabet = 2 + int(rng() % 5);
    const Seq t = random_sequence(rng, 1 + rng() % 120, alphabet);
    const int32_t eos = int32_t(rng() % uint64_t(alphabet));
    const auto got = drafts_along(c, t, eos);
    for (size_t i = 0; i < t.size(); ++i) {
      const Seq prefix(t.begin(), t.begin() + long(i) + 1);
      ASSERT_EQ(got[i], generic_reference(prefix, c, eos))
          << "case " << s << " match " << to_string(c.match) << " n " << c.n_max << "->" << c.n_min
          << " k " << c.k << " " << to_string(c.continuation) << " " << to_string(c.self)
          << " eos_cut " << c.truncate_at_eos << " llamacpp " << c.llamacpp_bounds << " context "
          << show(prefix);
    }
  }
}

TEST(PldDrafterSwitches, MatchRulesDifferExceptLongestWhichEqualsFirst) {
  // First vs most recent (and longest vs most recent) must disagree on some contexts; longest
  // must agree with first everywhere (pld_drafter.h explains why), which the vLLM port confirms.
  std::mt19937_64 rng(12);
  size_t first_vs_recent = 0, longest_vs_recent = 0, contexts = 0;
  for (int s = 0; s < 400; ++s) {
    PldDrafterConfig c = pld_preset("hf");
    c.n_min = 1 + int(rng() % 3);
    c.n_max = c.n_min + int(rng() % 3);
    c.k = 1 + int(rng() % 8);
    const Seq t = random_sequence(rng, 2 + rng() % 120, 2 + int(rng() % 4));
    c.match = PldMatch::First;
    const auto first = drafts_along(c, t, -1);
    c.match = PldMatch::MostRecent;
    const auto recent = drafts_along(c, t, -1);
    c.match = PldMatch::Longest;
    const auto longest = drafts_along(c, t, -1);
    for (size_t i = 0; i < t.size(); ++i) {
      ASSERT_EQ(longest[i], first[i]);
      const Seq prefix(t.begin(), t.begin() + long(i) + 1);
      ASSERT_EQ(longest[i], vllm_v1_reference(prefix, c.n_min, c.n_max, c.k)) << show(prefix);
      first_vs_recent += first[i] != recent[i];
      longest_vs_recent += longest[i] != recent[i];
      ++contexts;
    }
  }
  EXPECT_GT(first_vs_recent, contexts / 20) << first_vs_recent << " of " << contexts;
  EXPECT_GT(longest_vs_recent, contexts / 20) << longest_vs_recent << " of " << contexts;
}

TEST(PldDrafterConfig, OutOfRangeSwitchesAreRefusedByName) {
  PldDrafterConfig c;
  c.n_min = 0;
  EXPECT_THROW(PldDrafter{c}, std::invalid_argument);
  c = PldDrafterConfig{};
  c.n_max = 0;
  EXPECT_THROW(validate(c), std::invalid_argument);
  c = PldDrafterConfig{};
  c.k = 0;
  EXPECT_THROW(validate(c), std::invalid_argument);
  EXPECT_THROW(pld_preset("nope"), std::invalid_argument);
}

}  // namespace
}  // namespace accel
