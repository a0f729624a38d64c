// RULER's needle-in-a-haystack generator (scripts/data/synthetic/niah.py) for the eight niah_*
// tasks: needle sentences with word/number/uuid keys and values in a noise, essay or needle
// haystack sized to the context in the evaluated model's tokenizer. One call is one run of niah.py
// with --num_samples 1: random.seed(seed), the haystack search, then the sample, so the draws
// follow RULER's order exactly.
//
// One deliberate difference: RULER does not check that draws differ. Here a key equal to an
// earlier needle's key, a value equal to an earlier needle's value, and a distractor (needle
// haystack) whose key or value equals a needle's are drawn again; without such a collision (all
// but a tiny share of samples) the draws and the sample are RULER's.
#pragma once
#include <string>
#include <vector>

#include "suites/ruler_corpus.h"
#include "suites/ruler_tasks.h"

namespace accel::ruler {

struct NiahInputs {
  const std::vector<std::string>* essay = nullptr;  // essay haystack words (Haystack::Essay)
  const WordLists* words = nullptr;                 // keys or values of type words
};

// The 40 needle depths of niah.py: round(linspace(0, 100, 40)).
const std::vector<int>& niah_depths();

// meta: haystack (size), needles (texts in insertion order), keys, values, queries; essay:
// sentences, needle_sentence (sentence index before each needle), depths (sorted); noise/needle:
// needle_line (line index of each needle); answer_char_offset (RULER's overwritten `index`: code
// points before the first answer) and token_position_answer.
RulerRecord generate_niah(const TaskConfig& t, const RulerArgs& a, const NiahInputs& in);

}  // namespace accel::ruler
