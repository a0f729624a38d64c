// The `paper` table and its published-value files: rows matched to hand-built stores, rows with
// no measurement, ratio-of-ratios arithmetic on hand-worked numbers, the validating loader's
// errors on bad files, and that every shipped reports/published file loads.
#include "reports/paper_table.h"

#include <gtest/gtest.h>

#include <fstream>

#include "tests/results/store_fixtures.h"
#include "tests/support/test_support.h"

namespace accel::reports {
namespace {

nlohmann::json base_file(nlohmann::json rows) {
  return {
      {"schema_version", 1},
      {"id", "test-paper"},
      {"title", "Test paper"},
      {"source",
       {{"kind", "paper"}, {"citation", "A. Author"}, {"table", "Table 1"}, {"quoted_in", "x"}}},
      {"setup", {{"hardware", "GPU X"}, {"target", "Model Y"}}},
      {"rows", std::move(rows)}};
}

std::string write(const test::TempDir& dir, const std::string& name, const nlohmann::json& j) {
  const std::string path = dir.file(name);
  std::ofstream(path) << j.dump(2);
  return path;
}

// Column indices of paper_table's fixed columns.
enum Col { kRow, kCtxPub, kPub, kCtx, kConfig, kStore, kDetail, kRatio, kNote };

// baseline TTFT 2.0 s and specprefill (keep 0.2) 0.5 s at 8192 -> speedup 4.00 exactly (constant
// trials make the bootstrap interval [4.00, 4.00]); at 16384 only the baseline exists.
std::string speed_store(const test::TempDir& dir) {
  const std::string path = dir.file("s.sqlite");
  auto s = results::ResultStore::open(path);
  const std::string run = s.begin_run(test::full_run());
  test::add_case(s, run, "baseline", nlohmann::json::object(), 8192, "s0", {2.0, 2.0, 2.0});
  test::add_case(s, run, "specprefill", {{"keep", 0.2}}, 8192, "s0", {0.5, 0.5, 0.5});
  test::add_case(s, run, "baseline", nlohmann::json::object(), 16384, "s0", {4.0, 4.0});
  return path;
}

TEST(PaperTable, MatchedRowShowsStoreSpeedupAndRatioOfRatiosAgainstPublishedValue) {
  test::TempDir dir;
  const auto store = results::ResultStore::open_readonly(speed_store(dir));
  const auto set = load_published(write(dir, "p.json",
                                        base_file({{{"label", "8K"},
                                                    {"metric", "ttft_speedup"},
                                                    {"method", "specprefill"},
                                                    {"params", {{"keep", 0.2}}},
                                                    {"context", "8K"},
                                                    {"value", 5.0}}})));
  const PaperReport r = paper_table(store, set, {});
  ASSERT_EQ(r.table.rows.size(), 1u);
  const auto& row = r.table.rows[0];
  EXPECT_EQ(row[kPub].text, "5×");
  EXPECT_EQ(row[kCtx].text, "8192");
  EXPECT_EQ(row[kStore].text, "4.00× [4.00, 4.00]");
  EXPECT_EQ(row[kDetail].text, "2.00 s → 0.500 s");
  // 4.00 / 5.0 = 0.80.
  EXPECT_EQ(row[kRatio].text, "0.80");
  EXPECT_DOUBLE_EQ(row[kRatio].data.get<double>(), 0.8);
  EXPECT_NE(row[kConfig].text.find("keep=0.2"), std::string::npos) << row[kConfig].text;
  // The header states both setups.
  ASSERT_GE(r.header.size(), 4u);
  EXPECT_NE(r.header[1].find("hardware GPU X; target Model Y"), std::string::npos);
  EXPECT_NE(r.header[2].find("Test CPU @ 3.0GHz (8 threads)"), std::string::npos) << r.header[2];
  EXPECT_NE(r.header[2].find("target(s) target"), std::string::npos) << r.header[2];
}

TEST(PaperTable, RowsWithoutTrialsOrReferenceSayNoMeasurement) {
  test::TempDir dir;
  const auto store = results::ResultStore::open_readonly(speed_store(dir));
  const auto set = load_published(
      write(dir, "p.json",
            base_file({{{"label", "16K, no method trials"},
                        {"metric", "ttft_speedup"},
                        {"method", "specprefill"},
                        {"params", {{"keep", 0.2}}},
                        {"context", "16K"},
                        {"value", 4.1}},
                       {{"label", "other keep"},
                        {"metric", "ttft_speedup"},
                        {"method", "specprefill"},
                        {"params", {{"keep", 0.05}}},
                        {"value", 2.0}},
                       {{"label", "kernel"},
                        {"metric", "kernel_speedup"},
                        {"method", "baseline"},
                        {"params", {{"kv_dtype", "int4"}}},
                        {"context", "1K"},
                        {"absolute", {{"unit", "ms"}, {"reference", 4.6}, {"method", 1.6}}}},
                       {{"label", "int4 memory"},
                        {"metric", "kv_bytes_ratio"},
                        {"method", "baseline"},
                        {"params", {{"kv_dtype", "int4"}}},
                        {"reference", {{"kv_dtype", "f16"}}},
                        {"value", 3.2}}})));
  const PaperReport r = paper_table(store, set, {});
  ASSERT_EQ(r.table.rows.size(), 4u);
  for (const auto& row : r.table.rows) {
    EXPECT_EQ(row[kStore].text, "no measurement") << row[kRow].text;
    EXPECT_TRUE(row[kStore].data.is_null());
    EXPECT_EQ(row[kRatio].text, "—");
  }
  EXPECT_NE(r.table.rows[0][kNote].text.find("no 'specprefill' trials with keep=0.2 at context "
                                             "16384 in this store"),
            std::string::npos)
      << r.table.rows[0][kNote].text;
  EXPECT_NE(r.table.rows[1][kNote].text.find("keep=0.05"), std::string::npos);
  EXPECT_NE(r.table.rows[2][kNote].text.find("kernel timings are not in a results store"),
            std::string::npos);
  // 4.6 / 1.6 is 2.8749999... in binary: three significant digits give 2.87.
  EXPECT_EQ(r.table.rows[2][kPub].text, "4.6 ms → 1.6 ms (2.87×)");
}

TEST(PaperTable, MethodTrialsWithoutReferenceTrialsSayNoMeasurement) {
  test::TempDir dir;
  const std::string path = dir.file("s.sqlite");
  {
    auto s = results::ResultStore::open(path);
    const std::string run = s.begin_run(test::full_run());
    test::add_case(s, run, "specprefill", {{"keep", 0.2}}, 8192, "s0", {0.5, 0.5});
  }
  const auto store = results::ResultStore::open_readonly(path);
  const auto set = load_published(write(dir, "p.json",
                                        base_file({{{"label", "8K"},
                                                    {"metric", "ttft_speedup"},
                                                    {"method", "specprefill"},
                                                    {"context", 8192},
                                                    {"value", 3.7}}})));
  const auto r = paper_table(store, set, {});
  ASSERT_EQ(r.table.rows.size(), 1u);
  EXPECT_EQ(r.table.rows[0][kStore].text, "no measurement");
  EXPECT_NE(r.table.rows[0][kNote].text.find("no 'baseline' trials at this target"),
            std::string::npos);
}

TEST(PaperTable, PublishedRatioFromAbsolutePairsHandWorked) {
  PublishedRow times;
  times.absolute = PublishedAbsolute{"min", 19.3, 3.5};  // 19.3 / 3.5 = 5.5142857...
  EXPECT_NEAR(published_ratio(times), 19.3 / 3.5, 1e-12);
  PublishedRow rate;
  rate.absolute = PublishedAbsolute{"tok/s", 28.4, 43.6};  // throughput: 43.6 / 28.4 = 1.5352...
  EXPECT_NEAR(published_ratio(rate), 43.6 / 28.4, 1e-12);
  PublishedRow both = times;
  both.value = 5.4;  // a quoted value wins over the pair
  EXPECT_DOUBLE_EQ(published_ratio(both), 5.4);
  EXPECT_TRUE(std::isnan(published_ratio(PublishedRow{})));
}

// Store decode: baseline TTFT 1.0 -> 10 tok/s, pld TTFT 0.8 -> 12.5 tok/s (simple_trial sets
// decode_tok_s = 10 / ttft): ratio 1.25. Published 28.4 -> 43.6 tok/s: 1.53521; 1.25 / 1.53521 =
// 0.8142. TTFT row: store 2.0 s -> 0.8 s = 2.5; published 19.3 -> 3.5 min = 5.5143; 2.5 / 5.5143
// = 0.4534.
TEST(PaperTable, RatioOfRatiosUsesPublishedPairsInTheRightDirection) {
  test::TempDir dir;
  const std::string path = dir.file("s.sqlite");
  {
    auto s = results::ResultStore::open(path);
    const std::string run = s.begin_run(test::full_run());
    test::add_case(s, run, "baseline", nlohmann::json::object(), 96, "json_rag-0", {1.0, 1.0});
    test::add_case(s, run, "pld", {{"preset", "atveit"}}, 96, "json_rag-0", {0.8, 0.8});
    test::add_case(s, run, "baseline", nlohmann::json::object(), 96, "code-0", {1.0, 1.0});
    test::add_case(s, run, "baseline", nlohmann::json::object(), 4096, "s0", {2.0, 2.0});
    test::add_case(s, run, "specprefill", {{"keep", 0.2}}, 4096, "s0", {0.8, 0.8});
  }
  const auto store = results::ResultStore::open_readonly(path);
  const auto set = load_published(
      write(dir, "p.json",
            base_file({{{"label", "json_rag"},
                        {"metric", "decode_speedup"},
                        {"method", "pld"},
                        {"params", {{"preset", "atveit"}}},
                        {"prompt_class", "json_rag"},
                        {"absolute", {{"unit", "tok/s"}, {"reference", 28.4}, {"method", 43.6}}}},
                       {{"label", "code"},
                        {"metric", "decode_speedup"},
                        {"method", "pld"},
                        {"prompt_class", "code"},
                        {"claim", "parity failed"}},
                       {{"label", "128K"},
                        {"metric", "ttft_speedup"},
                        {"method", "specprefill"},
                        {"context", "longest"},
                        {"absolute", {{"unit", "min"}, {"reference", 19.3}, {"method", 3.5}}}}})));
  const auto r = paper_table(store, set, {});
  ASSERT_EQ(r.table.rows.size(), 3u);
  const auto& pld = r.table.rows[0];
  EXPECT_EQ(pld[kPub].text, "28.4 tok/s → 43.6 tok/s (1.54×)");
  EXPECT_EQ(pld[kStore].text, "1.25× [1.25, 1.25]");
  EXPECT_NEAR(pld[kRatio].data.get<double>(), 1.25 / (43.6 / 28.4), 1e-12);
  EXPECT_EQ(pld[kRatio].text, "0.81");
  EXPECT_EQ(r.table.rows[1][kStore].text, "no measurement");
  EXPECT_NE(r.table.rows[1][kNote].text.find("on prompt class code"), std::string::npos);
  const auto& sp = r.table.rows[2];
  EXPECT_EQ(sp[kCtx].text, "4096");  // "longest" picks the store's longest context
  EXPECT_NEAR(sp[kRatio].data.get<double>(), 2.5 / (19.3 / 3.5), 1e-12);
  EXPECT_EQ(sp[kRatio].text, "0.45");
}

TEST(PaperTable, ScoreRowShowsMeanRetentionAndRatioToPublishedValue) {
  test::TempDir dir;
  const std::string path = dir.file("s.sqlite");
  {
    auto s = results::ResultStore::open(path);
    const std::string run = s.begin_run(test::full_run());
    test::add_case(s, run, "baseline", nlohmann::json::object(), 96, "passage-0", {1.0}, {},
                   {{"parity.exact", 1.0}});
    test::add_case(s, run, "pld", {{"n_min", 2}}, 96, "passage-0", {1.0, 1.0}, {},
                   {{"parity.exact", 0.5}});
  }
  const auto store = results::ResultStore::open_readonly(path);
  const auto set = load_published(write(dir, "p.json",
                                        base_file({{{"label", "parity"},
                                                    {"metric", "score"},
                                                    {"score", "parity.exact"},
                                                    {"method", "pld"},
                                                    {"params", {{"n_min", 2}}},
                                                    {"prompt_class", "passage"},
                                                    {"value", 1}}})));
  const auto r = paper_table(store, set, {});
  ASSERT_EQ(r.table.rows.size(), 1u);
  EXPECT_EQ(r.table.rows[0][kStore].text, "0.500");
  EXPECT_EQ(r.table.rows[0][kDetail].text, "retention vs 'baseline': 0.500");
  EXPECT_EQ(r.table.rows[0][kRatio].text, "0.50");
}

// The costmodel rows are the costmodel table's: r 0.1, k 0.2, predicted 3.33, measured 2.5, G 1.33
// (the hand-worked store of cost_model_test).
TEST(PaperTable, CostModelRowsRepeatTheCostModelTable) {
  test::TempDir dir;
  const std::string path = dir.file("s.sqlite");
  {
    auto s = results::ResultStore::open(path);
    const std::string run = s.begin_run(test::full_run());
    const nlohmann::json cfg = {{"n_embd", 4},   {"n_layer", 1}, {"n_head", 2},   {"n_head_kv", 1},
                                {"head_dim", 2}, {"n_ff", 8},    {"n_vocab", 10}, {"n_expert", 0}};
    std::vector<results::TrialRecord> base, sp;
    for (int i = 0; i < 3; ++i) {
      auto b = test::simple_trial(run, "baseline", nlohmann::json::object(), 1000, "s0", i, 1.0);
      b.phases = {{"prefill", 1.0}};
      b.target.config = cfg;
      base.push_back(b);
      auto t = test::simple_trial(run, "specprefill", {{"keep", 0.2}}, 1000, "s0", i, 0.4);
      t.target = b.target;
      t.draft = results::ModelRef{"/m/draft.gguf", "sha-draft", "llama", 100, cfg};
      t.phases = {{"draft_prefill", 0.06}, {"lookahead", 0.03}, {"score", 0.01}};
      t.prompt_tokens = 1000;
      t.kept_tokens = 200;
      sp.push_back(t);
    }
    s.record_case(base);
    s.record_case(sp);
  }
  const auto store = results::ResultStore::open_readonly(path);
  const auto set = load_published(write(dir, "p.json",
                                        base_file({{{"label", "cost model"},
                                                    {"metric", "costmodel"},
                                                    {"method", "specprefill"},
                                                    {"params", {{"keep", 0.2}}},
                                                    {"claim", "1/(r+k+eps)"}},
                                                   {{"label", "other keep"},
                                                    {"metric", "costmodel"},
                                                    {"method", "specprefill"},
                                                    {"params", {{"keep", 0.5}}},
                                                    {"claim", "1/(r+k+eps)"}}})));
  const auto r = paper_table(store, set, {});
  ASSERT_EQ(r.table.rows.size(), 2u);
  const auto& row = r.table.rows[0];
  EXPECT_EQ(row[kStore].text, "G 1.33");
  EXPECT_NEAR(row[kStore].data["G"].get<double>(), (1 / 0.3) / 2.5, 1e-9);
  EXPECT_NE(row[kDetail].text.find("r 0.100, k 0.200, pred. 3.33×, measured 2.50×"),
            std::string::npos)
      << row[kDetail].text;
  EXPECT_EQ(r.table.rows[1][kStore].text, "no measurement");
}

void expect_load_error(const nlohmann::json& j, const std::string& field_and_what) {
  test::TempDir dir;
  const std::string path = write(dir, "bad.json", j);
  try {
    load_published(path);
    ADD_FAILURE() << "no error for " << field_and_what;
  } catch (const std::invalid_argument& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find(path), std::string::npos) << msg;
    EXPECT_NE(msg.find(field_and_what), std::string::npos) << msg;
  }
}

TEST(PublishedLoader, BadFilesNameTheFileAndTheField) {
  const nlohmann::json ok_row = {
      {"label", "x"}, {"metric", "ttft_speedup"}, {"method", "m"}, {"value", 2.0}};
  auto f = base_file({ok_row});
  f.erase("id");
  expect_load_error(f, "id: missing");
  f = base_file({ok_row});
  f["schema_version"] = 2;
  expect_load_error(f, "schema_version: must be 1");
  f = base_file({ok_row});
  f["id"] = "Bad Id";
  expect_load_error(f, "id: 'Bad Id' must use only");
  expect_load_error(base_file(nlohmann::json::array()), "rows: must be a non-empty array");
  auto row = ok_row;
  row["metric"] = "latency";
  expect_load_error(base_file({ok_row, row}), "rows[1].metric: 'latency' is not one of");
  row = ok_row;
  row["value"] = -3;
  expect_load_error(base_file({row}), "rows[0].value: must be a positive number");
  row = ok_row;
  row["context"] = "8M";
  expect_load_error(base_file({row}), "rows[0].context: context '8M' is not a token count");
  row = ok_row;
  row["valu"] = 1;
  expect_load_error(base_file({row}), "rows[0].valu: unknown field");
  row = ok_row;
  row.erase("value");
  expect_load_error(base_file({row}), "rows[0]: has neither a value");
  row = ok_row;
  row["metric"] = "score";
  expect_load_error(base_file({row}), "rows[0].score: missing");
  row = ok_row;
  row["absolute"] = {{"unit", "s"}, {"reference", 2.0}};
  expect_load_error(base_file({row}), "rows[0].absolute.method: missing");
  f = base_file({ok_row});
  f["source"]["kind"] = "blog";
  expect_load_error(f, "source.kind: must be \"paper\" or \"repo\"");

  test::TempDir dir;
  const std::string path = dir.file("broken.json");
  std::ofstream(path) << "{\"id\": ";
  EXPECT_THROW(
      {
        try {
          load_published(path);
        } catch (const std::invalid_argument& e) {
          EXPECT_NE(std::string(e.what()).find(path + ": not valid JSON"), std::string::npos);
          throw;
        }
      },
      std::invalid_argument);
}

TEST(PublishedLoader, DuplicateIdsInADirectoryAreAnError) {
  test::TempDir dir;
  const nlohmann::json row = {
      {"label", "x"}, {"metric", "ttft_speedup"}, {"method", "m"}, {"value", 2.0}};
  write(dir, "a.json", base_file({row}));
  write(dir, "b.json", base_file({row}));
  try {
    load_published_dir(dir.path().string());
    ADD_FAILURE() << "duplicate id accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("id: 'test-paper' is also the id of"), std::string::npos)
        << e.what();
  }
}

TEST(PublishedLoader, ContextTokensParseKSuffixAndIntegers) {
  EXPECT_EQ(parse_context_tokens("8K"), 8192);
  EXPECT_EQ(parse_context_tokens("128K"), 131072);
  EXPECT_EQ(parse_context_tokens("786"), 786);
  EXPECT_THROW(parse_context_tokens("K"), std::invalid_argument);
  EXPECT_THROW(parse_context_tokens("-1K"), std::invalid_argument);
}

TEST(PublishedLoader, EveryShippedPublishedFileLoads) {
  const auto sets = load_published_dir(ACCELBENCH_SOURCE_DIR "/reports/published");
  std::set<std::string> ids;
  for (const auto& s : sets) ids.insert(s.id);
  for (const char* want : {"specprefill-vllm-mlx", "specprefill-paper", "specprefill-costmodel",
                           "pld", "open-tq-metal", "critiprefill", "pflash"})
    EXPECT_TRUE(ids.count(want)) << want;
}

}  // namespace
}  // namespace accel::reports
