// RULER's other synthetic generators, each one run with --num_samples 1 (random.seed and
// np.random.seed to the run's seed, then the script's draws in its order):
//  - variable tracking (variable_tracking.py): a 5-variable chain in the noise haystack, after a
//    one-shot example built first at 500 tokens and re-randomized;
//  - common words extraction (common_words_extraction.py): a numbered word list in which 10 words
//    repeat 30 times (6 below 4K) and the rest 3 times (1), after one example;
//  - frequent words extraction (freq_words_extraction.py): random 6-letter words with zeta(2)
//    frequencies, the most frequent one replaced by "...". Its sizing is RULER's linear search
//    (grow by a 32nd of the budget, then shrink), not the binary search of the others.
// Where RULER's script loops forever (a context too short for its smallest haystack), ours throws;
// vt's one-shot example, which RULER must fit in 500 tokens, is kept at its smallest (5 noise
// lines) when even that is longer, as it is in a byte-level tokenizer.
#pragma once
#include "suites/ruler_corpus.h"
#include "suites/ruler_tasks.h"

namespace accel::ruler {

// meta: noise (lines), chain (the chain lines), icl (the randomized example).
RulerRecord generate_vt(const TaskConfig& t, const RulerArgs& a);
// meta: words (distinct words in the list), list_source ("essay words" or the key fallback).
RulerRecord generate_cwe(const TaskConfig& t, const RulerArgs& a, const WordLists& words);
// meta: words (tokens of coded text), vocab_size.
RulerRecord generate_fwe(const TaskConfig& t, const RulerArgs& a);

// scipy.special.zeta(2.0) = pi^2 / 6, the double nearest to it.
inline constexpr double kZeta2 = 1.6449340668482264;

}  // namespace accel::ruler
