// The dashboard's arrangement on hand-built histories: natural order of names, groups by method
// and model, cases by numeric context length, labels of only what varies within a group, groups
// with a regression first; and the overview's geometric mean of each case's ratio to its first run.
#include "reports/dashboard_groups.h"

#include <gtest/gtest.h>

#include "reports/dashboard_overview.h"

namespace accel::reports {
namespace {

// A case with one value per given median, in runs 0, 1, ...
CaseHistory make_case(const std::string& method, const std::string& model, int64_t ctx,
                      const nlohmann::json& config, std::vector<double> medians = {1.0},
                      const std::string& sample = "s0") {
  CaseHistory c;
  c.method = method;
  c.model = model;
  c.kv_dtype = "f32";
  c.workload = "synthetic";
  c.sample_id = sample;
  c.context_len = ctx;
  c.config = config;
  c.case_key =
      method + "|" + model + "|" + config.dump() + "|" + std::to_string(ctx) + "|" + sample;
  for (size_t r = 0; r < medians.size(); ++r) {
    HistoryValue v;
    v.run = r;
    v.median = medians[r];
    c.values.push_back(v);
  }
  return c;
}

// 18 parameters as a resolved SpecPrefill configuration has, `keep` given.
nlohmann::json eighteen(double keep) {
  nlohmann::json p = {{"keep", keep}};
  for (int i = 0; p.size() < 18; ++i) p["p" + std::to_string(i)] = i;
  return p;
}

std::vector<int> all_ok(const History& h) {
  return std::vector<int>(h.cases.size(), verdict_rank(true, Verdict::Ok));
}

TEST(DashboardGroups, NaturalOrderComparesDigitRunsAsNumbers) {
  EXPECT_TRUE(natural_less("s2", "s10"));
  EXPECT_FALSE(natural_less("s10", "s2"));
  EXPECT_TRUE(natural_less("ctx=512", "ctx=4000"));
  EXPECT_TRUE(natural_less("a", "a1"));
  EXPECT_TRUE(natural_less("baseline", "specprefill"));
  EXPECT_FALSE(natural_less("x7", "x7"));
  EXPECT_FALSE(natural_less("x007", "x7"));  // equal as numbers: neither is less
  EXPECT_FALSE(natural_less("x7", "x007"));
  EXPECT_TRUE(natural_less("v99999999999999999999", "v100000000000000000000"));  // no overflow
}

TEST(DashboardGroups, GroupsByMethodAndModelAndSortsContextNumerically) {
  History h;
  for (int64_t ctx : {4000, 512, 1024}) {
    h.cases.push_back(make_case("specprefill", "tiny/target", ctx, eighteen(0.3)));
    h.cases.push_back(make_case("baseline", "tiny/target", ctx, nlohmann::json::object()));
  }
  h.cases.push_back(make_case("specprefill", "other", 512, eighteen(0.3)));
  const auto groups = group_cases(h, all_ok(h));
  ASSERT_EQ(groups.size(), 3u);
  EXPECT_EQ(groups[0].title, "baseline · tiny/target");
  EXPECT_EQ(groups[1].title, "specprefill · other");
  EXPECT_EQ(groups[2].title, "specprefill · tiny/target");
  for (const size_t g : {size_t(0), size_t(2)}) {
    std::vector<int64_t> ctx;
    for (const auto& c : groups[g].cases) ctx.push_back(h.cases[c.index].context_len);
    EXPECT_EQ(ctx, (std::vector<int64_t>{512, 1024, 4000})) << groups[g].title;
  }
  size_t n = 0;
  for (const auto& g : groups) n += g.cases.size();
  EXPECT_EQ(n, h.cases.size());  // every case exactly once
}

TEST(DashboardGroups, LabelsShowOnlyWhatVariesWithinTheGroup) {
  History h;
  for (double keep : {0.3, 0.1}) h.cases.push_back(make_case("sp", "m", 512, eighteen(keep)));
  h.cases.push_back(make_case("sp", "m", 512, eighteen(0.1), {1.0}, "s10"));
  h.cases.push_back(make_case("sp", "m", 512, eighteen(0.1), {1.0}, "s2"));
  h.cases.push_back(make_case("sp", "n", 512, eighteen(0.5)));  // alone in its group
  const auto groups = group_cases(h, all_ok(h));
  ASSERT_EQ(groups.size(), 2u);
  std::vector<std::string> labels;
  for (const auto& c : groups[0].cases) labels.push_back(c.label);
  // keep numerically, then the sample naturally; never the 17 parameters that are the same.
  EXPECT_EQ(labels, (std::vector<std::string>{"keep=0.1, sample=s0", "keep=0.1, sample=s2",
                                              "keep=0.1, sample=s10", "keep=0.3, sample=s0"}));
  EXPECT_NE(groups[0].fixed.find("p16=16"), std::string::npos) << groups[0].fixed;
  EXPECT_EQ(groups[0].fixed.find("keep="), std::string::npos) << groups[0].fixed;
  ASSERT_EQ(groups[1].cases.size(), 1u);
  EXPECT_EQ(groups[1].cases[0].label, "");  // nothing varies in a group of one
  EXPECT_NE(groups[1].fixed.find("keep=0.5"), std::string::npos);
  // The filter text holds every parameter, so a fixed one still finds the case.
  EXPECT_NE(groups[1].cases[0].full_text.find("p3=3"), std::string::npos);
  EXPECT_NE(groups[1].cases[0].full_text.find("ctx=512"), std::string::npos);
}

TEST(DashboardGroups, NumericParameterValuesSortByValue) {
  History h;
  for (double keep : {10.0, 9.0, 0.25}) h.cases.push_back(make_case("sp", "m", 512, {{"k", keep}}));
  const auto groups = group_cases(h, all_ok(h));
  ASSERT_EQ(groups.size(), 1u);
  std::vector<std::string> labels;
  for (const auto& c : groups[0].cases) labels.push_back(c.label);
  EXPECT_EQ(labels, (std::vector<std::string>{"k=0.25", "k=9.0", "k=10.0"}));
}

TEST(DashboardGroups, GroupsWithARegressionComeFirst) {
  History h;
  h.cases.push_back(make_case("a-method", "m", 512, {}));
  h.cases.push_back(make_case("b-method", "m", 512, {}));
  h.cases.push_back(make_case("z-method", "m", 512, {{"k", 1}}));
  h.cases.push_back(make_case("z-method", "m", 4096, {{"k", 1}}));
  std::vector<int> ranks = {verdict_rank(true, Verdict::Ok), verdict_rank(true, Verdict::Improved),
                            verdict_rank(true, Verdict::Ok),
                            verdict_rank(true, Verdict::Regressed)};
  const auto groups = group_cases(h, ranks);
  ASSERT_EQ(groups.size(), 3u);
  EXPECT_EQ(groups[0].method, "z-method");
  EXPECT_EQ(groups[0].worst_rank, 0);
  EXPECT_EQ(groups[1].method, "b-method");  // improved before unchanged
  EXPECT_EQ(groups[2].method, "a-method");
  // Inside the group the order stays by context, the regressed 4096 after 512.
  EXPECT_EQ(h.cases[groups[0].cases[0].index].context_len, 512);
  EXPECT_EQ(verdict_rank(false, Verdict::Regressed), 4);  // one run: never judged
}

TEST(DashboardOverview, GeometricMeanOfEachCaseRelativeToItsFirstRun) {
  History h;
  h.metric = "ttft_s";
  for (const char* c : {"aaaaaaa1", "bbbbbbb2", "bbbbbbb2"}) {
    HistoryRun r;
    r.commit = c;
    r.started_at = "2025-01-01T00:00:00.000Z";
    h.runs.push_back(r);
  }
  h.cases.push_back(make_case("sp", "m", 512, {{"k", 1}}, {1.0, 1.2, 1.44}));
  h.cases.push_back(make_case("sp", "m", 1024, {{"k", 1}}, {2.0, 2.0, 2.0}));
  h.cases.push_back(make_case("baseline", "m", 512, {}, {4.0, 2.0}));  // absent from the last run
  const Overview o = overview_of(h);
  EXPECT_EQ(o.run_labels, (std::vector<std::string>{"aaaaaaa", "bbbbbbb", "bbbbbbb #2"}));
  ASSERT_EQ(o.series.size(), 2u);
  EXPECT_EQ(o.series[0].method, "baseline");
  EXPECT_DOUBLE_EQ(o.series[0].relative[0], 1.0);
  EXPECT_DOUBLE_EQ(o.series[0].relative[1], 0.5);
  EXPECT_TRUE(std::isnan(o.series[0].relative[2]));
  EXPECT_EQ(o.series[1].n_cases, (std::vector<size_t>{2, 2, 2}));
  // sqrt(1.2 * 1) and sqrt(1.44 * 1); exp/log round trips agree to a few ulps (tolerance 1e-12).
  EXPECT_NEAR(o.series[1].relative[0], 1.0, 1e-12);
  EXPECT_NEAR(o.series[1].relative[1], std::sqrt(1.2), 1e-12);
  EXPECT_NEAR(o.series[1].relative[2], 1.2, 1e-12);
  const std::string svg = overview_svg(o);
  EXPECT_NE(svg.find("class=\"reference\""), std::string::npos);  // the dashed line at 1
  EXPECT_NE(svg.find("data-name=\"sp\""), std::string::npos);
}

}  // namespace
}  // namespace accel::reports
