// The figures of `accelbench plot` on a hand-made store: every kind draws well-formed,
// self-contained SVG with the expected points, intervals, reference lines and legend; the same
// store gives byte-identical files; unknown kinds and empty selections are refused by name.
#include "reports/plots.h"

#include <gtest/gtest.h>

#include "reports/chart.h"
#include "reports/cost_model.h"
#include "reports/svg.h"
#include "tests/reports/plot_fixtures.h"
#include "tests/support/test_support.h"

namespace accel::reports {
namespace {

size_t count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
  return n;
}

void expect_self_contained_svg(const std::string& svg) {
  EXPECT_EQ(svg.rfind("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg ", 0), 0u);
  EXPECT_EQ(svg.substr(svg.size() - 7), "</svg>\n");
  EXPECT_EQ(svg.find("<script"), std::string::npos);
  EXPECT_EQ(svg.find("href"), std::string::npos);
  EXPECT_EQ(count(svg, "http"), 1u) << "only the SVG namespace may name a URL";
  EXPECT_EQ(count(svg, "<g"), count(svg, "</g>"));
}

class Plots : public ::testing::Test {
 protected:
  void SetUp() override { test::make_plot_store(dir_.file("p.sqlite")); }
  results::ResultStore store() const {
    return results::ResultStore::open_readonly(dir_.file("p.sqlite"));
  }
  test::TempDir dir_;
};

TEST_F(Plots, SpeedupVsContextHasOnePointWithIntervalPerMethodAndContext) {
  const std::string svg = plot_svg(store(), "speedup-vs-context", {});
  expect_self_contained_svg(svg);
  EXPECT_EQ(count(svg, "<circle class=\"point\""), 4u);  // keep 0.2 and 0.5 x 2 contexts
  EXPECT_EQ(count(svg, "class=\"interval\""), 4u);
  EXPECT_EQ(count(svg, "class=\"reference\""), 1u);  // speedup 1
  EXPECT_NE(svg.find("specprefill keep=0.2"), std::string::npos);
  EXPECT_NE(svg.find("Context length (tokens)"), std::string::npos);
  EXPECT_NE(svg.find("Speedup over baseline (×)"), std::string::npos);
  EXPECT_NE(svg.find(">1024<"), std::string::npos);  // log2 x ticks at the contexts
}

TEST_F(Plots, PhasesStacksEveryTtftPhasePerConfigurationAndContext) {
  const std::string svg = plot_svg(store(), "phases", {});
  expect_self_contained_svg(svg);
  EXPECT_EQ(count(svg, "<g class=\"bar\""), 6u);  // 3 configurations x 2 contexts
  // baseline: prefill + first_token; specprefill: 5 phases each.
  EXPECT_EQ(count(svg, "<rect class=\"segment\""), 2u * 2u + 4u * 5u);
  for (const char* p : {"draft_prefill", "lookahead", "score", "prefill", "first_token"})
    EXPECT_NE(svg.find(std::string(">") + p + "<"), std::string::npos) << p;
  EXPECT_NE(svg.find("Mean time (s)"), std::string::npos);
}

TEST_F(Plots, QualityVsKeepDrawsTheScoreOverKeepPerContext) {
  const std::string svg = plot_svg(store(), "quality-vs-keep", {});
  expect_self_contained_svg(svg);
  EXPECT_EQ(count(svg, "<g class=\"series\""), 2u);  // one per context
  EXPECT_EQ(count(svg, "<circle class=\"point\""), 4u);
  EXPECT_NE(svg.find("agreement.top1 (mean)"), std::string::npos);
  PlotOptions o;
  o.metric = "nope";
  EXPECT_THROW(
      {
        try {
          plot_svg(store(), "quality-vs-keep", o);
        } catch (const std::invalid_argument& e) {
          EXPECT_NE(std::string(e.what()).find("agreement.top1"), std::string::npos);
          throw;
        }
      },
      std::invalid_argument);
}

TEST_F(Plots, CostmodelScattersPredictedAgainstMeasuredWithTheIdentityLine) {
  const std::string svg = plot_svg(store(), "costmodel", {});
  expect_self_contained_svg(svg);
  // One point per costmodel table row: one per (keep, context), keep values are never pooled.
  const size_t rows = costmodel_table(store(), {}).rows.size();
  EXPECT_EQ(rows, 4u);
  EXPECT_EQ(count(svg, "<circle class=\"point\""), rows);
  EXPECT_EQ(count(svg, "<polyline"), 0u);  // a scatter
  EXPECT_EQ(count(svg, "class=\"identity\""), 1u);
  EXPECT_NE(svg.find("y = x"), std::string::npos);
  EXPECT_NE(svg.find("eps fit"), std::string::npos);
}

TEST_F(Plots, MetricOverCommitsHasOneCategoryPerRun) {
  const std::string svg = plot_svg(store(), "metric-over-commits", {});
  expect_self_contained_svg(svg);
  EXPECT_EQ(count(svg, "<g class=\"series\""), 6u);         // one per case
  EXPECT_NE(svg.find("0123456-dirty"), std::string::npos);  // the run's commit
  EXPECT_NE(svg.find("TTFT (s)"), std::string::npos);
}

TEST_F(Plots, SameStoreGivesByteIdenticalFiguresOfEveryKind) {
  test::make_plot_store(dir_.file("q.sqlite"));  // an independent store of the same data
  const auto other = results::ResultStore::open_readonly(dir_.file("q.sqlite"));
  for (const auto& kind : plot_kinds()) {
    const std::string a = plot_svg(store(), kind, {}), b = plot_svg(store(), kind, {});
    EXPECT_EQ(a, b) << kind;
    if (kind != "metric-over-commits") {  // the run ids and start times differ between stores
      EXPECT_EQ(a, plot_svg(other, kind, {})) << kind;
    }
  }
}

TEST_F(Plots, UnknownKindAndEmptySelectionAreRefusedByName) {
  try {
    plot_svg(store(), "pie", {});
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("'pie'"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("speedup-vs-context"), std::string::npos);
  }
  PlotOptions o;
  o.report.where = "context_len > 99999";
  for (const auto& kind : plot_kinds()) EXPECT_THROW(plot_svg(store(), kind, o), std::exception);
}

TEST(Chart, NiceTicksAreRoundAndCoverTheRange) {
  EXPECT_EQ(nice_ticks(0, 1), (std::vector<double>{0, 0.2, 0.4, 0.6, 0.8, 1.0}));
  EXPECT_EQ(nice_ticks(0.93, 1.31), (std::vector<double>{1.0, 1.1, 1.2, 1.3}));
  const auto t = nice_ticks(0, 37);
  EXPECT_EQ(t.front(), 0);
  EXPECT_GE(t.back(), 30);
}

TEST(Chart, EmptyChartIsRefusedAndNegativeZeroPrintsAsZero) {
  LineChart c;
  c.title = "empty";
  EXPECT_THROW(line_chart_svg(c), std::invalid_argument);
  EXPECT_EQ(svg::num(-0.04), "0.0");
  EXPECT_EQ(svg::escape("a<b & \"c\"\x01"), "a&lt;b &amp; &quot;c&quot; ");
}

TEST(SvgFile, FailedWriteLeavesNoFile) {
  test::TempDir dir;
  EXPECT_THROW(svg::write_file(dir.file("no/such/dir/x.svg"), "x"), std::runtime_error);
  svg::write_file(dir.file("x.svg"), "abc");
  EXPECT_TRUE(std::filesystem::exists(dir.file("x.svg")));
  EXPECT_FALSE(std::filesystem::exists(dir.file("x.svg.tmp")));
}

}  // namespace
}  // namespace accel::reports
