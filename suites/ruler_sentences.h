// Sentence splitting for RULER's essay haystack, in place of nltk's sent_tokenize (Punkt with
// its trained English parameters, which is not available offline). Owns the splitting rule only.
//
// The rule, close to Punkt's decisions on edited prose: a whitespace-separated token ends a
// sentence when it ends in '.', '?' or '!' (optionally followed by closing quotes or brackets)
// and another token follows, except
//  - a '.' after a known abbreviation (Mr, Dr, etc, e.g, i.e, U.S, month names, ...), after a
//    single letter (an initial) or after dotted letters (a.m.);
//  - an ellipsis ("..") or a number ending in '.' followed by a word starting in lowercase.
// Sentences are returned as views of the input with their inner whitespace kept, as Punkt's spans
// are; the whitespace between sentences is not part of either.
#pragma once
#include <string_view>
#include <vector>

namespace accel::ruler {

std::vector<std::string_view> split_sentences(std::string_view text);

}  // namespace accel::ruler
