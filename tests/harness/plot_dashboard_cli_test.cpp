// `accelbench plot` and `accelbench dashboard` through the CLI: files are written, regenerated
// byte for byte, and bad flags or stores exit non-zero without writing anything;
// `dashboard --fail-on-regression` exits 3 on a slowed-down case.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "tests/reports/plot_fixtures.h"
#include "tests/support/test_support.h"

namespace accel {
namespace {

std::string slurp(const std::string& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

TEST(PlotCli, WritesTheFigureAndRegeneratesItByteForByte) {
  test::TempDir dir;
  const std::string db = dir.file("p.sqlite");
  test::make_plot_store(db);
  std::string out;
  for (const char* kind :
       {"speedup-vs-context", "phases", "quality-vs-keep", "costmodel", "metric-over-commits"}) {
    const std::string a = dir.file(std::string(kind) + "-a.svg"),
                      b = dir.file(std::string(kind) + "-b.svg");
    ASSERT_EQ(test::run_cli("plot --db " + db + " --kind " + kind + " --out " + a, &out), 0) << out;
    ASSERT_EQ(test::run_cli("plot --db " + db + " --kind " + kind + " --out " + b, &out), 0) << out;
    EXPECT_EQ(slurp(a), slurp(b)) << kind;
    EXPECT_NE(slurp(a).find("</svg>"), std::string::npos) << kind;
  }
}

TEST(PlotCli, BadKindMissingStoreOrEmptySelectionWriteNothing) {
  test::TempDir dir;
  const std::string db = dir.file("p.sqlite"), svg = dir.file("x.svg");
  test::make_plot_store(db);
  std::string out;
  EXPECT_NE(test::run_cli("plot --db " + db + " --kind pie --out " + svg, &out), 0);
  EXPECT_NE(
      test::run_cli("plot --db " + dir.file("none.sqlite") + " --kind phases --out " + svg, &out),
      0);
  EXPECT_NE(out.find("none.sqlite"), std::string::npos) << out;
  EXPECT_NE(
      test::run_cli("plot --db " + db + " --kind phases --where 'context_len > 99999' --out " + svg,
                    &out),
      0);
  EXPECT_NE(
      test::run_cli("plot --db " + db + " --kind phases --out " + dir.file("no/dir/x.svg"), &out),
      0);
  EXPECT_FALSE(std::filesystem::exists(svg));
  EXPECT_FALSE(std::filesystem::exists(dir.file("none.sqlite")));
}

TEST(DashboardCli, WritesIndexAndFailsOnRegressionOnlyWhenAsked) {
  test::TempDir dir;
  // Two commits of the same cases; the second store's specprefill cases are 40% slower.
  for (int s = 0; s < 2; ++s) {
    auto st = results::ResultStore::open(dir.file("s" + std::to_string(s)));
    auto info = test::full_run();
    info.git_commit = std::string(40, s ? 'b' : 'a');
    info.started_at = s ? "2025-01-02T00:00:00.000Z" : "2025-01-01T00:00:00.000Z";
    const std::string run = st.begin_run(info);
    for (int c = 0; c < 4; ++c) {
      std::vector<double> v;
      for (int t = 0; t < 9; ++t) v.push_back((0.2 + 0.01 * t) * (s && c == 1 ? 1.4 : 1.0));
      test::add_case(st, run, c == 1 ? "specprefill" : "baseline", {{"case", c}}, 512, "s0", v);
    }
  }
  const std::string dbs = " --db " + dir.file("s0") + " --db " + dir.file("s1");
  std::string out;
  ASSERT_EQ(test::run_cli("dashboard" + dbs + " --out " + dir.file("site"), &out), 0) << out;
  EXPECT_NE(out.find("1 regressed"), std::string::npos) << out;
  const std::string html = slurp(dir.file("site/index.html"));
  EXPECT_NE(html.find("data-verdict=\"regressed\""), std::string::npos);
  EXPECT_EQ(
      test::run_cli("dashboard --fail-on-regression" + dbs + " --out " + dir.file("site2"), &out),
      3)
      << out;
  EXPECT_EQ(html, slurp(dir.file("site2/index.html")));
  EXPECT_NE(test::run_cli("dashboard --db " + dir.file("s0") + " --db " + dir.file("missing") +
                              " --out " + dir.file("site3"),
                          &out),
            0);
  EXPECT_FALSE(std::filesystem::exists(dir.file("site3")));
}

}  // namespace
}  // namespace accel
