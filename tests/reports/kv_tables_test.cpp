// Report tables over a KV cache type sweep: rows of two KV types stay apart in every table, the
// "KV" column appears only when some trial's type is not f32 (an empty type in old stores is f32),
// every speedup is against the baseline with an f32 cache, and the `decode` table's figures on a
// hand-made store.
#include <gtest/gtest.h>

#include <cmath>

#include "reports/cost_model.h"
#include "reports/tables.h"
#include "tests/reports/line_match.h"
#include "tests/results/store_fixtures.h"
#include "tests/support/test_support.h"

namespace accel::reports {
namespace {

using test::lines_match;

// One case of `kv` trials with the given TTFTs (case keys kept apart per KV type).
std::vector<results::TrialRecord> kv_case(const std::string& run, const std::string& method,
                                          const nlohmann::json& params, int64_t ctx,
                                          const std::string& kv, const std::vector<double>& ttfts) {
  std::vector<results::TrialRecord> v;
  for (size_t i = 0; i < ttfts.size(); ++i) {
    auto t = test::simple_trial(run, method, params, ctx, "s0", int64_t(i), ttfts[i]);
    t.kv_dtype = kv;
    t.case_key += "|kv=" + kv;
    v.push_back(t);
  }
  return v;
}

std::map<std::string, double> agreement(double first, double top1, double kl_mean, double kl_max) {
  return {{"agreement.first_token", first},
          {"agreement.top1", top1},
          {"agreement.kl_mean", kl_mean},
          {"agreement.kl_max", kl_max}};
}

// Context 1024, one sample:
//   baseline f32     TTFT {1.0, 1.1, 1.2}   -> 1.10 ± 0.10, prefill 1.0
//   baseline f16     TTFT {0.8, 0.9, 1.0}   -> 0.900 ± 0.100, prefill 0.8, speedup 1.10/0.90
//   specprefill f32  TTFT {0.5, 0.55, 0.6}  -> 0.550 ± 0.050, speedup 1.10/0.55 = 2.00
//   specprefill f16  TTFT {0.4, 0.45, 0.5}  -> 0.450 ± 0.050, speedup 1.10/0.45 = 2.44 (against
//                    the f16 baseline it would be 2.00; pooled with f32 the baseline would be 1.00)
// SpecPrefill scores 0.1 s (draft_prefill + lookahead + score) and keeps 200 of 1000 prompt
// tokens: r = 0.1 / 1.0 (f32 baseline prefill) = 0.1 for both KV types, k = 0.2.
void fill_kv(results::ResultStore& s, const std::string& f32_name = "f32") {
  const std::string run = s.begin_run(test::full_run());
  const nlohmann::json none = nlohmann::json::object(), k3 = {{"keep", 0.3}, {"lookahead", 8}};
  auto base32 = kv_case(run, "baseline", none, 1024, f32_name, {1.0, 1.1, 1.2});
  auto base16 = kv_case(run, "baseline", none, 1024, "f16", {0.8, 0.9, 1.0});
  for (auto& t : base32) t.phases = {{"prefill", 1.0}};
  for (auto& t : base16) t.phases = {{"prefill", 0.8}};
  auto sp32 = kv_case(run, "specprefill", k3, 1024, f32_name, {0.5, 0.55, 0.6});
  auto sp16 = kv_case(run, "specprefill", k3, 1024, "f16", {0.4, 0.45, 0.5});
  for (auto* v : {&sp32, &sp16})
    for (auto& t : *v) {
      t.draft = results::ModelRef{"/m/draft.gguf", "sha-draft", "llama", 100};
      t.phases = {{"draft_prefill", 0.06}, {"lookahead", 0.03}, {"score", 0.01}, {"prefill", 0.2}};
      t.prompt_tokens = 1000;
      t.kept_tokens = 200;
    }
  for (auto& t : sp32) t.scores = agreement(1.0, 0.5, 0.2, 0.4);
  for (auto& t : sp16) t.scores = agreement(0.0, 0.25, 0.6, 0.8);
  for (const auto* v : {&base32, &base16, &sp32, &sp16}) s.record_case(*v);
}

struct KvFixture : ::testing::Test {
  test::TempDir dir;
  std::string path = dir.file("kv.sqlite");
  void SetUp() override {
    auto s = results::ResultStore::open(path);
    fill_kv(s);
  }
  Table table(const std::string& name, ReportOptions opt = {}) {
    auto s = results::ResultStore::open_readonly(path);
    return make_report(s, name, opt);
  }
  std::string print(const std::string& name, ReportOptions opt = {}) {
    return render(table(name, opt), Format::Markdown);
  }
};

TEST_F(KvFixture, RowsOfTwoKvTypesAreNotMerged) {
  EXPECT_TRUE(
      lines_match(print("ttft"), {"| Method | Params | KV | TTFT 1024 (s) | Speedup 1024 |",
                                  "| baseline |  | f32 | 1.10 ± 0.10 | 1.00× |",
                                  "| baseline |  | f16 | 0.900 ± 0.100 | 1.22× [%f, %f] |",
                                  "| specprefill |  | f32 | 0.550 ± 0.050 | 2.00× [%f, %f] |",
                                  "| specprefill |  | f16 | 0.450 ± 0.050 | 2.44× [%f, %f] |"}));
  EXPECT_TRUE(lines_match(
      print("phases"),
      {"| Method | Params | KV | Context | draft_prefill | lookahead | score | prefill | TTFT | n "
       "|",
       "| baseline |  | f32 | 1024 | — | — | — | 1.00 | 1.10 | 3 |",
       "| baseline |  | f16 | 1024 | — | — | — | 0.800 | 0.900 | 3 |",
       "| specprefill |  | f32 | 1024 | 0.0600 | 0.0300 | 0.0100 | 0.200 | 0.550 | 3 |",
       "| specprefill |  | f16 | 1024 | 0.0600 | 0.0300 | 0.0100 | 0.200 | 0.450 | 3 |"}));
  ReportOptions keep;
  keep.param = "keep";
  EXPECT_TRUE(lines_match(
      print("ablation", keep),
      {"| Method | Params | KV | keep | Context | TTFT (s) | Speedup | agreement.first_token | "
       "agreement.kl_max | agreement.kl_mean | agreement.top1 | n |",
       "| specprefill |  | f32 | 0.3 | 1024 | 0.550 ± 0.050 | 2.00× [%f, %f] | 1.00 | 0.400 | "
       "0.200 | 0.500 | 3 |",
       "| specprefill |  | f16 | 0.3 | 1024 | 0.450 ± 0.050 | 2.44× [%f, %f] | 0.00 | 0.800 | "
       "0.600 | 0.250 | 3 |"}));
  EXPECT_TRUE(lines_match(
      print("agreement"),
      {"| Target | Method | Params | KV | Context | First token | Top-1 | Mean KL | Max KL | "
       "Samples |",
       "| target | specprefill | draft=draft, keep=0.3, lookahead=8 | f32 | 1024 | 1.00 | 0.500 | "
       "0.200 | 0.400 | 1 |",
       "| target | specprefill | draft=draft, keep=0.3, lookahead=8 | f16 | 1024 | 0.00 | 0.250 | "
       "0.600 | 0.800 | 1 |",
       "Note: KV: the row's target KV cache type; every type is scored against the reference "
       "method's run with an f32 KV cache."}));
  EXPECT_TRUE(lines_match(print("costmodel"),
                          {"| Target | Draft | Method | KV | Context | keep | k | r | r (FLOPs) | "
                           "Pred. 1/(r+k) | Measured | eps | G | Pred. lin+quad | G lin+quad | "
                           "G lin+quad (LOCO) | n |",
                           "| target | draft | specprefill | f32 | 1024 | 0.3 | "
                           "0.200 | 0.100 | — | 3.33× | 2.00× [%f, %f] | 0.200 | 1.67 | — | — | "
                           "— | 3 |",
                           "| target | draft | specprefill | f16 | 1024 | 0.3 | "
                           "0.200 | 0.100 | — | 3.33× | 2.44× [%f, %f] | 0.109 | 1.36 | — | — | "
                           "— | 3 |",
                           "Note: eps fit (least squares, target architecture llama, KV f32, 1 "
                           "configurations): 0.2000, rms residual of 1/S 0.0000.",
                           "Note: eps fit (least squares, target architecture llama, KV f16, 1 "
                           "configurations): 0.1091, rms residual of 1/S 0.0000."}));
}

TEST_F(KvFixture, SpeedupsUseTheF32Baseline) {
  const auto j = to_json(table("ttft"));
  ASSERT_EQ(j["rows"].size(), 4u);
  EXPECT_EQ(j["rows"][0]["speedup@1024"], (nlohmann::json{{"ratio", 1.0}}));
  EXPECT_NEAR(j["rows"][1]["speedup@1024"]["ratio"].get<double>(), 1.1 / 0.9, 1e-12);
  EXPECT_NEAR(j["rows"][2]["speedup@1024"]["ratio"].get<double>(), 1.1 / 0.55, 1e-12);
  EXPECT_NEAR(j["rows"][3]["speedup@1024"]["ratio"].get<double>(), 1.1 / 0.45, 1e-12);
  EXPECT_EQ(j["rows"][3]["speedup@1024"]["baseline_n"], 3) << "the f32 baseline's trials only";
  EXPECT_TRUE(lines_match(
      print("ttft"), {"Note: Speedup: ratio of medians, baseline / method (TTFT of the baseline "
                      "with an f32 KV cache at the same target model, context and workload, so a "
                      "row's speedup includes its KV type's effect); 95% percentile-bootstrap "
                      "interval, 2000 resamples of each side's trials."}));
  // r and the measured speedup of the cost model come from the f32 baseline too (the f16
  // baseline's prefill of 0.8 s would make r 0.125).
  const auto c = to_json(table("costmodel"));
  ASSERT_EQ(c["rows"].size(), 2u);
  EXPECT_EQ(c["rows"][1]["kv_dtype"], "f16");
  EXPECT_NEAR(c["rows"][1]["r"].get<double>(), 0.1, 1e-12);
  EXPECT_NEAR(c["rows"][1]["measured"]["ratio"].get<double>(), 1.1 / 0.45, 1e-12);

  // Without f32 baseline trials there is nothing to compare against: no fallback to the f16 one.
  ReportOptions f16;
  f16.where = "kv_dtype = 'f16'";
  EXPECT_TRUE(lines_match(
      print("ttft", f16),
      {"| Method | Params | KV | TTFT 1024 (s) | Speedup 1024 |",
       "| baseline |  | f16 | 0.900 ± 0.100 | — |", "| specprefill |  | f16 | 0.450 ± 0.050 | — |",
       "Note: No 'baseline' trials with an f32 KV cache in this selection: speedups "
       "are not available."}));
  f16.param = "keep";
  EXPECT_TRUE(lines_match(print("ablation", f16),
                          {"| specprefill |  | f16 | 0.3 | 1024 | 0.450 ± 0.050 | — |%*"}));
  EXPECT_TRUE(lines_match(
      print("costmodel", f16),
      {"| target | draft | specprefill | f16 | 1024 | 0.3 | 0.200 | — |%*",
       "Note: No 'baseline' trials with an f32 KV cache for target at context 1024: r and the "
       "measured speedup are not available."}));
}

TEST_F(KvFixture, KvColumnOnlyWhenSomeTypeIsNotF32) {
  ReportOptions f32;
  f32.where = "kv_dtype = 'f32'";
  ReportOptions keep = f32, keep_all;
  keep.param = keep_all.param = "keep";
  for (const auto& [name, opt] :
       std::vector<std::pair<std::string, ReportOptions>>{{"ttft", f32},
                                                          {"phases", f32},
                                                          {"ablation", keep},
                                                          {"agreement", f32},
                                                          {"costmodel", f32}}) {
    const Table t = table(name, opt);
    for (const auto& c : t.columns) EXPECT_NE(c.key, "kv_dtype") << name;
    const std::string md = render(t, Format::Markdown);
    EXPECT_EQ(md.find("KV"), std::string::npos) << name << ":\n" << md;
    const Table all = table(name, name == "ablation" ? keep_all : ReportOptions{});
    EXPECT_TRUE(std::any_of(all.columns.begin(), all.columns.end(), [](const Column& c) {
      return c.key == "kv_dtype";
    })) << name;
  }
  EXPECT_TRUE(
      lines_match(print("ttft", f32), {"| Method | Params | TTFT 1024 (s) | Speedup 1024 |",
                                       "| baseline |  | 1.10 ± 0.10 | 1.00× |",
                                       "| specprefill |  | 0.550 ± 0.050 | 2.00× [%f, %f] |",
                                       "Note: Speedup: ratio of medians, baseline / method "
                                       "(TTFT at the same target model, context and "
                                       "workload); 95% percentile-bootstrap interval, 2000 "
                                       "resamples of each side's trials."}));
}

// Stores written before KV types were recorded say "" for f32: same rows, no KV column, and those
// trials are the f32 baseline of the f16 rows.
TEST(KvTables, EmptyKvTypeIsF32) {
  test::TempDir dir;
  const std::string path = dir.file("old.sqlite");
  {
    auto s = results::ResultStore::open(path);
    fill_kv(s, "");
  }
  auto s = results::ResultStore::open_readonly(path);
  ReportOptions old;
  old.where = "kv_dtype = ''";
  const Table t = ttft_table(s, old);
  EXPECT_TRUE(lines_match(render(t, Format::Markdown),
                          {"| Method | Params | TTFT 1024 (s) | Speedup 1024 |",
                           "| baseline |  | 1.10 ± 0.10 | 1.00× |",
                           "| specprefill |  | 0.550 ± 0.050 | 2.00× [%f, %f] |"}));
  EXPECT_TRUE(lines_match(render(ttft_table(s, {}), Format::Markdown),
                          {"| baseline |  | f32 | 1.10 ± 0.10 | 1.00× |",
                           "| specprefill |  | f16 | 0.450 ± 0.050 | 2.44× [%f, %f] |"}));
}

// Decode figures at context 1024, prompt 1024, 17 decode tokens: the cache holds 1024 + 16 = 1040
// entries; run threads 8 (full_run).
//   baseline f32:     tok/s {10, 12, 14} -> 12.0 ± 2.0, median 12; 1540 B per entry;
//                     load {7.5, 8.0, 2.0} (8.0 is not above 8: not busy)
//   baseline int4:    tok/s {15, 18, 24} -> mean 19, std sqrt(42/2) = 4.58, median 18 -> speed
//                     18/12 = 1.50; 244 B per entry -> memory 1540/244 = 6.31; load {9, 1, 1}
//   specprefill f32:  keep 0.25, 256 prompt tokens kept: 272 entries of 1540 B over 1040 tokens of
//                     context = 402.77 B/token -> memory 1540/402.77 = 3.82; tok/s {11, 13, 15}
//                     -> 13.0 ± 2.0, speed 13/12 = 1.08
struct DecodeFixture : ::testing::Test {
  test::TempDir dir;
  std::string path = dir.file("decode.sqlite");
  void SetUp() override {
    auto s = results::ResultStore::open(path);
    const std::string run = s.begin_run(test::full_run());
    auto add = [&](const std::string& method, const nlohmann::json& params, const std::string& kv,
                   std::vector<double> tok_s, int64_t kept, int64_t entry_bytes,
                   std::vector<double> load) {
      auto v = kv_case(run, method, params, 1024, kv, {0.1, 0.1, 0.1});
      for (size_t i = 0; i < v.size(); ++i) {
        v[i].decode_tok_s = tok_s[i];
        v[i].prompt_tokens = 1024;
        v[i].kept_tokens = kept;
        v[i].decode_tokens = 17;
        v[i].kv_bytes = (kept + 16) * entry_bytes;
        v[i].loadavg_1m = load[i];
      }
      s.record_case(v);
    };
    const nlohmann::json none = nlohmann::json::object();
    add("baseline", none, "f32", {10, 12, 14}, 1024, 1540, {7.5, 8.0, 2.0});
    add("baseline", none, "int4", {15, 18, 24}, 1024, 244, {9.0, 1.0, 1.0});
    add("specprefill", {{"keep", 0.25}}, "f32", {11, 13, 15}, 256, 1540, {1.0, 1.0, 1.0});
  }
  Table table(ReportOptions opt = {}) {
    auto s = results::ResultStore::open_readonly(path);
    return make_report(s, "decode", opt);
  }
};

TEST_F(DecodeFixture, HandComputedFigures) {
  const Table t = table();
  EXPECT_TRUE(lines_match(
      render(t, Format::Markdown),
      {"**Decode speed and KV cache memory by KV type**",
       "| Target | Method | Params | KV | Context | Decode (tok/s) | Median (tok/s) | KV B/token | "
       "Speed vs f32 baseline | Memory vs f32 baseline | Busy | n |",
       "| target | baseline |  | f32 | 1024 | 12.0 ± 2.0 | 12.0 | 1540 | 1.00× | 1.00× | 0/3 | 3 |",
       "| target | baseline |  | int4 | 1024 | 19.0 ± 4.6 | 18.0 | 244 | 1.50× [%f, %f] | 6.31× | "
       "1/3 | 3 |",
       "| target | specprefill |  | f32 | 1024 | 13.0 ± 2.0 | 13.0 | 403 | "
       "1.08× [%f, %f] | 3.82× | 0/3 | 3 |",
       "Note: Decode (tok/s) = (decode_tokens - 1) / decode seconds%*",
       "Note: KV B/token = kv_bytes / (prompt_tokens + decode_tokens - 1)%*",
       "Note: Speed: ratio of medians, method / baseline (decode tok/s of 'baseline' with an f32 "
       "KV cache at the same target, context and workload); 95% percentile-bootstrap interval, "
       "2000 resamples of each side's trials.",
       "Note: Memory: ratio of medians, baseline / method (KV B/token%*",
       "Note: Busy n/N: n of the row's N trials ran while the 1-minute load average was above the "
       "run's thread count%*"}));
  const auto j = to_json(t);
  ASSERT_EQ(j["rows"].size(), 3u);
  const auto& f32 = j["rows"][0];
  EXPECT_DOUBLE_EQ(f32["decode_tok_s"]["mean"].get<double>(), 12.0);
  EXPECT_DOUBLE_EQ(f32["decode_tok_s"]["std"].get<double>(), 2.0);
  EXPECT_DOUBLE_EQ(f32["kv_bytes_per_token"].get<double>(), 1540.0);
  const auto& int4 = j["rows"][1];
  EXPECT_DOUBLE_EQ(int4["decode_tok_s"]["mean"].get<double>(), 19.0);
  EXPECT_NEAR(int4["decode_tok_s"]["std"].get<double>(), std::sqrt(21.0), 1e-12);
  EXPECT_DOUBLE_EQ(int4["median_tok_s"].get<double>(), 18.0);
  EXPECT_DOUBLE_EQ(int4["kv_bytes_per_token"].get<double>(), 244.0);
  EXPECT_DOUBLE_EQ(int4["speed"]["ratio"].get<double>(), 1.5);
  // Medians of resamples of three values are sample values: the interval lies within
  // [min(int4) / max(f32), max(int4) / min(f32)] = [15/14, 24/10] and brackets the estimate.
  EXPECT_GE(int4["speed"]["lo"].get<double>(), 15.0 / 14.0 - 1e-12);
  EXPECT_LE(int4["speed"]["lo"].get<double>(), 1.5);
  EXPECT_GE(int4["speed"]["hi"].get<double>(), 1.5);
  EXPECT_LE(int4["speed"]["hi"].get<double>(), 24.0 / 10.0 + 1e-12);
  EXPECT_NEAR(int4["memory"]["ratio"].get<double>(), 1540.0 / 244.0, 1e-12);
  EXPECT_EQ(int4["busy"], (nlohmann::json{{"busy", 1}, {"trials", 3}}));
  const auto& sp = j["rows"][2];
  EXPECT_NEAR(sp["kv_bytes_per_token"].get<double>(), 272.0 * 1540 / 1040, 1e-9);
  EXPECT_NEAR(sp["memory"]["ratio"].get<double>(), 1040.0 / 272.0, 1e-12);
  EXPECT_NEAR(sp["speed"]["ratio"].get<double>(), 13.0 / 12.0, 1e-12);
  EXPECT_EQ(render(t, Format::Markdown), render(table(), Format::Markdown)) << "seeded";
}

TEST_F(DecodeFixture, NoBusyColumnWhenNoTrialIsBusyAndMissingBaselineIsNamed) {
  ReportOptions f32;
  f32.where = "kv_dtype = 'f32'";
  const std::string md = render(table(f32), Format::Markdown);
  EXPECT_EQ(md.find("Busy"), std::string::npos) << md;
  ReportOptions sp;
  sp.where = "method = 'specprefill'";
  EXPECT_TRUE(lines_match(
      render(table(sp), Format::Markdown),
      {"| target | specprefill |  | f32 | 1024 | 13.0 ± 2.0 | 13.0 | 403 | — | — | 3 |",
       "Note: No 'baseline' trials with an f32 KV cache for target at context 1024, workload "
       "synthetic: speed and memory ratios are not available."}));
}

TEST_F(DecodeFixture, CliListsTheDecodeTable) {
  std::string out;
  ASSERT_EQ(test::run_cli("report --db " + path + " --table decode --format csv", &out), 0) << out;
  EXPECT_TRUE(lines_match(out, {"Target,Method,Params,KV,Context,Decode (tok/s),%*",
                                "target,baseline,,int4,1024,19.0 ± 4.6,18.0,244,%*"}));
  ASSERT_EQ(test::run_cli("report --help", &out), 0) << out;
  EXPECT_NE(out.find("decode"), std::string::npos) << out;
}

}  // namespace
}  // namespace accel::reports
