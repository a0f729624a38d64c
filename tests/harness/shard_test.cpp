// `run --shard I/N`: shards partition a plan's cases by key, bad shard texts are refused before
// anything is written, and sharded runs merged back hold exactly the unsharded run's case keys.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "harness/plan.h"
#include "results/result_store.h"
#include "tests/support/test_support.h"

namespace accel {
namespace {

TEST(Shard, ParsesOneBasedIndexOverCount) {
  const Shard s = parse_shard("2/5");
  EXPECT_EQ(s.index, 2);
  EXPECT_EQ(s.count, 5);
  EXPECT_EQ(s.text(), "2/5");
  EXPECT_TRUE(parse_shard("1/1").all());
}

TEST(Shard, RefusesMalformedOrOutOfRangeTexts) {
  for (const char* bad : {"", "3", "0/4", "5/4", "-1/4", "1/0", "a/b", "1/4x", "1//4", " 1/4"})
    EXPECT_THROW(parse_shard(bad), PlanError) << "'" << bad << "'";
}

TEST(Shard, EveryKeyFallsInExactlyOneShardAndShardsAreBalanced) {
  constexpr int kShards = 4, kKeys = 4000;
  std::vector<int> per_shard(kShards, 0);
  for (int i = 0; i < kKeys; ++i) {
    char key[65];
    std::snprintf(key, sizeof key, "%016llx%048d",
                  (unsigned long long)(0x9E3779B97F4A7C15ull * uint64_t(i + 1)), 0);
    int owners = 0;
    for (int s = 1; s <= kShards; ++s)
      if (Shard{s, kShards}.contains(key)) {
        ++owners;
        ++per_shard[s - 1];
      }
    ASSERT_EQ(owners, 1) << key;
  }
  for (int n : per_shard) EXPECT_NEAR(n, kKeys / kShards, kKeys / kShards / 5);
}

std::string write_plan(const test::TempDir& dir) {
  const std::string path = dir.file("plan.json");
  std::ofstream(path) << nlohmann::json{
      {"name", "shard-test"},
      {"models", {{{"name", "tiny"}, {"family", "tiny"}}}},
      {"methods", {{{"name", "baseline"}}}},
      {"context_lengths", {64, 128}},
      {"workload", {{"kind", "synthetic"}, {"samples", 3}}},
      {"warmup", 0},
      {"trials", 1},
      {"decode_tokens", 2},
      {"threads", 1}}.dump();
  return path;
}

std::set<std::string> case_keys(const std::string& db) {
  std::set<std::string> keys;
  for (const auto& t : results::ResultStore::open_readonly(db).trials()) keys.insert(t.case_key);
  return keys;
}

TEST(Shard, ShardedRunsMergedHoldExactlyTheUnshardedRunsCaseKeys) {
  test::TempDir dir;
  const std::string plan = write_plan(dir), models = " --models-dir " + dir.file("models");
  std::string out;
  ASSERT_EQ(
      test::run_cli("run --no-report " + plan + " --db " + dir.file("all.sqlite") + models, &out),
      0)
      << out;
  const std::set<std::string> all = case_keys(dir.file("all.sqlite"));
  ASSERT_EQ(all.size(), 6u);  // 2 lengths x 3 samples

  std::set<std::string> seen;
  std::string shard_dbs;
  for (int i = 1; i <= 3; ++i) {
    const std::string db = dir.file("s" + std::to_string(i) + ".sqlite");
    ASSERT_EQ(test::run_cli("run --no-report --shard " + std::to_string(i) + "/3 " + plan +
                                " --db " + db + models,
                            &out),
              0)
        << out;
    EXPECT_NE(out.find("in shard " + std::to_string(i) + "/3"), std::string::npos) << out;
    for (const auto& k : case_keys(db))
      EXPECT_TRUE(seen.insert(k).second) << "in two shards: " << k;
    shard_dbs += " " + db;
  }
  EXPECT_EQ(seen, all);
  ASSERT_EQ(test::run_cli("merge " + dir.file("merged.sqlite") + shard_dbs, &out), 0) << out;
  EXPECT_EQ(case_keys(dir.file("merged.sqlite")), all);
}

TEST(Shard, BadShardFlagIsRefusedBeforeAStoreIsWritten) {
  test::TempDir dir;
  const std::string plan = write_plan(dir), db = dir.file("bad.sqlite");
  std::string out;
  EXPECT_NE(test::run_cli("run --shard 4/3 " + plan + " --db " + db, &out), 0);
  EXPECT_NE(out.find("'4/3'"), std::string::npos) << out;
  EXPECT_FALSE(std::filesystem::exists(db));
}

}  // namespace
}  // namespace accel
