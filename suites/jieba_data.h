// Where jieba's data (dict.txt and finalseg/prob_*.py, Debian's python3-jieba 0.42.1) is read
// from, and the process-wide cache of segmenters loaded from it: each folder is read once, shared
// read-only by every thread. Owns locating and caching; never segments and never falls back.
#pragma once
#include <memory>
#include <string>

#include "suites/jieba_segmenter.h"

namespace accel::jieba {

// Debian's python3-jieba puts the package here.
inline constexpr const char* kPackageDir = "/usr/lib/python3/dist-packages/jieba";
// Overrides kPackageDir when set and not empty.
inline constexpr const char* kDirEnv = "ACCELBENCH_JIEBA_DIR";

struct DataLocation {
  std::string dir;
  std::string
      source;  // why this folder: "configured", kDirEnv, or "the python3-jieba package path"
};

// `configured` when not empty, else $ACCELBENCH_JIEBA_DIR when set and not empty, else
// kPackageDir.
DataLocation locate_data(const std::string& configured = "");

// The segmenter for the data at locate_data(configured), loaded on first use (thread-safe; a
// failed load is retried next time). Throws DataError: for missing files the message names every
// path looked at and how to provide them; for a malformed file, the file and line.
std::shared_ptr<const Segmenter> shared_segmenter(const std::string& configured = "");

}  // namespace accel::jieba
