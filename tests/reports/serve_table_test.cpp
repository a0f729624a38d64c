// The serve report on a small hand-made store: percentiles worked by hand (R type 7), throughput
// from the point's wall time, the formats, a store without load points, and the SVG.
#include "reports/serve_table.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "results/schema.h"
#include "tests/results/store_fixtures.h"
#include "tests/support/test_support.h"

namespace accel {
namespace {

using results::LoadPointRecord;
using results::TrialRecord;

// One request of a point: TTFT, TPOT (NaN: one token), end to end, and its gaps.
TrialRecord request(const std::string& run, const std::string& key, int i, double ttft, double tpot,
                    double e2e, std::vector<double> itl, int64_t tokens) {
  TrialRecord t;
  t.case_key = key;
  t.trial_index = i;
  t.run_id = run;
  t.method = "plain";
  t.context_len = 64;
  t.workload = "load";
  t.sample_id = "request-" + std::to_string(i);
  t.ttft_s = ttft;
  t.decode_tokens = tokens;
  t.stats = {{"e2e_s", e2e},
             {"tpot_s", std::isnan(tpot) ? nlohmann::json() : nlohmann::json(tpot)},
             {"itl_s", itl}};
  return t;
}

LoadPointRecord point(const std::string& run, const std::string& key, int conc, double wall,
                      int64_t requests, int64_t tokens) {
  LoadPointRecord p;
  p.case_key = key;
  p.run_id = run;
  p.method = "plain";
  p.context_len = 64;
  p.concurrency = conc;
  p.request_rate = 0;
  p.requests = requests;
  p.wall_s = wall;
  p.output_tokens = tokens;
  return p;
}

class ServeTable : public ::testing::Test {
 protected:
  void SetUp() override {
    auto s = results::ResultStore::open(path);
    const std::string run = s.begin_run(test::full_run());
    // Point c=2: TTFTs 0.1..0.4 s; TPOTs 0.01, 0.02, 0.03 (the fourth answered one token);
    // ITL gaps 0.01..0.05 pooled; 4 requests, 10 output tokens in 2 s.
    s.record_load_point(point(run, "k2", 2, 2.0, 4, 10),
                        {request(run, "k2", 0, 0.1, 0.01, 0.13, {0.01, 0.02}, 3),
                         request(run, "k2", 1, 0.2, 0.02, 0.26, {0.03}, 2),
                         request(run, "k2", 2, 0.3, 0.03, 0.39, {0.04, 0.05}, 4),
                         request(run, "k2", 3, 0.4, NAN, 0.4, {}, 1)});
    // Point c=1: one request.
    s.record_load_point(point(run, "k1", 1, 0.5, 1, 5),
                        {request(run, "k1", 0, 0.05, 0.01, 0.09, {0.01, 0.01}, 5)});
  }
  test::TempDir dir;
  std::string path = dir.file("s.sqlite");
};

TEST_F(ServeTable, PercentilesAndThroughputAreTheHandWorkedValues) {
  const auto store = results::ResultStore::open_readonly(path);
  const reports::Table t = reports::serve_table(store, {});
  const nlohmann::json j = reports::to_json(t);
  ASSERT_EQ(j["rows"].size(), 2u);
  const auto& r1 = j["rows"][0];  // concurrency 1 sorts first
  const auto& r2 = j["rows"][1];
  EXPECT_EQ(r1["max_concurrency"], 1);
  EXPECT_EQ(r2["max_concurrency"], 2);
  // Type 7: h = (n - 1) q; x[floor h] + frac(h) (x[ceil h] - x[floor h]). Tolerance 1e-9 ms:
  // only rounding of the decimal inputs.
  const double tol = 1e-9;
  // TTFT 100, 200, 300, 400 ms: p50 h=1.5 -> 250; p90 h=2.7 -> 370; p99 h=2.97 -> 397.
  EXPECT_NEAR(r2["ttft_p50_ms"].get<double>(), 250, tol);
  EXPECT_NEAR(r2["ttft_p90_ms"].get<double>(), 370, tol);
  EXPECT_NEAR(r2["ttft_p99_ms"].get<double>(), 397, tol);
  // TPOT 10, 20, 30 ms (the one-token request has none): p50 20; p90 h=1.8 -> 28; p99 29.8.
  EXPECT_NEAR(r2["tpot_p50_ms"].get<double>(), 20, tol);
  EXPECT_NEAR(r2["tpot_p90_ms"].get<double>(), 28, tol);
  EXPECT_NEAR(r2["tpot_p99_ms"].get<double>(), 29.8, tol);
  // ITL pooled 10..50 ms: p50 30; p90 h=3.6 -> 46; p99 h=3.96 -> 49.6.
  EXPECT_NEAR(r2["itl_p50_ms"].get<double>(), 30, tol);
  EXPECT_NEAR(r2["itl_p90_ms"].get<double>(), 46, tol);
  EXPECT_NEAR(r2["itl_p99_ms"].get<double>(), 49.6, tol);
  // E2E 130, 260, 390, 400 ms: p50 = 325.
  EXPECT_NEAR(r2["e2e_p50_ms"].get<double>(), 325, tol);
  // 4 requests and 10 tokens in 2 s.
  EXPECT_NEAR(r2["request_throughput"].get<double>(), 2, tol);
  EXPECT_NEAR(r2["output_tok_s"].get<double>(), 5, tol);
  EXPECT_EQ(r2["requests"], 4);
  EXPECT_EQ(r2["request_rate"], 0);
  // One request: every percentile is its value.
  EXPECT_NEAR(r1["ttft_p99_ms"].get<double>(), 50, tol);
  EXPECT_NEAR(r1["output_tok_s"].get<double>(), 10, tol);
  // Markdown shows the same numbers and "inf" for all-at-once arrivals.
  const std::string md = reports::render(t, reports::Format::Markdown);
  EXPECT_NE(
      md.find("| plain | 64 | inf | 2 | 4 | 2.00 | 5.00 | 250 | 370 | 397 | 20.0 | 28.0 | 29.8 | "
              "30.0 | 46.0 | 49.6 | 325 |"),
      std::string::npos)
      << md;
  EXPECT_NE(reports::render(t, reports::Format::Csv).find("TTFT p50 (ms)"), std::string::npos);
  // The dispatcher knows the table; --where selects points through their requests.
  reports::ReportOptions opt;
  opt.where = "case_key = 'k1'";
  EXPECT_EQ(reports::to_json(reports::make_report(store, "serve", opt))["rows"].size(), 1u);
}

TEST_F(ServeTable, SvgHasOnePointPerSweepPoint) {
  const auto store = results::ResultStore::open_readonly(path);
  const auto paths = reports::write_serve_plots(store, {}, dir.file("svg"));
  ASSERT_EQ(paths.size(), 1u);
  EXPECT_EQ(std::filesystem::path(paths[0]).filename(), "serve-ctx64.svg");
  std::ifstream f(paths[0]);
  std::stringstream ss;
  ss << f.rdbuf();
  const std::string svg = ss.str();
  EXPECT_NE(svg.find("<svg"), std::string::npos);
  EXPECT_NE(svg.find("concurrency 1, rate inf"), std::string::npos);
  EXPECT_NE(svg.find("concurrency 2, rate inf"), std::string::npos);
}

TEST_F(ServeTable, AStoredPointKeepsTheFirstAndAStoreWithoutPointsSaysSo) {
  {
    auto s = results::ResultStore::open(path);
    const std::string run = s.begin_run(test::full_run());
    // Same case again (a concurrent writer): the first point and its requests stay.
    s.record_load_point(point(run, "k1", 1, 9.0, 1, 5),
                        {request(run, "k1", 0, 9.0, 0.01, 9.5, {}, 5)});
    ASSERT_EQ(s.load_points().size(), 2u);
    EXPECT_EQ(s.load_points()[0].wall_s, 0.5);
    EXPECT_THROW(s.record_load_point(point(run, "k3", 0, 1, 1, 1), {}), std::invalid_argument);
  }
  test::TempDir other;
  auto empty = results::ResultStore::open(other.file("e.sqlite"));
  EXPECT_TRUE(empty.load_points().empty());
  try {
    reports::serve_table(empty, {});
    FAIL() << "no throw";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("max_concurrency"), std::string::npos);
  }
}

// Unthrottled arrivals (rate "inf", stored as 0) are the largest rate: their rows sort after
// every finite rate of the same configuration and length, not before.
TEST(ServeTableOrder, InfiniteRateSortsAfterFiniteRates) {
  test::TempDir dir;
  const std::string path = dir.file("r.sqlite");
  {
    auto s = results::ResultStore::open(path);
    const std::string run = s.begin_run(test::full_run());
    for (const auto& [key, rate] :
         std::vector<std::pair<std::string, double>>{{"inf", 0.0}, {"r20", 20.0}, {"r5", 5.0}}) {
      LoadPointRecord p = point(run, key, 1, 1.0, 1, 5);
      p.request_rate = rate;
      s.record_load_point(p, {request(run, key, 0, 0.05, 0.01, 0.09, {0.01}, 5)});
    }
  }
  const auto store = results::ResultStore::open_readonly(path);
  const nlohmann::json j = reports::to_json(reports::serve_table(store, {}));
  ASSERT_EQ(j["rows"].size(), 3u);
  EXPECT_EQ(j["rows"][0]["request_rate"], 5);
  EXPECT_EQ(j["rows"][1]["request_rate"], 20);
  EXPECT_EQ(j["rows"][2]["request_rate"], 0);  // shown as "inf"
}

// A store written before v8 (no load_points table) opens read-only and reports no points.
TEST(ServeTableOldStore, ReadsAV7StoreWithoutLoadPoints) {
  test::TempDir dir;
  const std::string p = dir.file("old.sqlite");
  {
    sqlite::Database db(p, sqlite::Database::Mode::ReadWriteCreate);
    db.exec(results::schema_v1_ddl());
    for (const auto& m : results::migrations())
      if (m.to_version <= 7) db.exec(m.sql);
  }
  const auto store = results::ResultStore::open_readonly(p);
  EXPECT_EQ(store.schema_version(), 7);
  EXPECT_TRUE(store.load_points().empty());
  EXPECT_THROW(reports::serve_table(store, {}), std::invalid_argument);
  // Opening it for writing migrates it to v8 with the table.
  auto rw = results::ResultStore::open(p);
  EXPECT_EQ(rw.schema_version(), results::kSchemaVersion);
  EXPECT_FALSE(results::table_columns(rw.db(), "load_points").empty());
}

}  // namespace
}  // namespace accel
