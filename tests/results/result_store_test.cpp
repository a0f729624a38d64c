// ResultStore tests: every field round-trips, the field lists match the migrated schema, v1 stores
// migrate with rows intact, record_case is all-or-nothing, failure records, readers and filters.
#include "results/result_store.h"

#include <gtest/gtest.h>

#include <fstream>

#include "results/schema.h"
#include "tests/results/store_fixtures.h"
#include "tests/support/test_support.h"

namespace accel::results {
namespace {

using test::full_run;
using test::full_trial;
using test::TempDir;

template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "(no exception)";
}

TEST(ResultStore, RoundTripsEveryField) {
  TempDir dir;
  auto s = ResultStore::open(dir.file("r.sqlite"));
  EXPECT_EQ(s.schema_version(), kSchemaVersion);
  RunInfo run = full_run();
  const std::string id = s.begin_run(run);
  EXPECT_EQ(id.size(), 32u);
  run.run_id = id;
  const TrialRecord a = full_trial(id, "case-1", 0), b = full_trial(id, "case-1", 1, false);
  EXPECT_EQ(s.record_case({a, b}), 2);
  const auto got = s.trials();
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0], a) << to_json(got[0]).dump() << "\n" << to_json(a).dump();
  EXPECT_EQ(got[1], b);
  EXPECT_FALSE(got[1].draft.has_value());

  auto r = s.run(id);
  ASSERT_TRUE(r);
  run.started_at = r->started_at;  // filled by begin_run
  EXPECT_FALSE(r->ended_at);
  EXPECT_EQ(*r, run);
  s.end_run(id);
  EXPECT_TRUE(s.run(id)->ended_at);
  EXPECT_THROW(s.end_run("nope"), std::runtime_error);

  // JSON and CSV come from the same field list.
  EXPECT_EQ(trial_from_json(to_json(a)), a);
  EXPECT_EQ(run_from_json(to_json(run)), run);
  const std::string header = csv_header<TrialRecord>();
  EXPECT_EQ(header.substr(0, 35), "case_key,trial_index,run_id,method,");
  EXPECT_EQ(std::count(header.begin(), header.end(), ','), int(trial_fields().size()) - 1);
}

TEST(ResultStore, FieldListsMatchMigratedSchema) {
  TempDir dir;
  auto s = ResultStore::open(dir.file("r.sqlite"));
  auto check = [&](const std::string& table, auto& fields) {
    std::set<std::string> cols, names;
    for (const auto& c : table_columns(s.db(), table))
      if (c != "id") cols.insert(c);
    for (const auto& f : fields) names.insert(f.name);
    EXPECT_EQ(cols, names) << table;
  };
  check("trials", trial_fields());
  check("runs", run_fields());
}

// A v1 store written with the frozen v1 DDL and raw v1 inserts, as an old build would have.
void make_v1_store(const std::string& path) {
  sqlite::Database db(path, sqlite::Database::Mode::ReadWriteCreate);
  db.exec(schema_v1_ddl());
  db.exec(R"sql(
INSERT INTO runs VALUES ('r1', '2024-01-01T00:00:00.000Z', NULL, 'abc', 0, 'Release', 'g++',
  'cpu', 'avx2', 4, '{}', '{"trials":2}', '{}', 'old-host', '0.0.1');
INSERT INTO trials (case_key, trial_index, run_id, method, params, target_path, target_sha256,
  target_arch, target_n_params, context_len, workload, sample_id, ttft_s, phases, decode_tokens,
  decode_tok_s, prompt_tokens, kept_tokens, peak_rss_bytes, kv_bytes, output_tokens, scores, stats,
  error, recorded_at)
VALUES ('k1', 0, 'r1', 'baseline', '{}', '/m/t.gguf', 'sha', 'llama', 10, 1024, 'niah', 's0',
  0.5, '{"prefill":0.4}', 8, 20.0, 1024, 1024, 100, 200, '[1,2]', '{}', '{}', NULL,
  '2024-01-01T00:00:01.000Z'),
       ('k1', 1, 'r1', 'baseline', '{}', '/m/t.gguf', 'sha', 'llama', 10, 1024, 'niah', 's0',
  0.6, '{"prefill":0.5}', 8, 21.0, 1024, 1024, 100, 200, '[1,2]', '{}', '{}', NULL,
  '2024-01-01T00:00:02.000Z');
)sql");
}

TEST(ResultStore, MigratesFromV1WithRowsIntact) {
  TempDir dir;
  const std::string path = dir.file("old.sqlite");
  make_v1_store(path);
  {
    // Reading does not migrate: the v1 store reads with defaults for the v2 columns.
    auto ro = ResultStore::open_readonly(path);
    EXPECT_EQ(ro.schema_version(), 1);
    const auto t = ro.trials();
    ASSERT_EQ(t.size(), 2u);
    EXPECT_EQ(t[0].workload_version, "");
    EXPECT_FALSE(ro.runs()[0].fma_peak_gflops);
  }
  auto s = ResultStore::open(path);
  EXPECT_EQ(s.schema_version(), kSchemaVersion);
  EXPECT_EQ(user_version(s.db()), kSchemaVersion);
  const auto t = s.trials();
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t[0].case_key, "k1");
  EXPECT_EQ(t[1].ttft_s, 0.6);
  EXPECT_EQ(t[1].phases.at("prefill"), 0.5);
  EXPECT_EQ(t[0].output_tokens, (std::vector<int32_t>{1, 2}));
  EXPECT_EQ(t[0].workload_version, "");
  EXPECT_EQ(t[0].target.config, nlohmann::json::object()) << "v3 default for old rows";
  EXPECT_FALSE(t[0].draft) << "draft_config stays NULL with the other draft columns";
  EXPECT_TRUE(s.case_done("k1", 2));
  const auto runs = s.runs();
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].hostname, "old-host");
  EXPECT_EQ(runs[0].plan["trials"], 2);
  EXPECT_FALSE(runs[0].fma_peak_gflops);
  // New writes use the v2 columns; reopening is a no-op.
  RunInfo r = full_run();
  const std::string id = s.begin_run(r);
  s.record_case({full_trial(id, "k2", 0)});
  auto again = ResultStore::open(path);
  EXPECT_EQ(again.trials().size(), 3u);
  EXPECT_EQ(again.trials()[2].target.config["synthetic_family"], "tiny");
  EXPECT_EQ(again.run(id)->fma_peak_gflops, 123.25);
}

// A v3 store as the previous release left it: agreement scores on a non-baseline row, no suite,
// KV type, inputs, reference or load columns. Migrating keeps every row and fills the v4 columns
// with what the v3 runner implied (f32 cache, baseline reference for agreement-scored rows).
TEST(ResultStore, MigratesFromV3WithV4Defaults) {
  TempDir dir;
  const std::string path = dir.file("v3.sqlite");
  {
    sqlite::Database db(path, sqlite::Database::Mode::ReadWriteCreate);
    db.exec(schema_v1_ddl());
    for (const auto& m : migrations())
      if (m.to_version <= 3) db.exec(m.sql);
    ASSERT_EQ(user_version(db), 3);
    db.exec(R"sql(
INSERT INTO runs VALUES ('r3', '2025-01-01T00:00:00.000Z', NULL, 'abc', 0, 'Release', 'g++',
  'cpu', 'avx2', 2, '{}', '{}', '{}', 'host', '0.1.0', 250.0);
INSERT INTO trials (case_key, trial_index, run_id, method, params, target_path, target_sha256,
  target_arch, target_n_params, context_len, workload, sample_id, ttft_s, phases, decode_tokens,
  decode_tok_s, prompt_tokens, kept_tokens, peak_rss_bytes, kv_bytes, output_tokens, scores, stats,
  error, recorded_at, workload_version, target_config)
VALUES ('k1', 0, 'r3', 'specprefill', '{"keep":0.2}', '/m/t.gguf', 'sha', 'llama', 10, 1024,
  'synthetic', '0', 0.5, '{}', 8, 20.0, 1024, 205, 100, 200, '[1]',
  '{"agreement.top1":0.5}', '{}', NULL, '2025-01-01T00:00:01.000Z', '1', '{}'),
       ('k2', 0, 'r3', 'baseline', '{}', '/m/t.gguf', 'sha', 'llama', 10, 1024,
  'synthetic', '0', 0.9, '{}', 8, 20.0, 1024, 1024, 100, 200, '[1]', '{}', '{}', NULL,
  '2025-01-01T00:00:02.000Z', '1', '{}');
)sql");
  }
  auto s = ResultStore::open(path);
  ASSERT_EQ(s.schema_version(), kSchemaVersion);
  const auto t = s.trials();
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t[0].kv_dtype, "f32");
  EXPECT_EQ(t[0].reference_method, "baseline");
  EXPECT_FALSE(t[1].reference_method) << "the baseline is the reference itself";
  EXPECT_EQ(t[0].inputs, nlohmann::json::object());
  EXPECT_EQ(t[0].sample_hash, "");
  EXPECT_FALSE(t[0].other_cpu_s);
  EXPECT_EQ(t[0].scores.at("agreement.top1"), 0.5);
  EXPECT_EQ(s.runs()[0].fma_peak_gflops, 250.0);
  EXPECT_EQ(s.runs()[0].suite, nlohmann::json::object());
  EXPECT_EQ(table_columns(s.db(), "file_digests").size(), 5u);
}

// v5 rows get the task their suite's sample ids encode (RULER and probes "<task>-<n>", LongBench
// "<task>/<n>" and LongBench-E "<task>_e/<n>"); other suites' rows keep "".
TEST(ResultStore, MigratesFromV5FillingSampleTasksFromSampleIds) {
  TempDir dir;
  const std::string path = dir.file("v5.sqlite");
  {
    sqlite::Database db(path, sqlite::Database::Mode::ReadWriteCreate);
    db.exec(schema_v1_ddl());
    for (const auto& m : migrations())
      if (m.to_version <= 5) db.exec(m.sql);
    db.exec(R"sql(
INSERT INTO runs (run_id, started_at, git_commit, git_dirty, build_type, compiler, cpu_model,
  cpu_flags, threads, seeds, plan, config, hostname, accelbench_version)
VALUES ('r5', '2025-01-01T00:00:00.000Z', 'abc', 0, 'Release', 'g++', 'cpu', 'avx2', 2, '{}',
  '{}', '{}', 'host', '0.1.0');
)sql");
    int i = 0;
    for (const auto& [workload, sample] :
         std::vector<std::pair<std::string, std::string>>{{"ruler", "niah_single_2-17"},
                                                          {"probes", "uuid-d10-0"},
                                                          {"longbench", "hotpotqa/3"},
                                                          {"longbench", "hotpotqa_e/4"},
                                                          {"niah", "depth50-0"}}) {
      auto st = db.prepare(R"sql(
INSERT INTO trials (case_key, trial_index, run_id, method, params, target_path, target_sha256,
  target_arch, target_n_params, context_len, workload, sample_id, phases, decode_tokens,
  prompt_tokens, kept_tokens, peak_rss_bytes, kv_bytes, output_tokens, scores, stats,
  recorded_at)
VALUES (?, 0, 'r5', 'baseline', '{}', '/m', 'sha', 'llama', 1, 1024, ?, ?, '{}', 0, 0, 0, 0, 0,
  '[]', '{}', '{}', '2025-01-01T00:00:01.000Z');
)sql");
      st.bind(1, "k" + std::to_string(i++));
      st.bind(2, workload);
      st.bind(3, sample);
      st.step();
    }
  }
  auto s = ResultStore::open(path);
  ASSERT_EQ(s.schema_version(), kSchemaVersion);
  std::vector<std::string> tasks;
  for (const auto& t : s.trials()) tasks.push_back(t.sample_task);
  EXPECT_EQ(tasks, (std::vector<std::string>{"niah_single_2", "uuid", "hotpotqa", "hotpotqa", ""}));
}

// v6 rows did not record pool back-offs (NULL, not 0: "none happened" is not known) nor the diff
// digest of a dirty build (so such a run's code state is "<commit>-dirty").
TEST(ResultStore, MigratesFromV6WithBackoffsUnrecorded) {
  TempDir dir;
  const std::string path = dir.file("v6.sqlite");
  {
    sqlite::Database db(path, sqlite::Database::Mode::ReadWriteCreate);
    db.exec(schema_v1_ddl());
    for (const auto& m : migrations())
      if (m.to_version <= 6) db.exec(m.sql);
    ASSERT_EQ(user_version(db), 6);
    db.exec(R"sql(
INSERT INTO runs (run_id, started_at, git_commit, git_dirty, build_type, compiler, cpu_model,
  cpu_flags, threads, seeds, plan, config, hostname, accelbench_version)
VALUES ('r6', '2025-01-01T00:00:00.000Z', 'abc', 1, 'Release', 'g++', 'cpu', 'avx2', 2, '{}',
  '{}', '{}', 'host', '0.1.0');
INSERT INTO trials (case_key, trial_index, run_id, method, params, target_path, target_sha256,
  target_arch, target_n_params, context_len, workload, sample_id, phases, decode_tokens,
  prompt_tokens, kept_tokens, peak_rss_bytes, kv_bytes, output_tokens, scores, stats,
  recorded_at)
VALUES ('k', 0, 'r6', 'baseline', '{}', '/m', 'sha', 'llama', 1, 1024, 'synthetic', '0', '{}', 0,
  0, 0, 0, 0, '[]', '{}', '{}', '2025-01-01T00:00:01.000Z');
)sql");
  }
  EXPECT_FALSE(ResultStore::open_readonly(path).trials().at(0).backoffs_in_region)
      << "an unmigrated store reads NULL too";
  auto s = ResultStore::open(path);
  ASSERT_EQ(s.schema_version(), kSchemaVersion);
  EXPECT_FALSE(s.trials().at(0).backoffs_in_region);
  const RunInfo old = s.runs().at(0);
  EXPECT_EQ(old.git_diff_sha256, "");
  EXPECT_EQ(code_state(old), "abc-dirty");
  // A new row keeps its count, 0 included.
  TrialRecord t = test::full_trial(s.begin_run(test::full_run()), "k0", 0);
  t.backoffs_in_region = 0;
  s.record_case({t});
  EXPECT_EQ(s.trials().back().backoffs_in_region, 0);
}

// The code state tells a clean build, two dirty builds of one commit, and an old dirty run apart.
TEST(Records, CodeStateNamesTheCommitAndADirtyBuildsDiff) {
  RunInfo r;
  r.git_commit = "0123456789abcdef0123456789abcdef01234567";
  EXPECT_EQ(code_state(r), r.git_commit);
  r.git_dirty = true;
  EXPECT_EQ(code_state(r), r.git_commit + "-dirty");
  r.git_diff_sha256 = "fedcba9876543210" + std::string(48, '0');
  EXPECT_EQ(code_state(r), r.git_commit + "-dirty-fedcba987654");
  r.git_dirty = false;  // a clean build's digest (never written) would not matter
  EXPECT_EQ(code_state(r), r.git_commit);
}

// A failure record has no timing, so no back-off count either.
TEST(Records, FailureRecordClearsBackoffs) {
  EXPECT_FALSE(make_failed(test::full_trial("r", "k", 0), "boom").backoffs_in_region);
}

// The digest cache answers only while path, size, mtime and inode all match.
TEST(ResultStore, DigestCacheMatchesWholeIdentity) {
  TempDir dir;
  auto s = ResultStore::open(dir.file("d.sqlite"));
  const ResultStore::FileIdentity id{"/m/big.gguf", 10'000'000'000, 1700000000123456789, 42};
  EXPECT_FALSE(s.cached_digest(id));
  s.remember_digest(id, "abc");
  EXPECT_EQ(s.cached_digest(id), "abc");
  for (auto change : {+[](ResultStore::FileIdentity& i) { i.size += 1; },
                      +[](ResultStore::FileIdentity& i) { i.mtime_ns += 1; },
                      +[](ResultStore::FileIdentity& i) { i.inode += 1; },
                      +[](ResultStore::FileIdentity& i) { i.path += "x"; }}) {
    ResultStore::FileIdentity other = id;
    change(other);
    EXPECT_FALSE(s.cached_digest(other));
  }
  s.remember_digest(id, "def");  // a re-hash replaces the entry
  EXPECT_EQ(s.cached_digest(id), "def");
}

TEST(ResultStore, RefusesNewerAndForeignFiles) {
  TempDir dir;
  {
    auto s = ResultStore::open(dir.file("new.sqlite"));
    s.db().exec("PRAGMA user_version = 99");
  }
  EXPECT_NE(error_of([&] { ResultStore::open(dir.file("new.sqlite")); }).find("newer"),
            std::string::npos);
  EXPECT_NE(error_of([&] { ResultStore::open_readonly(dir.file("new.sqlite")); }).find("newer"),
            std::string::npos);
  {
    sqlite::Database db(dir.file("other.sqlite"), sqlite::Database::Mode::ReadWriteCreate);
    db.exec("CREATE TABLE foo (x)");
  }
  EXPECT_NE(
      error_of([&] { ResultStore::open(dir.file("other.sqlite")); }).find("not an accelbench"),
      std::string::npos);
  EXPECT_NE(error_of([&] {
              ResultStore::open_readonly(dir.file("other.sqlite"));
            }).find("not an accelbench"),
            std::string::npos);
  std::ofstream(dir.file("text.sqlite"))
      << "this is not a database, just some text of enough length to matter\n";
  const std::string e = error_of([&] { ResultStore::open_readonly(dir.file("text.sqlite")); });
  EXPECT_NE(e.find("text.sqlite"), std::string::npos) << e;
}

TEST(ResultStore, ReadOnlyOpenNeverCreates) {
  TempDir dir;
  const std::string p = dir.file("missing.sqlite");
  const std::string e = error_of([&] { ResultStore::open_readonly(p); });
  EXPECT_NE(e.find("missing.sqlite"), std::string::npos) << e;
  EXPECT_FALSE(std::filesystem::exists(p));
  auto s = ResultStore::open(dir.file("w.sqlite"));
  auto ro = ResultStore::open_readonly(dir.file("w.sqlite"));
  EXPECT_THROW(ro.begin_run(full_run()), std::logic_error);
}

TEST(ResultStore, RecordCaseIsAllOrNothing) {
  TempDir dir;
  auto s = ResultStore::open(dir.file("r.sqlite"));
  const std::string id = s.begin_run(full_run());
  // Inject a failure at the third insert of the transaction, from inside SQLite.
  s.db().exec(
      "CREATE TRIGGER fail_third BEFORE INSERT ON trials WHEN NEW.trial_index = 2 "
      "BEGIN SELECT RAISE(ABORT, 'injected failure'); END");
  std::vector<TrialRecord> c;
  for (int i = 0; i < 4; ++i) c.push_back(full_trial(id, "case-x", i));
  const std::string e = error_of([&] { s.record_case(c); });
  EXPECT_NE(e.find("injected failure"), std::string::npos) << e;
  EXPECT_EQ(s.trial_count(), 0);
  EXPECT_FALSE(s.case_done("case-x", 1));
  s.db().exec("DROP TRIGGER fail_third");
  EXPECT_EQ(s.record_case(c), 4);
  EXPECT_TRUE(s.case_done("case-x", 4));
  EXPECT_FALSE(s.case_done("case-x", 5));
}

TEST(ResultStore, RejectsMalformedCasesBeforeWriting) {
  TempDir dir;
  auto s = ResultStore::open(dir.file("r.sqlite"));
  const std::string id = s.begin_run(full_run());
  EXPECT_THROW(s.record_case({}), std::invalid_argument);
  EXPECT_THROW(s.record_case({full_trial(id, "a", 0), full_trial(id, "b", 1)}),
               std::invalid_argument);
  EXPECT_THROW(s.record_case({full_trial(id, "a", 0), full_trial(id, "a", 0)}),
               std::invalid_argument);
  const std::string e = error_of([&] { s.record_case({full_trial("unknown-run", "a", 0)}); });
  EXPECT_NE(e.find("begin_run"), std::string::npos) << e;
  EXPECT_EQ(s.trial_count(), 0);
}

TEST(ResultStore, DoneCasesAndFailures) {
  TempDir dir;
  auto s = ResultStore::open(dir.file("r.sqlite"));
  const std::string id = s.begin_run(full_run());
  s.record_case({full_trial(id, "ok", 0), full_trial(id, "ok", 1)});
  EXPECT_EQ(s.record_failure(full_trial(id, "bad", 0), "out of memory"), 1);
  EXPECT_EQ(s.done_cases(), (std::set<std::string>{"ok"}));
  EXPECT_EQ(s.done_cases(3), (std::set<std::string>{}));
  EXPECT_EQ(s.failed_cases(), (std::set<std::string>{"bad"}));
  EXPECT_FALSE(s.case_done("bad", 1));
  // The failure row has the identity and the error, but no timings.
  TrialFilter all;
  all.include_failed = true;
  all.method = "specprefill";
  const auto rows = s.trials(all);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[2].error, "out of memory");
  EXPECT_FALSE(rows[2].ttft_s);
  EXPECT_TRUE(rows[2].phases.empty());
  EXPECT_EQ(rows[2].context_len, 4096);
  EXPECT_EQ(s.trials().size(), 2u);  // readers skip failures by default
  // A later success replaces the failure; a later failure never replaces a success.
  EXPECT_EQ(s.record_case({full_trial(id, "bad", 0)}), 1);
  EXPECT_TRUE(s.case_done("bad", 1));
  EXPECT_TRUE(s.failed_cases().empty());
  EXPECT_EQ(s.record_failure(full_trial(id, "ok", 0), "late"), 0);
  EXPECT_EQ(s.trial_count(), 3);
  // Re-recording a finished case (e.g. by a concurrent writer) writes nothing.
  EXPECT_EQ(s.record_case({full_trial(id, "ok", 0), full_trial(id, "ok", 1)}), 0);
  EXPECT_EQ(s.trial_count(), 3);
}

TEST(ResultStore, FiltersAndWhere) {
  TempDir dir;
  auto s = ResultStore::open(dir.file("r.sqlite"));
  const std::string r1 = s.begin_run(full_run()), r2 = s.begin_run(full_run());
  for (int ctx : {1024, 2048})
    for (const char* m : {"baseline", "pld"}) {
      auto t = full_trial(ctx == 1024 ? r1 : r2, std::string(m) + std::to_string(ctx), 0);
      t.method = m;
      t.context_len = ctx;
      s.record_case({t});
    }
  TrialFilter f;
  f.method = "pld";
  EXPECT_EQ(s.trials(f).size(), 2u);
  f.context_len = 2048;
  EXPECT_EQ(s.trials(f).size(), 1u);
  TrialFilter g;
  g.run_id = r1;
  EXPECT_EQ(s.trials(g).size(), 2u);
  TrialFilter w;
  w.where = "context_len >= 2048 AND method <> 'pld' AND json_extract(params, '$.keep') = 0.3";
  ASSERT_EQ(s.trials(w).size(), 1u);
  EXPECT_EQ(s.trials(w)[0].case_key, "baseline2048");
  for (const char* bad : {"1; DROP TABLE trials", "1) OR (1", "1 -- comment", "1 /* x */",
                          "context_len >", "(1", "nonexistent_col = 1", "'unterminated", "  "}) {
    TrialFilter b;
    b.where = bad;
    EXPECT_THROW(s.trials(b), std::invalid_argument) << bad;
  }
  // Quotes may contain what is forbidden outside them.
  TrialFilter q;
  q.where = "method <> 'a;b -- (c'";
  EXPECT_EQ(s.trials(q).size(), 4u);
  EXPECT_EQ(s.trial_count(), 4);
}

}  // namespace
}  // namespace accel::results
