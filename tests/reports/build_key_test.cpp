// Build labels and the build index (build_key.h): CPU abbreviation, the short label, and that a
// selection splits only when its trials span more than one (commit, dirty, CPU).
#include "reports/build_key.h"

#include <gtest/gtest.h>

namespace accel::reports {
namespace {

results::RunInfo run(const std::string& id, const std::string& commit, bool dirty,
                     const std::string& cpu) {
  results::RunInfo r;
  r.run_id = id;
  r.git_commit = commit;
  r.git_dirty = dirty;
  r.cpu_model = cpu;
  return r;
}

results::TrialRecord trial(const std::string& run_id) {
  results::TrialRecord t;
  t.run_id = run_id;
  return t;
}

TEST(BuildKey, AbbreviatesCpuModels) {
  EXPECT_EQ(abbreviate_cpu("Intel(R) Xeon(R) Platinum 8375C CPU @ 2.90GHz"), "Xeon Platinum 8375C");
  EXPECT_EQ(abbreviate_cpu("AMD EPYC 7B13 64-Core Processor"), "EPYC 7B13");
  EXPECT_EQ(abbreviate_cpu("Apple M2"), "Apple M2");
  EXPECT_EQ(abbreviate_cpu(""), "");
}

TEST(BuildKey, LabelIsShortCommitDirtyAndCpu) {
  EXPECT_EQ(
      (Build{"0123456789abcdef", true, "0123456789abcdef-dirty", "Test CPU @ 3.0GHz"}.label()),
      "0123456+dirty, Test");
  EXPECT_EQ((Build{"0123456789abcdef", true, "0123456789abcdef-dirty-1a2b3c4d5e6f", "X"}.label()),
            "0123456+dirty.1a2b3c, X");
  EXPECT_EQ((Build{"abcdef0123", false, "abcdef0123", ""}.label()), "abcdef0");
  EXPECT_EQ(Build{}.label(), "unknown");
}

TEST(BuildKey, TwoDirtyBuildsOfOneCommitAreTwoBuilds) {
  results::RunInfo a = run("a", "1111111aa", true, "X"), b = run("b", "1111111aa", true, "X");
  a.git_diff_sha256 = std::string(64, 'a');
  b.git_diff_sha256 = std::string(64, 'b');
  const BuildIndex ix({a, b}, {trial("a"), trial("b")});
  EXPECT_TRUE(ix.split());
  EXPECT_NE(ix.key(trial("a")), ix.key(trial("b")));
  EXPECT_NE(ix.cell(trial("a")).text, ix.cell(trial("b")).text);
}

TEST(BuildKey, SplitsOnlyWhenTrialsSpanSeveralBuilds) {
  const std::vector<results::RunInfo> runs = {
      run("a", "1111111aa", false, "X"), run("b", "1111111aa", false, "X"),
      run("c", "2222222bb", false, "X"), run("d", "1111111aa", true, "X"),
      run("e", "1111111aa", false, "Y")};
  EXPECT_FALSE(BuildIndex(runs, {trial("a"), trial("b")}).split()) << "same build, two runs";
  EXPECT_EQ(BuildIndex(runs, {trial("a")}).key(trial("a")), "");
  EXPECT_EQ(BuildIndex(runs, {trial("a")}).footnote(), "");
  for (const char* other : {"c", "d", "e"}) {
    const BuildIndex ix(runs, {trial("a"), trial(other)});
    EXPECT_TRUE(ix.split()) << other;
    EXPECT_NE(ix.key(trial("a")), ix.key(trial(other))) << other;
    EXPECT_NE(ix.footnote().find("2 builds"), std::string::npos) << ix.footnote();
  }
  const BuildIndex ix(runs, {trial("a"), trial("c")});
  EXPECT_EQ(ix.cell(trial("c")).text, "2222222, X");
  EXPECT_EQ(ix.cell(trial("c")).data["commit"], "2222222bb");
}

}  // namespace
}  // namespace accel::reports
