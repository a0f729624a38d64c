// A strict reader of the Python subset jieba's finalseg tables are written in: a module of
// `from __future__ import ...` lines and one assignment `NAME = {...}` whose dict maps string
// literals to number literals or to such dicts. Owns parsing only: no knowledge of what the
// tables mean (jieba_hmm.h). Anything outside the subset is an error naming the file and line.
#pragma once
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "suites/jieba_error.h"

namespace accel::jieba {

// A dict entry. Its own struct, not std::pair: a pair of an incomplete PyLiteral is undefined
// (clang with a precompiled <type_traits> rejects it), while vector of an incomplete type is
// allowed.
struct PyItem;

struct PyLiteral {
  bool is_dict = false;
  double number = 0;          // !is_dict: the value Python gives the literal (correctly rounded)
  std::vector<PyItem> items;  // is_dict: in file order
  size_t line = 0;            // where the literal starts
};

struct PyItem {
  std::u32string key;
  PyLiteral value;
};

// The value assigned to `variable` in `text` (UTF-8). Keys must be unique within a dict and
// dicts nest at most 4 deep; escapes \\ \' \" \n \r \t \xhh \uXXXX \UXXXXXXXX are understood.
// Throws DataError "[jieba] <name>:<line>: <what>".
PyLiteral parse_py_dict_assignment(std::string_view text, const std::string& name,
                                   std::string_view variable);

}  // namespace accel::jieba
