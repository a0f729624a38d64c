// jieba's finalseg tables and the strict Python-literal reader under them: the literal subset
// the files use, the shape Viterbi needs, hostile files rejected with the file and line, and
// Viterbi's tie rules on hand-made tables.
#include "suites/jieba_hmm.h"

#include <gtest/gtest.h>

#include "suites/jieba_data.h"
#include "suites/jieba_finalseg.h"
#include "suites/py_dict_literal.h"
#include "tests/support/jieba_data.h"

namespace accel::jieba {
namespace {

const char* kStart = "P={'B': -0.26, 'E': -3.14e+100, 'M': -3.14e+100, 'S': -1.46}\n";
const char* kTrans =
    "P={'B': {'E': -0.51, 'M': -0.92},\n 'E': {'B': -0.59, 'S': -0.81},\n"
    " 'M': {'E': -0.33, 'M': -1.26},\n 'S': {'B': -0.72, 'S': -0.67}}\n";
const char* kEmit =
    "from __future__ import unicode_literals\n\n"
    "P={'B': {'\\u4e00': -3.5, '\\u2236': -9.0},\n 'E': {'\\u4e00': -6.0},\n 'M': {},\n"
    " 'S': {\"\\u4e00\": -4.0,}}\n";

std::string literal_error(std::string_view text) {
  try {
    parse_py_dict_assignment(text, "t.py", "P");
  } catch (const DataError& e) {
    return e.what();
  }
  return "no error";
}

std::string tables_error(const char* start, const char* trans, const char* emit) {
  try {
    HmmTables::parse(start, trans, emit, "fs");
  } catch (const DataError& e) {
    return e.what();
  }
  return "no error";
}

TEST(JiebaHmm, TablesAsFinalsegIndexesThem) {
  const HmmTables t = HmmTables::parse(kStart, kTrans, kEmit, "fs");
  EXPECT_EQ(t.start[kB], -0.26);
  EXPECT_EQ(t.start[kE], -3.14e100);
  EXPECT_EQ(t.trans[kB][kM], -0.92);
  EXPECT_EQ(t.trans[kB][kS], kMinFloat);  // trans_P['B'].get('S', MIN_FLOAT)
  EXPECT_EQ(t.emission(kB, U'\u4e00'), -3.5);
  EXPECT_EQ(t.emission(kS, U'\u4e00'), -4.0);
  EXPECT_EQ(t.emission(kM, U'\u4e00'), kMinFloat);
  EXPECT_EQ(t.emission(kB, U'\u9fd5'), kMinFloat);
}

TEST(JiebaHmm, LiteralReaderAcceptsTheSubsetAndNamesTheLineOfAnError) {
  const PyLiteral p = parse_py_dict_assignment(
      "from __future__ import unicode_literals, division\nP = {'a\\x41\\U0001F600\\'': 1,\n"
      " \"b\": {'c': -.5e-3, 'd': +2.}}\n",
      "t.py", "P");
  ASSERT_EQ(p.items.size(), 2u);
  EXPECT_EQ(p.items[0].key, U"aA\U0001F600'");
  EXPECT_EQ(p.items[0].value.number, 1.0);
  EXPECT_EQ(p.items[1].value.items[0].value.number, -0.0005);
  EXPECT_EQ(p.items[1].value.items[1].value.number, 2.0);
  EXPECT_EQ(p.items[1].value.line, 3u);

  EXPECT_NE(literal_error("Q={}").find("t.py:1: expected the assignment 'P = {...}'"),
            std::string::npos);
  EXPECT_NE(literal_error("P={'a': 1,\n 'a': 2}").find("t.py:2: key 'a' appears twice"),
            std::string::npos);
  EXPECT_NE(literal_error("P={'a': 1\n 'b': 2}").find("t.py:2: expected ',' or '}'"),
            std::string::npos);
  EXPECT_NE(literal_error("P={'a': 1e}").find("malformed exponent"), std::string::npos);
  EXPECT_NE(literal_error("P={'a': 1e999}").find("out of range"), std::string::npos);
  EXPECT_NE(literal_error("P={'a': x}").find("expected a number or a dict"), std::string::npos);
  EXPECT_NE(literal_error("P={'a\\N{DASH}': 1}").find("unsupported escape"), std::string::npos);
  EXPECT_NE(literal_error("P={'\\u12': 1}").find("truncated"), std::string::npos);
  EXPECT_NE(literal_error("P={'a: 1}").find("t.py:1: unterminated string"), std::string::npos);
  EXPECT_NE(literal_error("P={'a': 1,\n").find("t.py:2: unterminated dict"), std::string::npos);
  EXPECT_NE(literal_error("P={} # c").find("unexpected text after"), std::string::npos);
  EXPECT_NE(literal_error("import os\nP={}").find("expected the assignment"), std::string::npos);
  EXPECT_NE(literal_error("P={'a':{'a':{'a':{'a':{'a':1}}}}}").find("nested deeper"),
            std::string::npos);
  EXPECT_NE(literal_error("P={'\xff': 1}").find("t.py: not valid UTF-8"), std::string::npos);
}

TEST(JiebaHmm, TablesOfTheWrongShapeAreRejected) {
  EXPECT_NE(tables_error("P={'B': -0.26, 'E': -1, 'M': -1}", kTrans, kEmit)
                .find("fs/prob_start.py:1: state 'S' is missing"),
            std::string::npos);
  EXPECT_NE(tables_error("P={'B': 1, 'E': 1, 'M': 1, 'S': 1, 'X': 1}", kTrans, kEmit)
                .find("unknown state 'X'"),
            std::string::npos);
  EXPECT_NE(tables_error(kStart, "P={'B': 1, 'E': {}, 'M': {}, 'S': {}}", kEmit)
                .find("fs/prob_trans.py:1: state 'B' must map to a dict"),
            std::string::npos);
  EXPECT_NE(tables_error(kStart, kTrans, "P={'B': {'ab': -1}, 'E': {}, 'M': {}, 'S': {}}")
                .find("fs/prob_emit.py:1: emission key 'ab' is not one character"),
            std::string::npos);
  EXPECT_NE(tables_error(kStart, kTrans, "P={'B': {'a': {}}, 'E': {}, 'M': {}, 'S': {}}")
                .find("an emission must be a number"),
            std::string::npos);
}

TEST(JiebaHmm, ViterbiBreaksTiesTowardsTheLaterStateLetter) {
  // With no emissions every path sum is absorbed by MIN_FLOAT's magnitude at each step, so the
  // (prob, state) tuples tie on prob and Python's max() takes the larger letter: S from S/E at
  // every step, and S at the end.
  const HmmTables t =
      HmmTables::parse(kStart, kTrans, "P={'B': {}, 'E': {}, 'M': {}, 'S': {}}", "fs");
  const std::vector<State> path = viterbi_path(t, U"\u4e00\u4e01\u4e02");
  EXPECT_EQ(path, (std::vector<State>{kS, kS, kS}));
  std::vector<std::u32string> out;
  finalseg_cut(t, U"\u4e00\u4e01x1.5%\u4e02", out);
  EXPECT_EQ(out, (std::vector<std::u32string>{U"\u4e00", U"\u4e01", U"x1.5%", U"\u4e02"}));
}

TEST(JiebaHmm, TheRealTablesLoad) {
  ACCEL_REQUIRE(test::missing_jieba_data());
  const HmmTables t = HmmTables::load(locate_data().dir + "/finalseg");
  EXPECT_EQ(t.start[kB], -0.26268660809250016);  // prob_start.py
  EXPECT_EQ(t.trans[kM][kE], -0.33344856811948514);
  EXPECT_EQ(t.emission(kB, U'\u4e00'), -3.6544978750449433);  // prob_emit.py's first entry
}

}  // namespace
}  // namespace accel::jieba
