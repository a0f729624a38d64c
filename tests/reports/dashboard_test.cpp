// The regression dashboard on synthetic stores from two commits: an injected 20% slowdown of one
// case is flagged (page and verdicts), noise alone never is, runs are ordered by start time, and
// the page is self-contained and byte-identical when regenerated.
#include "reports/dashboard.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "tests/results/store_fixtures.h"
#include "tests/support/test_support.h"

namespace accel::reports {
namespace {

constexpr int kCases = 12, kTrials = 9;  // >= 9 trials per side (STYLE.md item 14)
constexpr double kNoise = 0.05;          // lognormal sigma: ~5 % run-to-run noise

// One run at `commit` started at `when`; case `slow_case` multiplied by `slow`.
void make_store(const std::string& path, uint64_t seed, const std::string& commit,
                const std::string& when, int slow_case = -1, double slow = 1.0) {
  auto s = results::ResultStore::open(path);
  s.db().exec("PRAGMA synchronous = OFF");
  auto info = test::full_run();
  info.git_commit = commit;
  info.git_dirty = false;
  info.started_at = when;
  const std::string run = s.begin_run(info);
  std::mt19937_64 rng(seed);
  std::lognormal_distribution<double> noise(0.0, kNoise);
  for (int c = 0; c < kCases; ++c) {
    std::vector<double> v;
    for (int t = 0; t < kTrials; ++t)
      v.push_back((0.1 + 0.1 * c) * (c == slow_case ? slow : 1.0) * noise(rng));
    test::add_case(s, run, c % 2 ? "specprefill" : "baseline", {{"case", c}}, 1024, "s", v);
  }
}

using Named = std::vector<std::pair<std::string, const results::ResultStore*>>;

Dashboard dash(const results::ResultStore& a, const results::ResultStore& b) {
  return build_dashboard(Named{{"old.sqlite", &a}, {"new.sqlite", &b}}, {});
}

size_t count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
  return n;
}

TEST(Dashboard, FlagsAnInjected20PercentSlowdownBetweenTwoCommits) {
  test::TempDir dir;
  for (uint64_t seed = 0; seed < 5; ++seed) {
    const std::string a = dir.file("a" + std::to_string(seed)),
                      b = dir.file("b" + std::to_string(seed));
    make_store(a, 100 + seed, std::string(40, 'a'), "2025-01-01T00:00:00.000Z");
    make_store(b, 200 + seed, std::string(40, 'b'), "2025-01-02T00:00:00.000Z", 7, 1.20);
    const auto sa = results::ResultStore::open_readonly(a),
               sb = results::ResultStore::open_readonly(b);
    const Dashboard d = dash(sa, sb);
    ASSERT_EQ(d.history.cases.size(), size_t(kCases));
    ASSERT_EQ(d.history.runs.size(), 2u);
    EXPECT_EQ(d.regressed(), 1u) << "seed " << seed;
    for (size_t i = 0; i < d.verdicts.size(); ++i) {
      ASSERT_TRUE(d.verdicts[i].judged);
      const bool slow = d.verdicts[i].comparison.params == "case=7";
      EXPECT_EQ(d.verdicts[i].comparison.verdict == Verdict::Regressed, slow)
          << d.history.cases[i].label << " seed " << seed;
    }
    const std::string html = dashboard_html(d, {});
    EXPECT_EQ(count(html, "data-verdict=\"regressed\""), 1u);
    EXPECT_EQ(count(html, "class=\"flagged\""), 1u);  // the red ring on the latest point
    EXPECT_NE(html.find("1 regressed"), std::string::npos);
    // Regressions are listed first.
    EXPECT_LT(html.find("data-verdict=\"regressed\""), html.find("data-verdict=\"ok\""));
  }
}

TEST(Dashboard, NoiseAloneIsNeverFlagged) {
  test::TempDir dir;
  size_t flagged = 0, judged = 0;
  for (uint64_t seed = 0; seed < 10; ++seed) {
    const std::string a = dir.file("a" + std::to_string(seed)),
                      b = dir.file("b" + std::to_string(seed));
    make_store(a, 300 + seed, std::string(40, 'a'), "2025-01-01T00:00:00.000Z");
    make_store(b, 400 + seed, std::string(40, 'b'), "2025-01-02T00:00:00.000Z");
    const auto sa = results::ResultStore::open_readonly(a),
               sb = results::ResultStore::open_readonly(b);
    const Dashboard d = dash(sa, sb);
    flagged += d.regressed();
    judged += d.compare.cases.size();
  }
  EXPECT_EQ(judged, size_t(10 * kCases));
  EXPECT_EQ(flagged, 0u);
}

TEST(Dashboard, RunsAreOrderedByStartTimeNotByArgumentOrder) {
  test::TempDir dir;
  make_store(dir.file("a"), 1, std::string(40, 'a'), "2025-01-01T00:00:00.000Z");
  make_store(dir.file("b"), 2, std::string(40, 'b'), "2025-01-02T00:00:00.000Z", 3, 1.5);
  const auto sa = results::ResultStore::open_readonly(dir.file("a"));
  const auto sb = results::ResultStore::open_readonly(dir.file("b"));
  const Dashboard d = build_dashboard(Named{{"b", &sb}, {"a", &sa}}, {});  // newest first
  ASSERT_EQ(d.history.runs.size(), 2u);
  EXPECT_EQ(d.history.runs[0].commit, std::string(40, 'a'));
  EXPECT_EQ(d.history.runs[0].label(), "aaaaaaa 2025-01-01 00:00");
  EXPECT_EQ(d.regressed(), 1u);  // b (later) is the candidate
}

TEST(Dashboard, PageIsSelfContainedAndByteIdenticalWhenRegenerated) {
  test::TempDir dir;
  make_store(dir.file("a"), 1, std::string(40, 'a'), "2025-01-01T00:00:00.000Z");
  make_store(dir.file("b"), 2, std::string(40, 'b'), "2025-01-02T00:00:00.000Z", 3, 1.5);
  const auto sa = results::ResultStore::open_readonly(dir.file("a"));
  const auto sb = results::ResultStore::open_readonly(dir.file("b"));
  const std::string p1 = write_dashboard(dashboard_html(dash(sa, sb), {}), dir.file("site1"));
  const std::string p2 = write_dashboard(dashboard_html(dash(sa, sb), {}), dir.file("site2"));
  const auto slurp = [](const std::string& p) {
    std::ifstream f(p, std::ios::binary);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
  };
  const std::string html = slurp(p1);
  EXPECT_EQ(html, slurp(p2));
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("href=\"http"), std::string::npos);
  EXPECT_EQ(html.find("src="), std::string::npos);
  EXPECT_EQ(count(html, "http"), count(html, "http://www.w3.org/2000/svg"));  // namespaces only
  EXPECT_EQ(count(html, "<svg "), size_t(kCases));                            // one per case
}

TEST(Dashboard, StoreWithoutTheMetricIsRefused) {
  test::TempDir dir;
  make_store(dir.file("a"), 1, std::string(40, 'a'), "2025-01-01T00:00:00.000Z");
  const auto sa = results::ResultStore::open_readonly(dir.file("a"));
  DashboardOptions o;
  o.history.where = "context_len > 99999";
  EXPECT_THROW(build_dashboard(Named{{"a", &sa}}, o), std::invalid_argument);
  o.history.where = "";
  o.history.metric = "nope";
  EXPECT_THROW(build_dashboard(Named{{"a", &sa}}, o), std::invalid_argument);
}

}  // namespace
}  // namespace accel::reports
