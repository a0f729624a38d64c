// Tests of reports::bench_table on hand-made Google Benchmark JSON: medians over repetitions,
// ratios to the reference with intervals, the floor, DRAM and f32 P.V floor columns, aggregate rows
// ignored, and clear errors on input that is not benchmark output. Tests only.
#include <gtest/gtest.h>

#include "reports/bench_table.h"

namespace {

using nlohmann::json;

json entry(const std::string& name, double t, const char* unit = "us", double kv_bytes = 0,
           const char* run_type = "iteration") {
  json e = {{"name", name}, {"run_type", run_type}, {"real_time", t}, {"time_unit", unit}};
  if (kv_bytes > 0) e["kv_bytes"] = kv_bytes;
  return e;
}

json sample() {
  json b = json::array();
  for (double t : {10.0, 12.0, 11.0})
    b.push_back(entry("kv_attention/fused_int4/seed/1024/real_time", t, "us", 1e6));
  for (double t : {40.0, 44.0, 42.0}) b.push_back(entry("kv_attention/f32/seed/1024/real_time", t));
  for (double t : {2.0, 2.0, 2.0})
    b.push_back(entry("kv_attention/stream_int4/seed/1024/real_time", t));
  b.push_back(entry("kv_attention/f32/seed/1024/real_time_median", 999.0, "us", 0, "aggregate"));
  b.push_back(
      entry("kv_attention/seed_naive/seed/1024/iterations:1/repeats:1/real_time", 0.5, "s"));
  json dram = entry("kv_attention/dram_read/1073741824", 100.0, "ms");  // 1e6 B in 10 us below
  dram["bytes"] = 1e10;                                                 // 1e10 B / 0.1 s = 100 GB/s
  b.push_back(dram);
  b.push_back(entry("other/f32/seed/1024", 5.0));  // another family: ignored
  return json{{"benchmarks", b}};
}

TEST(BenchTable, MediansRatiosFloorAndDramColumnsFromRepetitions) {
  const auto t = accel::reports::bench_table(sample());
  ASSERT_EQ(t.rows.size(), 1u);
  std::map<std::string, const accel::reports::Cell*> c;
  for (size_t i = 0; i < t.columns.size(); ++i) c[t.columns[i].key] = &t.rows[0][i];
  EXPECT_EQ(c.at("fused_int4_us")->data["median_us"], 11.0);
  EXPECT_EQ(c.at("f32_us")->data["median_us"], 42.0);  // the aggregate row (999) is ignored
  EXPECT_EQ(c.at("seed_naive_us")->data["median_us"], 5e5);
  EXPECT_DOUBLE_EQ(c.at("f32_ratio")->data["ratio"].get<double>(), 42.0 / 11.0);
  EXPECT_LE(c.at("f32_ratio")->data["lo"].get<double>(), 42.0 / 11.0);
  EXPECT_GE(c.at("f32_ratio")->data["hi"].get<double>(), 42.0 / 11.0);
  EXPECT_NE(c.at("f32_ratio")->text.find(" ["), std::string::npos);        // an interval is shown
  EXPECT_EQ(c.at("seed_naive_ratio")->text.find('['), std::string::npos);  // one cold run
  EXPECT_DOUBLE_EQ(c.at("floor_ratio")->data["ratio"].get<double>(), 11.0 / 2.0);
  // 1e6 kv bytes at 100 GB/s stream in 10 us: 11 / 10.
  EXPECT_NEAR(c.at("dram_ratio")->data["ratio"].get<double>(), 1.1, 1e-12);
  EXPECT_EQ(c.count("stream_int4_ratio"), 0u);
  EXPECT_EQ(c.count("pv_floor_ratio"), 0u);  // no fma_peak entry in the run
}

// 2e4 P.V FMAs = 4e4 flops at the best peak of 2e9 flops/s take 20 us; the 1e6 kv bytes stream
// in 10 us at 100 GB/s: floor 2.0. The other fma_peak repetition (1e9) and an f32 entry's own
// pv_fmas do not count (the reference's row and the best repetition do).
TEST(BenchTable, PvFloorIsTheReferencesFmasAtTheBestMeasuredPeakOverTheDramStreamTime) {
  json b = sample();
  for (auto& e : b["benchmarks"])
    if (e["name"].get<std::string>().find("fused_int4") != std::string::npos)
      e["pv_fmas"] = 2e4;
    else if (e["name"].get<std::string>().find("/f32/") != std::string::npos)
      e["pv_fmas"] = 1e9;
  for (double f : {1e9, 2e9}) {
    json peak = entry("kv_attention/fma_peak/0/iterations:1/real_time", 300.0, "ms");
    peak["flops_per_s"] = f;
    b["benchmarks"].push_back(peak);
  }
  const auto t = accel::reports::bench_table(b);
  ASSERT_EQ(t.rows.size(), 1u);
  std::map<std::string, const accel::reports::Cell*> c;
  for (size_t i = 0; i < t.columns.size(); ++i) c[t.columns[i].key] = &t.rows[0][i];
  EXPECT_NEAR(c.at("pv_floor_ratio")->data["ratio"].get<double>(), 2.0, 1e-12);
  EXPECT_EQ(c.at("pv_floor_ratio")->text, "2.00×");
  EXPECT_EQ(c.count("fma_peak_us"), 0u);  // a machine measurement, not a variant
  accel::reports::BenchTableOptions no_peak;
  no_peak.use_fma_peak = false;
  const auto t2 = accel::reports::bench_table(b, no_peak);
  for (const auto& col : t2.columns) EXPECT_NE(col.key, "pv_floor_ratio");
}

TEST(BenchTable, RefusesInputThatIsNotBenchmarkOutputNamingTheProblem) {
  EXPECT_THROW(accel::reports::bench_table(json{{"x", 1}}), std::invalid_argument);
  EXPECT_THROW(accel::reports::bench_table(json{{"benchmarks", json::array()}}),
               std::invalid_argument);
  json bad = {{"benchmarks", {entry("kv_attention/f32/seed/notanumber", 1.0)}}};
  try {
    accel::reports::bench_table(bad);
    FAIL() << "accepted a non-numeric size";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("kv_attention/f32/seed/notanumber"), std::string::npos);
  }
  json unit = {{"benchmarks", {entry("kv_attention/f32/seed/1", 1.0, "fortnights")}}};
  EXPECT_THROW(accel::reports::bench_table(unit), std::invalid_argument);
}

}  // namespace
