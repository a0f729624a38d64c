// A small essay-like text for suite tests that read essays through RULER's corpus loader (which
// wants adjectives and nouns to draw keys from): numbered sentences of varying length over ten
// words, with line breaks inside some. Deterministic; no real data needed.
#pragma once
#include <string>

namespace accel::test {

inline std::string fixture_essays(int sentences = 400) {
  const char* words[] = {"remarkable", "foundation", "creative", "engineer", "careful",
                         "attention",  "valuable",   "movement", "founder",  "curious"};
  std::string t;
  for (int i = 0; i < sentences; ++i) {
    t += "Sentence " + std::to_string(i) + " is";
    for (int w = 0; w < 2 + (i * 7) % 9; ++w) t += std::string(" ") + words[(i + w) % 10];
    t += (i % 3 == 0) ? ".\n" : ". ";
  }
  return t;
}

}  // namespace accel::test
