// The pieces of SpecPrefill's pflash mode (methods.md §1.3, column "LB pflash") that are not
// scoring or chunk selection: n-gram anchor chunks, pre-RoPE recovery of captured queries/keys,
// and moving a kept token selection between tokenizers. Pure functions over plain arrays and
// tokenizers: no forward pass, cache or timing here (methods/specprefill.cpp orchestrates).
#pragma once
#include <cstdint>
#include <span>
#include <vector>

#include "kernels/elementwise.h"
#include "models/tokenizer.h"

namespace accel::specprefill {

// pflash's n-gram anchors around repeats of the final-query n-grams. Our exact rule (the spec
// gives only the phrase): the "final query" is the last min(window, n) tokens; every n-gram
// starting inside it (starts n - window .. n - ngram) is a query n-gram; an earlier occurrence is
// a start p with tokens[p, p + ngram) equal to a query n-gram and lying wholly before the final
// query (p + ngram <= n - window); every chunk holding a token of such an occurrence is an
// anchor. Returns ascending unique chunk indices. ngram < 1 or window < ngram gives {}.
std::vector<int32_t> ngram_anchor_chunks(std::span<const int32_t> tokens, int chunk, int ngram,
                                         int window);

// Undoes RoPE in place: rows were rotated at pos[r] by rope(..., p); rotating by -pos[r] and
// dividing out the magnitude factor (YaRN's mscale, applied once by each rotation) gives the
// pre-RoPE rows up to float rounding. Same layout arguments as rope().
void unrotate_rope(float* x, size_t n_rows, size_t ld, int n_heads, const int32_t* pos,
                   const RopeParams& p);

// Text through `from` and back through `to`: to.encode(from.decode(ids), add_special, false).
// Control tokens (BOS/EOS) decode to nothing; add_special lets `to` add its own.
std::vector<int32_t> retokenize(const Tokenizer& from, const Tokenizer& to,
                                std::span<const int32_t> ids, bool add_special);

}  // namespace accel::specprefill
