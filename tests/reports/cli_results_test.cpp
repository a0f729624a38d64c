// End-to-end `accelbench report|compare|merge`: outputs, exit codes, and that reading commands
// name a missing file and never create it.
#include <gtest/gtest.h>

#include <filesystem>

#include "tests/reports/line_match.h"
#include "tests/results/store_fixtures.h"
#include "tests/support/test_support.h"

namespace accel {
namespace {

using test::run_cli;

void make(const std::string& path, double scale_case1) {
  auto s = results::ResultStore::open(path);
  const std::string run = s.begin_run(test::full_run());
  test::add_case(s, run, "baseline", nlohmann::json::object(), 1024, "s0",
                 {1.0, 1.02, 0.98, 1.01, 0.99});
  std::vector<double> v = {0.5, 0.51, 0.49, 0.505, 0.495};
  for (auto& x : v) x *= scale_case1;
  test::add_case(s, run, "pld", {{"ngram", 3}}, 1024, "s0", v);
}

TEST(CliResults, ReportFormats) {
  test::TempDir dir;
  const std::string db = dir.file("r.sqlite");
  make(db, 1.0);
  std::string out;
  ASSERT_EQ(run_cli("report --db " + db + " --table ttft", &out), 0) << out;
  EXPECT_TRUE(test::lines_match(
      out, {"| Method | Params | TTFT 1024 (s) | Speedup 1024 |",
            "| baseline |  | 1.00 ± %f | 1.00× |", "| pld |  | 0.500 ± %f | 2.00× [%f, %f] |"}));
  ASSERT_EQ(run_cli("report --db " + db + " --table ttft --format latex", &out), 0) << out;
  EXPECT_TRUE(test::lines_match(out, {"\\toprule", "\\midrule", "\\bottomrule"}));
  ASSERT_EQ(run_cli("report --db " + db + " --table phases --format json", &out), 0) << out;
  EXPECT_EQ(nlohmann::json::parse(out)["rows"].size(), 2u);
  ASSERT_EQ(run_cli("report --db " + db + " --table runs --format csv", &out), 0) << out;
  EXPECT_TRUE(test::lines_match(out, {"Run,Started,%*"}));
  ASSERT_EQ(run_cli("report --db " + db + " --table ttft --where \"method = 'pld'\"", &out), 0)
      << out;
  EXPECT_TRUE(test::lines_match(out, {"| pld |  | 0.500 ± %f | — |"}));
  EXPECT_NE(run_cli("report --db " + db + " --table ttft --where \"1; DROP TABLE trials\"", &out),
            0);
  EXPECT_NE(out.find("--where"), std::string::npos) << out;
  EXPECT_NE(run_cli("report --db " + db + " --table ablation", &out), 0);
  EXPECT_NE(out.find("--param"), std::string::npos) << out;
}

TEST(CliResults, MissingFilesAreNamedAndNeverCreated) {
  test::TempDir dir;
  const std::string missing = dir.file("missing.sqlite");
  std::string out;
  EXPECT_EQ(run_cli("report --db " + missing + " --table ttft", &out), 1);
  EXPECT_NE(out.find("missing.sqlite"), std::string::npos) << out;
  EXPECT_EQ(run_cli("compare --baseline " + missing + " --candidate " + missing, &out), 1);
  EXPECT_NE(out.find("missing.sqlite"), std::string::npos) << out;
  EXPECT_EQ(run_cli("merge " + dir.file("out.sqlite") + " " + missing, &out), 1);
  EXPECT_NE(out.find("missing.sqlite"), std::string::npos) << out;
  EXPECT_FALSE(std::filesystem::exists(missing));
  EXPECT_FALSE(std::filesystem::exists(dir.file("out.sqlite")));
}

TEST(CliResults, CompareExitCodes) {
  test::TempDir dir;
  const std::string a = dir.file("a.sqlite"), b = dir.file("b.sqlite"),
                    slow = dir.file("slow.sqlite");
  make(a, 1.0);
  make(b, 1.0);
  make(slow, 1.3);
  std::string out;
  EXPECT_EQ(run_cli("compare --baseline " + a + " --candidate " + b, &out), 0) << out;
  EXPECT_EQ(run_cli("compare --baseline " + a + " --candidate " + slow, &out), 3) << out;
  EXPECT_TRUE(test::lines_match(
      out, {"| pld | ngram=3 | target | 1024 | synthetic | s0 | ttft_s | %f | %f | "
            "%f× [%f, %f] | %f | REGRESSED | %* |"}));
  // A generous threshold accepts the slowdown.
  EXPECT_EQ(
      run_cli("compare --baseline " + a + " --candidate " + slow + " --max-slowdown 50", &out), 0)
      << out;
}

TEST(CliResults, MergeIsIdempotent) {
  test::TempDir dir;
  const std::string a = dir.file("a.sqlite"), b = dir.file("b.sqlite"),
                    out_db = dir.file("m.sqlite");
  make(a, 1.0);
  make(b, 1.0);  // same case keys from another run: conflicts, first kept
  std::string out;
  ASSERT_EQ(run_cli("merge " + out_db + " " + a + " " + b, &out), 0) << out;
  EXPECT_TRUE(
      test::lines_match(out, {"merged 2 store(s) into %*: 2 run(s) added, 10 trial(s) added, 0 "
                              "duplicate, 10 conflicting (kept first), 0 failure(s) replaced"}));
  ASSERT_EQ(run_cli("merge " + out_db + " " + a + " " + b, &out), 0) << out;
  EXPECT_TRUE(
      test::lines_match(out, {"merged %*: 0 run(s) added, 0 trial(s) added, 10 duplicate, 10 %*"}));
}

}  // namespace
}  // namespace accel
