// Schema DDL, migrations, and the migrate() driver (see schema.h). Column names here must match the
// field lists in records.cpp; a test checks that the migrated tables and the field lists agree.
#include "results/schema.h"

namespace accel::results {

const char* schema_v1_ddl() {
  return R"sql(
PRAGMA application_id = 1094927170;
CREATE TABLE runs (
  run_id             TEXT PRIMARY KEY,
  started_at         TEXT NOT NULL,
  ended_at           TEXT,
  git_commit         TEXT NOT NULL,
  git_dirty          INTEGER NOT NULL,
  build_type         TEXT NOT NULL,
  compiler           TEXT NOT NULL,
  cpu_model          TEXT NOT NULL,
  cpu_flags          TEXT NOT NULL,
  threads            INTEGER NOT NULL,
  seeds              TEXT NOT NULL,
  plan               TEXT NOT NULL,
  config             TEXT NOT NULL,
  hostname           TEXT NOT NULL,
  accelbench_version TEXT NOT NULL
);
CREATE TABLE trials (
  id               INTEGER PRIMARY KEY,
  case_key         TEXT NOT NULL,
  trial_index      INTEGER NOT NULL,
  run_id           TEXT NOT NULL REFERENCES runs(run_id),
  method           TEXT NOT NULL,
  params           TEXT NOT NULL,
  target_path      TEXT NOT NULL,
  target_sha256    TEXT NOT NULL,
  target_arch      TEXT NOT NULL,
  target_n_params  INTEGER NOT NULL,
  draft_path       TEXT,
  draft_sha256     TEXT,
  draft_arch       TEXT,
  draft_n_params   INTEGER,
  context_len      INTEGER NOT NULL,
  workload         TEXT NOT NULL,
  sample_id        TEXT NOT NULL,
  ttft_s           REAL,
  phases           TEXT NOT NULL,
  decode_tokens    INTEGER NOT NULL,
  decode_tok_s     REAL,
  prompt_tokens    INTEGER NOT NULL,
  kept_tokens      INTEGER NOT NULL,
  peak_rss_bytes   INTEGER NOT NULL,
  kv_bytes         INTEGER NOT NULL,
  output_tokens    TEXT NOT NULL,
  scores           TEXT NOT NULL,
  stats            TEXT NOT NULL,
  error            TEXT,
  recorded_at      TEXT NOT NULL,
  UNIQUE (case_key, trial_index)
);
CREATE INDEX trials_by_run ON trials(run_id);
PRAGMA user_version = 1;
)sql";
}

const std::vector<Migration>& migrations() {
  static const std::vector<Migration> m = {
      {2, "suite version per trial (STYLE.md item 10), FMA peak per run, index for report filters",
       R"sql(
ALTER TABLE trials ADD COLUMN workload_version TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN fma_peak_gflops REAL;
CREATE INDEX trials_by_method_ctx ON trials(method, context_len);
PRAGMA user_version = 2;
)sql"},
      {3, "model hyper-parameters per trial, for the analytic cost model and synthetic labels",
       R"sql(
ALTER TABLE trials ADD COLUMN target_config TEXT NOT NULL DEFAULT '{}';
ALTER TABLE trials ADD COLUMN draft_config TEXT;
PRAGMA user_version = 3;
)sql"},
      {4, "suites, KV cache types, inputs by role, machine load; file digest cache",
       R"sql(
ALTER TABLE trials ADD COLUMN sample_hash TEXT NOT NULL DEFAULT '';
ALTER TABLE trials ADD COLUMN kv_dtype TEXT NOT NULL DEFAULT 'f32';
ALTER TABLE trials ADD COLUMN inputs TEXT NOT NULL DEFAULT '{}';
ALTER TABLE trials ADD COLUMN reference_method TEXT;
ALTER TABLE trials ADD COLUMN other_cpu_s REAL;
ALTER TABLE trials ADD COLUMN loadavg_1m REAL;
ALTER TABLE runs ADD COLUMN inputs TEXT NOT NULL DEFAULT '{}';
ALTER TABLE runs ADD COLUMN suite TEXT NOT NULL DEFAULT '{}';
UPDATE trials SET reference_method = 'baseline'
  WHERE method <> 'baseline' AND scores LIKE '%agreement.%';
CREATE TABLE file_digests (
  path     TEXT PRIMARY KEY,
  size     INTEGER NOT NULL,
  mtime_ns INTEGER NOT NULL,
  inode    INTEGER NOT NULL,
  sha256   TEXT NOT NULL
);
PRAGMA user_version = 4;
)sql"},
      {5, "per-sample predictions: the generation as text and the sample's reference answers",
       R"sql(
ALTER TABLE trials ADD COLUMN prediction TEXT;
ALTER TABLE trials ADD COLUMN sample_reference TEXT NOT NULL DEFAULT 'null';
PRAGMA user_version = 5;
)sql"},
      // Rows written before v6 get the task their suite's sample ids encode: RULER and probes
      // ids are "<task>-<n>" (task names use underscores only), LongBench ids "<task>/<n>" or
      // "<task>_e/<n>" for LongBench-E (whose task is the same dataset).
      {6, "the sample's task within its suite, for per-task and official summary reports",
       R"sql(
ALTER TABLE trials ADD COLUMN sample_task TEXT NOT NULL DEFAULT '';
UPDATE trials SET sample_task = substr(sample_id, 1, instr(sample_id, '-') - 1)
  WHERE workload IN ('ruler', 'probes') AND instr(sample_id, '-') > 1;
UPDATE trials SET sample_task = substr(sample_id, 1, instr(sample_id, '/') - 1)
  WHERE workload = 'longbench' AND instr(sample_id, '/') > 1;
UPDATE trials SET sample_task = substr(sample_task, 1, length(sample_task) - 2)
  WHERE workload = 'longbench' AND sample_task LIKE '%\_e' ESCAPE '\';
PRAGMA user_version = 6;
)sql"},
      // Older rows keep NULL back-offs (not recorded) and an empty diff digest (a dirty run of
      // theirs reads as "<commit>-dirty", see code_state()).
      {7, "conditions of a timing: pool back-offs inside a trial, the diff digest of a dirty build",
       R"sql(
ALTER TABLE trials ADD COLUMN backoffs_in_region INTEGER;
ALTER TABLE trials ADD COLUMN config_key TEXT NOT NULL DEFAULT '';
UPDATE trials SET config_key = case_key;
CREATE INDEX trials_by_config_key ON trials(config_key);
ALTER TABLE runs ADD COLUMN git_diff_sha256 TEXT NOT NULL DEFAULT '';
PRAGMA user_version = 7;
)sql"},
      // A load-sweep point's requests are trials of its case; the point's own figures (wall time
      // from the first request sent to the last answer, output tokens) live here, one row per case.
      {8, "load-sweep points of endpoint plans: concurrency, request rate, wall time, throughput",
       R"sql(
CREATE TABLE load_points (
  case_key      TEXT PRIMARY KEY,
  run_id        TEXT NOT NULL REFERENCES runs(run_id),
  method        TEXT NOT NULL,
  context_len   INTEGER NOT NULL,
  concurrency   INTEGER NOT NULL,
  request_rate  REAL NOT NULL,
  requests      INTEGER NOT NULL,
  wall_s        REAL NOT NULL,
  output_tokens INTEGER NOT NULL,
  recorded_at   TEXT NOT NULL
);
PRAGMA user_version = 8;
)sql"},
  };
  return m;
}

int user_version(sqlite::Database& db) {
  auto st = db.prepare("PRAGMA user_version");
  st.step();
  return int(st.get_int(0));
}

int application_id(sqlite::Database& db) {
  auto st = db.prepare("PRAGMA application_id");
  st.step();
  return int(st.get_int(0));
}

std::vector<std::string> table_columns(sqlite::Database& db, const std::string& table) {
  auto st = db.prepare("SELECT name FROM pragma_table_info(?)");
  st.bind(1, table);
  std::vector<std::string> cols;
  while (st.step()) cols.push_back(st.get_text(0));
  return cols;
}

void migrate(sqlite::Database& db) {
  db.transaction([&] {
    int v = user_version(db);
    if (v == kSchemaVersion) return;
    if (v > kSchemaVersion)
      throw std::runtime_error(db.label() + ": schema version " + std::to_string(v) +
                               " is newer than this build understands (" +
                               std::to_string(kSchemaVersion) + "); update accelbench");
    if (v == 0) {
      auto st = db.prepare("SELECT count(*) FROM sqlite_schema");
      st.step();
      if (st.get_int(0) != 0 || application_id(db) != 0)
        throw std::runtime_error(db.label() + ": not an accelbench results store");
      db.exec(schema_v1_ddl());
      v = 1;
    } else if (application_id(db) != kApplicationId) {
      throw std::runtime_error(db.label() + ": not an accelbench results store");
    }
    for (const auto& m : migrations()) {
      if (m.to_version <= v) continue;
      try {
        db.exec(m.sql);
      } catch (const sqlite::Error& e) {
        if (e.busy()) throw;  // let transaction() retry the whole migration
        throw std::runtime_error(db.label() + ": migration to v" + std::to_string(m.to_version) +
                                 " failed: " + e.what());
      }
      v = m.to_version;
    }
  });
}

}  // namespace accel::results
