// jieba's data location and segmenter cache (jieba_data.h).
#include "suites/jieba_data.h"

#include <cstdlib>
#include <filesystem>
#include <map>
#include <mutex>
#include <vector>

namespace accel::jieba {

namespace {

constexpr const char* kFiles[] = {"dict.txt", "finalseg/prob_start.py", "finalseg/prob_trans.py",
                                  "finalseg/prob_emit.py"};

// Throws naming the files that are not there, with what to do about it.
void require_files(const DataLocation& at) {
  std::vector<std::string> missing;
  for (const char* f : kFiles) {
    const std::filesystem::path p = std::filesystem::path(at.dir) / f;
    std::error_code ec;
    if (!std::filesystem::is_regular_file(p, ec)) missing.push_back(p.string());
  }
  if (missing.empty()) return;
  std::string list;
  for (const std::string& m : missing) list += (list.empty() ? "" : ", ") + m;
  throw DataError("[jieba] jieba's data is missing: looked in " + at.dir + " (" + at.source +
                  ") and found no " + list +
                  ". Install Debian's python3-jieba (scripts/setup.sh does), or set " + kDirEnv +
                  " to a folder holding dict.txt and finalseg/prob_start.py, prob_trans.py and "
                  "prob_emit.py from jieba 0.42.1");
}

}  // namespace

DataLocation locate_data(const std::string& configured) {
  if (!configured.empty()) return {configured, "configured"};
  if (const char* env = std::getenv(kDirEnv); env && *env) return {env, kDirEnv};
  return {kPackageDir, "the python3-jieba package path"};
}

std::shared_ptr<const Segmenter> shared_segmenter(const std::string& configured) {
  static std::mutex mu;
  static std::map<std::string, std::shared_ptr<const Segmenter>> loaded;
  const DataLocation at = locate_data(configured);
  std::lock_guard<std::mutex> lock(mu);  // one load per folder; other callers wait for it
  if (const auto it = loaded.find(at.dir); it != loaded.end()) return it->second;
  require_files(at);
  auto seg = std::make_shared<const Segmenter>(Segmenter::load(at.dir));
  loaded.emplace(at.dir, seg);
  return seg;
}

}  // namespace accel::jieba
