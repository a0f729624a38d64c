// The error every jieba data reader throws (jieba_dictionary.h, jieba_hmm.h, py_dict_literal.h):
// its message names the file, and the line where there is one. Owns nothing else.
#pragma once
#include <stdexcept>

namespace accel::jieba {

class DataError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace accel::jieba
