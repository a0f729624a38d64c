// Where jieba's data is looked for and what a missing or malformed folder gives: an error naming
// every path looked at and how to provide the data, never a fallback.
#include "suites/jieba_data.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>
#include <vector>

#include "tests/support/jieba_data.h"
#include "tests/support/test_support.h"

namespace accel::jieba {
namespace {

std::string error_of(const std::string& dir) {
  try {
    shared_segmenter(dir);
  } catch (const DataError& e) {
    return e.what();
  }
  return "no error";
}

TEST(JiebaData, TheGivenFolderThenTheEnvironmentThenThePackagePath) {
  EXPECT_EQ(locate_data("/x").dir, "/x");
  const char* old = std::getenv(kDirEnv);
  const std::string saved = old ? old : "";
  setenv(kDirEnv, "/from/env", 1);
  EXPECT_EQ(locate_data().dir, "/from/env");
  EXPECT_EQ(locate_data().source, kDirEnv);
  EXPECT_EQ(locate_data("/x").dir, "/x");
  setenv(kDirEnv, "", 1);
  EXPECT_EQ(locate_data().dir, kPackageDir);
  if (old)
    setenv(kDirEnv, saved.c_str(), 1);
  else
    unsetenv(kDirEnv);
}

TEST(JiebaData, AMissingFolderNamesEveryPathAndTheRemedy) {
  const std::string e = error_of("/nonexistent/jieba");
  EXPECT_NE(e.find("looked in /nonexistent/jieba"), std::string::npos) << e;
  for (const char* f :
       {"/nonexistent/jieba/dict.txt", "/nonexistent/jieba/finalseg/prob_start.py",
        "/nonexistent/jieba/finalseg/prob_trans.py", "/nonexistent/jieba/finalseg/prob_emit.py"})
    EXPECT_NE(e.find(f), std::string::npos) << f;
  EXPECT_NE(e.find("python3-jieba"), std::string::npos);
  EXPECT_NE(e.find(kDirEnv), std::string::npos);
}

TEST(JiebaData, AMalformedFileNamesItsLineAndIsNotCached) {
  test::TempDir tmp;
  std::filesystem::create_directories(tmp.path() / "finalseg");
  const auto write = [&](const std::string& name, const std::string& text) {
    std::ofstream(tmp.path() / name, std::ios::binary) << text;
  };
  write("dict.txt", "a 1\nb\n");
  write("finalseg/prob_start.py", "P={'B': -1, 'E': -1, 'M': -1, 'S': -1}\n");
  write("finalseg/prob_trans.py", "P={'B': {}, 'E': {}, 'M': {}, 'S': {}}\n");
  write("finalseg/prob_emit.py", "P={'B': {}, 'E': {}, 'M': {}, 'S': {}}\n");
  EXPECT_NE(error_of(tmp.path().string()).find("dict.txt:2: expected 'word frequency"),
            std::string::npos);
  write("dict.txt", "a 1\nb 1\n");  // fixed: the next call loads it
  const auto seg = shared_segmenter(tmp.path().string());
  EXPECT_EQ(seg->cut(U"ab"), (std::vector<std::u32string>{U"ab"}));  // finalseg re_skip: whole
  EXPECT_EQ(shared_segmenter(tmp.path().string()), seg);             // loaded once
}

TEST(JiebaData, ThreadsShareOneLoad) {
  test::TempDir tmp;
  std::filesystem::create_directories(tmp.path() / "finalseg");
  std::ofstream(tmp.path() / "dict.txt") << "ab 2\nc 1\n";
  std::ofstream(tmp.path() / "finalseg/prob_start.py") << "P={'B': -1, 'E': -1, 'M': -1, 'S': -1}";
  for (const char* f : {"finalseg/prob_trans.py", "finalseg/prob_emit.py"})
    std::ofstream(tmp.path() / f) << "P={'B': {}, 'E': {}, 'M': {}, 'S': {}}";
  std::vector<std::shared_ptr<const Segmenter>> got(4);
  std::vector<std::thread> threads;
  for (size_t i = 0; i < got.size(); ++i)
    threads.emplace_back([&, i] { got[i] = shared_segmenter(tmp.path().string()); });
  for (auto& t : threads) t.join();
  for (const auto& g : got) EXPECT_EQ(g, got[0]);
  EXPECT_EQ(got[0]->cut(U"abc"), (std::vector<std::u32string>{U"ab", U"c"}));
}

}  // namespace
}  // namespace accel::jieba
