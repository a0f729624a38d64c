// The regression dashboard on synthetic stores from two commits: an injected 20% slowdown of one
// case is flagged (page and verdicts) and listed first, noise alone never is, runs are ordered by
// start time, contexts sort as numbers, text from the store is escaped, and the page is
// self-contained and byte-identical when regenerated.
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
    // The regression is listed first, before the overview, and its group is the first group.
    EXPECT_EQ(count(html, "<tr class=\"regressed-row\""), 1u);
    EXPECT_LT(html.find("<tr class=\"regressed-row\""), html.find("id=\"overview\""));
    ASSERT_FALSE(d.groups.empty());
    EXPECT_EQ(d.groups.front().worst_rank, 0);
    EXPECT_LT(html.find("class=\"group has-regression\""), html.find("class=\"group\""));
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
  // One inline script (the filter), nothing loaded from anywhere.
  EXPECT_EQ(count(html, "<script"), 1u);
  EXPECT_NE(html.find("<script>\n"), std::string::npos);
  EXPECT_EQ(html.find("href=\"http"), std::string::npos);
  EXPECT_EQ(html.find("src="), std::string::npos);
  EXPECT_EQ(html.find("@import"), std::string::npos);
  EXPECT_EQ(html.find("url("), std::string::npos);
  EXPECT_EQ(count(html, "http"), count(html, "http://www.w3.org/2000/svg"));  // namespaces only
  // One chart per case and one overview per metric present (TTFT and decode speed here).
  const Dashboard d = dash(sa, sb);
  ASSERT_EQ(d.overviews.size(), 2u);
  EXPECT_EQ(d.overviews[0].metric, "ttft_s");
  EXPECT_EQ(count(html, "<svg "), size_t(kCases) + d.overviews.size());
  EXPECT_EQ(count(html, "<figure class=\"overview\""), 2u);
  // Every row links to a chart that exists.
  for (size_t i = 0; i < size_t(kCases); ++i) {
    EXPECT_NE(html.find("href=\"#case-" + std::to_string(i) + "\""), std::string::npos) << i;
    EXPECT_EQ(count(html, "id=\"case-" + std::to_string(i) + "\""), 1u) << i;
  }
}

// Text from the store (a parameter value, a sample id, a host name, a commit) cannot become markup.
TEST(Dashboard, TextFromTheStoreIsEscaped) {
  const std::string evil = "<img src=x onerror=alert(1)>\"'&</script><script>alert(2)</script>";
  test::TempDir dir;
  for (int s = 0; s < 2; ++s) {
    auto st = results::ResultStore::open(dir.file("s" + std::to_string(s)));
    auto info = test::full_run(evil);
    info.git_commit = (s ? "b" : "a") + evil;
    info.started_at = s ? "2025-01-02T00:00:00.000Z" : "2025-01-01T00:00:00.000Z";
    const std::string run = st.begin_run(info);
    for (const std::string& v : {evil, std::string("plain")})
      test::add_case(st, run, "specprefill", {{"note", v}, {"keep", 0.3}}, 512, evil,
                     std::vector<double>(9, 0.2));
  }
  const auto sa = results::ResultStore::open_readonly(dir.file("s0"));
  const auto sb = results::ResultStore::open_readonly(dir.file("s1"));
  const std::string html = dashboard_html(dash(sa, sb), {});
  EXPECT_EQ(count(html, "<script"), 1u);  // the page's own
  EXPECT_EQ(count(html, "</script>"), 1u);
  EXPECT_EQ(html.find("<img"), std::string::npos);
  EXPECT_EQ(html.find("onerror=alert(1)>"), std::string::npos);
  EXPECT_NE(html.find("&lt;img src=x onerror=alert(1)&gt;&quot;&apos;&amp;"), std::string::npos);
  // Attributes cannot be closed early either: no raw quote follows the injected text.
  EXPECT_EQ(html.find("alert(1)>\""), std::string::npos);
}

// Contexts sort as numbers (512 before 4000), within the group of their method and model.
TEST(Dashboard, CasesSortByContextLengthAsNumbers) {
  test::TempDir dir;
  for (int s = 0; s < 2; ++s) {
    auto st = results::ResultStore::open(dir.file("s" + std::to_string(s)));
    auto info = test::full_run();
    info.started_at = s ? "2025-01-02T00:00:00.000Z" : "2025-01-01T00:00:00.000Z";
    const std::string run = st.begin_run(info);
    for (int64_t ctx : {4000, 512, 16384, 1024})
      test::add_case(st, run, "baseline", nlohmann::json::object(), ctx, "s0",
                     std::vector<double>(9, 0.001 * double(ctx)));
  }
  const auto sa = results::ResultStore::open_readonly(dir.file("s0"));
  const auto sb = results::ResultStore::open_readonly(dir.file("s1"));
  const Dashboard d = dash(sa, sb);
  ASSERT_EQ(d.groups.size(), 1u);
  std::vector<int64_t> ctx;
  for (const auto& c : d.groups[0].cases) ctx.push_back(d.history.cases[c.index].context_len);
  EXPECT_EQ(ctx, (std::vector<int64_t>{512, 1024, 4000, 16384}));
  const std::string html = dashboard_html(d, {});
  EXPECT_LT(html.find(">512</a>"), html.find(">4000</a>"));
  EXPECT_LT(html.find(">4000</a>"), html.find(">16384</a>"));
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
