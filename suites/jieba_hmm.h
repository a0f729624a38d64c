// jieba 0.42.1's finalseg HMM tables (jieba/finalseg/prob_start.py, prob_trans.py, prob_emit.py:
// log probabilities of the B/M/E/S word-position states), checked and held for Viterbi. Owns
// loading; it must not segment (jieba_finalseg.h runs the Viterbi cut on these tables).
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "suites/jieba_error.h"

namespace accel::jieba {

// finalseg.MIN_FLOAT: the log probability Viterbi uses for anything a table lacks.
constexpr double kMinFloat = -3.14e100;

// The states, numbered in the order Python's max() breaks ties between (prob, state) tuples:
// 'B' < 'E' < 'M' < 'S'.
enum State : uint8_t { kB = 0, kE = 1, kM = 2, kS = 3 };

struct HmmTables {
  // finalseg's re_han, the only characters Viterbi sees: [\u4E00-\u9FD5].
  static constexpr char32_t kFirstHan = 0x4E00, kLastHan = 0x9FD5;

  std::array<double, 4> start{};                 // start_P[state]
  std::array<std::array<double, 4>, 4> trans{};  // trans_P[from].get(to, MIN_FLOAT)
  // emit_P[state].get(c, MIN_FLOAT) for c in [kFirstHan, kLastHan], indexed c - kFirstHan. The
  // file's entries for other characters are checked but not kept: Viterbi never looks them up.
  std::array<std::vector<double>, 4> emit;

  double emission(State s, char32_t han) const { return emit[s][han - kFirstHan]; }

  // Reads prob_start.py, prob_trans.py and prob_emit.py from `finalseg_dir`. Every state must
  // have a start probability, a transition row and an emission row (Python raises KeyError
  // otherwise); no other keys than B, M, E, S; emission keys are single characters. Throws
  // DataError naming the file and line.
  static HmmTables load(const std::string& finalseg_dir);
  // The same from the three files' text; `dir` is used in error messages.
  static HmmTables parse(std::string_view start, std::string_view trans, std::string_view emit,
                         const std::string& dir);
};

}  // namespace accel::jieba
