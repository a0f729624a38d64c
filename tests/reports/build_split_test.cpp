// Timing tables never pool trials of different builds: a store holding two runs that differ in
// git commit (or in CPU model) prints two rows per configuration with a Build column, each speedup
// taken against the baseline of its own build, and a footnote saying so; compare pairs builds.
#include <gtest/gtest.h>

#include "reports/compare.h"
#include "reports/cost_model.h"
#include "reports/tables.h"
#include "tests/reports/line_match.h"
#include "tests/results/store_fixtures.h"
#include "tests/support/test_support.h"

namespace accel::reports {
namespace {

using test::lines_match;

// One run: baseline TTFTs all `base`, specprefill keep 0.3 all 0.5 s (constant samples: the
// speedup's interval is degenerate, so the printed text is exact). Case keys carry the run's
// label because the store keeps one trial per (case key, trial index).
void add_run(results::ResultStore& s, const results::RunInfo& info, const std::string& tag,
             double base) {
  const std::string run = s.begin_run(info);
  for (const auto& [method, params, ttft] :
       {std::tuple{std::string("baseline"), nlohmann::json::object(), base},
        std::tuple{std::string("specprefill"), nlohmann::json{{"keep", 0.3}}, 0.5}}) {
    std::vector<results::TrialRecord> v;
    for (int i = 0; i < 3; ++i) {
      auto t = test::simple_trial(run, method, params, 1024, "s0", i, ttft);
      t.case_key = tag + "|" + t.case_key;
      v.push_back(t);
    }
    s.record_case(v);
  }
}

results::RunInfo build(const std::string& commit, const std::string& cpu) {
  auto r = test::full_run();
  r.git_commit = commit;
  r.git_dirty = false;
  r.cpu_model = cpu;
  return r;
}

std::string ttft_markdown(const std::string& path) {
  const auto s = results::ResultStore::open_readonly(path);
  return to_markdown(ttft_table(s, {}));
}

TEST(BuildSplit, TwoCommitsGiveTwoRowsWithTheirOwnSpeedups) {
  test::TempDir dir;
  const std::string path = dir.file("c.sqlite");
  {
    auto s = results::ResultStore::open(path);
    add_run(s, build("aaaaaaa111", "Test CPU @ 3.0GHz"), "a", 1.0);  // speedup 2.00
    add_run(s, build("bbbbbbb222", "Test CPU @ 3.0GHz"), "b", 2.0);  // speedup 4.00
  }
  EXPECT_TRUE(lines_match(
      ttft_markdown(path),
      {"| Build | Method | Params | TTFT 1024 (s) | Speedup 1024 |",
       "| aaaaaaa, Test | baseline |  | 1.00 ± 0.00 | 1.00× |",
       "| aaaaaaa, Test | specprefill |  | 0.500 ± 0.000 | 2.00× [2.00, 2.00] |",
       "| bbbbbbb, Test | baseline |  | 2.00 ± 0.00 | 1.00× |",
       "| bbbbbbb, Test | specprefill |  | 0.500 ± 0.000 | 4.00× [4.00, 4.00] |",
       "Note: Speedup: ratio of medians, baseline / method (TTFT at the same build, target model, "
       "context and workload); %*",
       "Note: Build = the runs' git commit (+dirty.<digest>: uncommitted changes, told apart by "
       "their diff) and CPU model: this "
       "selection holds 2 builds, so rows are split by build and every time and speedup uses "
       "the trials of one build only, against the baseline of the same build."}));
}

TEST(BuildSplit, TwoCpusGiveTwoRowsWithTheirOwnSpeedups) {
  test::TempDir dir;
  const std::string path = dir.file("c.sqlite");
  {
    auto s = results::ResultStore::open(path);
    add_run(s, build("aaaaaaa111", "Intel(R) Xeon(R) Gold 6230 CPU @ 2.10GHz"), "a", 1.0);
    add_run(s, build("aaaaaaa111", "AMD EPYC 7B13 64-Core Processor"), "b", 2.0);
  }
  EXPECT_TRUE(lines_match(
      ttft_markdown(path),
      {"| Build | Method | Params | TTFT 1024 (s) | Speedup 1024 |",
       "| aaaaaaa, EPYC 7B13 | specprefill |  | 0.500 ± 0.000 | 4.00× [4.00, 4.00] |",
       "| aaaaaaa, Xeon Gold 6230 | specprefill |  | 0.500 ± 0.000 | 2.00× [2.00, 2.00] |",
       "Note: Build = %*"}));
}

TEST(BuildSplit, OneBuildPrintsNoBuildColumn) {
  test::TempDir dir;
  const std::string path = dir.file("c.sqlite");
  {
    auto s = results::ResultStore::open(path);
    add_run(s, build("aaaaaaa111", "Test CPU"), "a", 1.0);
    add_run(s, build("aaaaaaa111", "Test CPU"), "b", 2.0);  // a second run of the same build
  }
  const std::string out = ttft_markdown(path);
  EXPECT_EQ(out.find("Build"), std::string::npos) << out;
  EXPECT_TRUE(lines_match(out, {"| specprefill |  | 0.500 ± 0.000 | 3.00× [%f, %f] |"}))
      << "pooled: median baseline of {1,1,1,2,2,2} is 1.5";
}

TEST(BuildSplit, DecodePhasesAndCompareSplitToo) {
  test::TempDir dir;
  const std::string path = dir.file("c.sqlite"), other = dir.file("d.sqlite");
  {
    auto s = results::ResultStore::open(path);
    add_run(s, build("aaaaaaa111", "Test CPU"), "a", 1.0);
    add_run(s, build("bbbbbbb222", "Test CPU"), "b", 2.0);
    auto o = results::ResultStore::open(other);
    add_run(o, build("ccccccc333", "Test CPU"), "a", 1.0);
    add_run(o, build("ccccccc333", "Test CPU"), "b", 2.0);
  }
  const auto s = results::ResultStore::open_readonly(path);
  for (const Table& t : {decode_table(s, {}), phases_table(s, {})}) {
    EXPECT_EQ(t.columns.front().key, "build") << t.title;
    EXPECT_EQ(t.rows.size(), 4u) << t.title;
  }
  // decode speed: (10 / 0.5) / (10 / 2.0) = 4.00 in build b.
  EXPECT_TRUE(lines_match(to_markdown(decode_table(s, {})),
                          {"| bbbbbbb, Test | target | specprefill |  | f32 | 1024 | %* | "
                           "4.00× [4.00, 4.00] | %*"}));
  const auto o = results::ResultStore::open_readonly(other);
  CompareOptions co;
  co.min_trials = 3;
  const CompareResult r = compare_stores(s, o, co);
  EXPECT_TRUE(r.split_builds);
  for (const auto& c : r.cases) {
    EXPECT_EQ(c.candidate_build.commit, "ccccccc333");
    EXPECT_NE(c.baseline_build.commit, "ccccccc333");
  }
  EXPECT_TRUE(lines_match(to_markdown(compare_table(r, co)),
                          {"| Build | Method |%*", "| aaaaaaa, Test → ccccccc, Test | baseline |%*",
                           "Note: Build = baseline build → candidate build%*"}));
}

}  // namespace
}  // namespace accel::reports
