// Tests of reports::bench_table on hand-made Google Benchmark JSON: medians over repetitions,
// ratios to the reference with intervals, the floor, DRAM and f32 P.V floor columns, the roofline
// columns, aggregate rows ignored, and clear errors on input that is not benchmark output. Tests
// only.
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

// The roofline column, worked by hand. Rates in the run: read 100 GB/s (sample()), FMA 2e9 flop/s,
// int8 4e9 multiply-adds/s. fused_int4 (median 11 us): 1e6 bytes -> 10 us, 1e4 fma_flops -> 5 us:
// memory binds, 1.1x. f32 (median 42 us): no bytes counter, 4e4 fma_flops -> 20 us: 2.1x fma.
// A q8 variant (median 30 us) with 1.2e5 int8 multiply-adds -> 30 us: 1.0x int8. stream_int4 has
// no counters: no column of its own.
TEST(BenchTable, RooflineIsTheTimeOverTheLargestMeasuredBoundNamingIt) {
  json b = sample();
  for (auto& e : b["benchmarks"]) {
    const std::string n = e["name"];
    if (n.find("fused_int4") != std::string::npos) e["fma_flops"] = 1e4;
    if (n.find("/f32/seed/1024/real_time") != std::string::npos && e["run_type"] == "iteration")
      e["fma_flops"] = 4e4;
  }
  for (double t : {30.0, 29.0, 31.0}) {
    json q = entry("kv_attention/q8/seed/1024/real_time", t);
    q["int8_macs"] = 1.2e5;
    b["benchmarks"].push_back(q);
  }
  json fma = entry("kv_attention/fma_peak/0", 300.0, "ms");
  fma["flops_per_s"] = 2e9;
  json int8 = entry("kv_attention/int8_peak/0", 300.0, "ms");
  int8["ops_per_s"] = 4e9;
  int8["label"] = "vpmaddubsw";
  b["benchmarks"].push_back(fma);
  b["benchmarks"].push_back(int8);
  const auto t = accel::reports::bench_table(b);
  ASSERT_EQ(t.rows.size(), 1u);
  std::map<std::string, const accel::reports::Cell*> c;
  for (size_t i = 0; i < t.columns.size(); ++i) c[t.columns[i].key] = &t.rows[0][i];
  EXPECT_NEAR(c.at("fused_int4_roofline")->data["ratio"].get<double>(), 1.1, 1e-12);
  EXPECT_EQ(c.at("fused_int4_roofline")->data["bound"], "mem");
  EXPECT_NEAR(c.at("f32_roofline")->data["ratio"].get<double>(), 2.1, 1e-12);
  EXPECT_EQ(c.at("f32_roofline")->data["bound"], "fma");
  EXPECT_NEAR(c.at("q8_roofline")->data["ratio"].get<double>(), 1.0, 1e-12);
  EXPECT_EQ(c.at("q8_roofline")->text, "1.00× int8");
  EXPECT_EQ(c.count("stream_int4_roofline"), 0u);
  EXPECT_EQ(c.count("int8_peak_us"), 0u);  // a machine measurement, not a variant
  bool named = false;
  for (const auto& f : t.footnotes)
    named |= f.find("int8 dot 4.00 G") != std::string::npos &&
             f.find("int8 via vpmaddubsw") != std::string::npos;
  EXPECT_TRUE(named) << "the footnote gives the rates and the instruction";
}

// Rates are matched by thread count: the same 4e4 flops in 40 us are 1.0x a 1e9 flop/s one-thread
// peak and 2.0x a 2e9 flop/s two-thread peak.
TEST(BenchTable, RooflineUsesTheRatesOfTheEntrysThreadCount) {
  json b = json::array();
  for (auto [shape, threads] : {std::pair{"a", 1}, std::pair{"b", 2}}) {
    json e = entry(std::string("k/f32/") + shape + "/64", 40.0);
    e["fma_flops"] = 4e4;
    e["threads"] = threads;
    b.push_back(e);
    json peak = entry("k/fma_peak/t" + std::to_string(threads), 300.0, "ms");
    peak["flops_per_s"] = 1e9 * threads;
    peak["threads"] = threads;
    b.push_back(peak);
  }
  accel::reports::BenchTableOptions opt;
  opt.family = "k";
  opt.reference = "f32";
  const auto t = accel::reports::bench_table(json{{"benchmarks", b}}, opt);
  ASSERT_EQ(t.rows.size(), 2u);
  size_t col = 0;
  while (t.columns[col].key != "f32_roofline") ++col;
  EXPECT_NEAR(t.rows[0][col].data["ratio"].get<double>(), 1.0, 1e-12);  // shape a, 1 thread
  EXPECT_NEAR(t.rows[1][col].data["ratio"].get<double>(), 2.0, 1e-12);  // shape b, 2 threads
}

// A kernel doing both kinds of arithmetic, worked by hand: 4e4 fma_flops at 2e9 flop/s -> 20 us,
// 4e4 int8 multiply-adds at 4e9/s -> 10 us. With the run's port sharing measured at 0.5 (median of
// 0.2, 0.5, 0.9) the bound is 20 + 0.5 * 10 = 25 us, and the 50 us kernel is 2.0x "fma+int8";
// without an overlap entry the larger term alone binds: 20 us, 2.5x fma.
TEST(BenchTable, RooflineAddsTheSharedPartOfTheSmallerArithmeticTerm) {
  const auto run = [](bool with_overlap) {
    json b = json::array();
    json e = entry("k/mixed/a/64", 50.0);
    e["fma_flops"] = 4e4;
    e["int8_macs"] = 4e4;
    b.push_back(e);
    json fma = entry("k/fma_peak/t0", 300.0, "ms");
    fma["flops_per_s"] = 2e9;
    b.push_back(fma);
    json int8 = entry("k/int8_peak/t0", 300.0, "ms");
    int8["ops_per_s"] = 4e9;
    b.push_back(int8);
    if (with_overlap)
      for (double shared : {0.2, 0.9, 0.5}) {
        json o = entry("k/fma_int8_overlap/t0", 900.0, "ms");
        o["shared"] = shared;
        b.push_back(o);
      }
    accel::reports::BenchTableOptions opt;
    opt.family = "k";
    opt.reference = "mixed";
    return accel::reports::bench_table(json{{"benchmarks", b}}, opt);
  };
  for (bool with_overlap : {true, false}) {
    const auto t = run(with_overlap);
    ASSERT_EQ(t.rows.size(), 1u);
    size_t col = 0;
    while (t.columns[col].key != "mixed_roofline") ++col;
    const auto& cell = t.rows[0][col];
    EXPECT_NEAR(cell.data["ratio"].get<double>(), with_overlap ? 2.0 : 2.5, 1e-12);
    EXPECT_EQ(cell.data["bound"], with_overlap ? "fma+int8" : "fma");
    EXPECT_EQ(t.columns.size(), 4u) << "the overlap entries are machine rates, not a variant";
  }
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
