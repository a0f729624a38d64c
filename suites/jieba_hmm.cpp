// jieba's finalseg HMM tables (jieba_hmm.h): the three Python literal files, parsed with
// py_dict_literal.h and checked against the shape finalseg.viterbi indexes them with.
#include "suites/jieba_hmm.h"

#include <fstream>
#include <sstream>

#include "suites/longbench_unicode.h"
#include "suites/py_dict_literal.h"

namespace accel::jieba {

namespace {

struct Source {
  std::string name;  // the file's path, for errors
  std::string_view text;
};

[[noreturn]] void fail(const Source& f, size_t line, const std::string& what) {
  throw DataError("[jieba] " + f.name + ":" + std::to_string(line) + ": " + what);
}

State state_of(const Source& f, const std::u32string& key, size_t line) {
  if (key == U"B") return kB;
  if (key == U"E") return kE;
  if (key == U"M") return kM;
  if (key == U"S") return kS;
  fail(f, line, "unknown state '" + longbench::utf8_encode(key) + "' (expected B, M, E or S)");
}

// The file's P as {state: value}, every state present exactly once.
std::array<const PyLiteral*, 4> by_state(const Source& f, const PyLiteral& p, bool nested) {
  std::array<const PyLiteral*, 4> out{};
  for (const auto& [key, v] : p.items) {
    if (v.is_dict != nested)
      fail(f, v.line,
           std::string("state '") + longbench::utf8_encode(key) + "' must map to " +
               (nested ? "a dict" : "a number"));
    out[state_of(f, key, v.line)] = &v;
  }
  for (int s = 0; s < 4; ++s)
    if (!out[size_t(s)]) fail(f, p.line, std::string("state '") + "BEMS"[s] + "' is missing");
  return out;
}

PyLiteral read_p(const Source& f) {
  return parse_py_dict_assignment(f.text, f.name, "P");
}

}  // namespace

HmmTables HmmTables::parse(std::string_view start, std::string_view trans, std::string_view emit,
                           const std::string& dir) {
  const Source fs{dir + "/prob_start.py", start}, ft{dir + "/prob_trans.py", trans},
      fe{dir + "/prob_emit.py", emit};
  HmmTables t;
  const PyLiteral ps = read_p(fs), pt = read_p(ft), pe = read_p(fe);
  const auto starts = by_state(fs, ps, false);
  for (size_t s = 0; s < 4; ++s) t.start[s] = starts[s]->number;

  const auto rows = by_state(ft, pt, true);
  for (size_t from = 0; from < 4; ++from) {
    t.trans[from].fill(kMinFloat);
    for (const auto& [key, v] : rows[from]->items) {
      if (v.is_dict) fail(ft, v.line, "a transition must be a number");
      t.trans[from][state_of(ft, key, v.line)] = v.number;
    }
  }

  const auto emits = by_state(fe, pe, true);
  for (size_t s = 0; s < 4; ++s) {
    t.emit[s].assign(size_t(kLastHan - kFirstHan + 1), kMinFloat);
    for (const auto& [key, v] : emits[s]->items) {
      if (v.is_dict) fail(fe, v.line, "an emission must be a number");
      if (key.size() != 1)
        fail(fe, v.line, "emission key '" + longbench::utf8_encode(key) + "' is not one character");
      if (key[0] >= kFirstHan && key[0] <= kLastHan) t.emit[s][key[0] - kFirstHan] = v.number;
    }
  }
  return t;
}

HmmTables HmmTables::load(const std::string& finalseg_dir) {
  std::string text[3];
  const char* names[3] = {"prob_start.py", "prob_trans.py", "prob_emit.py"};
  for (int i = 0; i < 3; ++i) {
    const std::string path = finalseg_dir + "/" + names[i];
    std::ifstream f(path, std::ios::binary);
    if (!f) throw DataError("[jieba] " + path + ": cannot open the HMM table");
    std::ostringstream ss;
    ss << f.rdbuf();
    text[i] = ss.str();
  }
  return parse(text[0], text[1], text[2], finalseg_dir);
}

}  // namespace accel::jieba
