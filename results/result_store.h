// ResultStore: the SQLite results store the runner writes and reports read — runs, whole cases of
// trials in one transaction each, failure records, filtered readers, and the merge of stores from
// several machines. It never runs a model and knows nothing of methods beyond their names.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "results/records.h"
#include "results/sqlite_db.h"

namespace accel::results {

// Reader filters; all given conditions must hold. `where` is a raw SQL expression over the trials
// columns (e.g. "context_len >= 8192 AND method <> 'pld'"), checked by validate_where().
struct TrialFilter {
  std::optional<std::string> method;
  std::optional<int64_t> context_len;
  std::optional<std::string> run_id;
  std::string where;
  bool include_failed = false;  // failed trials (error set) are left out unless asked for
};

struct MergeSummary {
  int64_t runs_added = 0;
  int64_t trials_added = 0;
  int64_t trials_duplicate = 0;   // same case_key + trial_index + run_id already present
  int64_t trials_conflict = 0;    // same case_key + trial_index from another run: first one kept
  int64_t failures_replaced = 0;  // a failed trial superseded by a successful one
};

class ResultStore {
 public:
  // Opens `path` for writing, creating it if missing, and migrates it to kSchemaVersion.
  // WAL journal, busy timeout and retries make several writer processes safe.
  static ResultStore open(const std::string& path, sqlite::BusyPolicy busy = {});
  // Opens an existing store for reading only: never creates or migrates a file. An older schema is
  // read with its missing columns as defaults. Throws naming the file when it does not exist.
  static ResultStore open_readonly(const std::string& path);

  int schema_version() const { return version_; }
  bool read_only() const { return read_only_; }
  const std::string& path() const;

  // Inserts a run. Fills run_id (new_run_id()) and started_at (utc_now()) when empty.
  std::string begin_run(RunInfo info);
  // Sets ended_at = now. Throws for an unknown run_id.
  void end_run(const std::string& run_id);

  // True when case_key has at least n_trials successful trials.
  bool case_done(const std::string& case_key, int n_trials) const;
  // Case keys with at least n_trials successful trials (load once at start, skip those cases).
  std::set<std::string> done_cases(int n_trials = 1) const;
  // Case keys whose latest record is a failure (and that have no successful trial).
  std::set<std::string> failed_cases() const;

  // Records all trials of one case atomically (one IMMEDIATE transaction, retried on contention).
  // All records must share one case_key and have distinct trial_index values; recorded_at is
  // filled when empty. An existing successful trial with the same (case_key, trial_index) is kept
  // (the case was already done, e.g. by a concurrent writer); an existing failed one is replaced.
  // Returns how many rows were written.
  int64_t record_case(const std::vector<TrialRecord>& trials);
  // Records a failed case (make_failed(base, error)) so the runner can go on. A failure never
  // overwrites a successful trial. Returns rows written (0 or 1).
  int64_t record_failure(const TrialRecord& base, const std::string& error);
  // Records a load-sweep point and its requests (the trials of point.case_key) in one
  // transaction, as record_case does; a point already stored for the case is kept (first wins).
  int64_t record_load_point(LoadPointRecord point, const std::vector<TrialRecord>& requests);
  // Every stored load point, by case_key; empty for a store older than v8.
  std::vector<LoadPointRecord> load_points() const;

  // The digest cache, so that a large model file is hashed once: a SHA-256 remembered for a file
  // identity (path, size, mtime, inode) is returned only while all four still match. Entries are
  // local to the machine that made them and are not merged.
  struct FileIdentity {
    std::string path;
    int64_t size = 0, mtime_ns = 0, inode = 0;
  };
  std::optional<std::string> cached_digest(const FileIdentity& id) const;
  void remember_digest(const FileIdentity& id, const std::string& sha256);

  std::vector<TrialRecord> trials(const TrialFilter& filter = {}) const;
  std::vector<RunInfo> runs() const;
  std::optional<RunInfo> run(const std::string& run_id) const;
  int64_t trial_count(bool include_failed = true) const;

  // Throws std::invalid_argument unless `expr` is one SQL expression over the trials table: no
  // statement separators, comments or unbalanced parentheses, and it must compile.
  void validate_where(const std::string& expr) const;

  sqlite::Database& db() const { return *db_; }

 private:
  ResultStore(std::unique_ptr<sqlite::Database> db, bool read_only);
  void check_record(const TrialRecord& t, const std::string& case_key) const;
  int64_t upsert(sqlite::Statement& st, const TrialRecord& t);
  int64_t record_trials(const std::vector<TrialRecord>& trials, const LoadPointRecord* point);
  std::string select_list() const;  // trials columns, defaults for ones an old store lacks

  std::unique_ptr<sqlite::Database> db_;
  bool read_only_ = false;
  int version_ = 0;
  std::set<std::string> trial_cols_, run_cols_;  // columns present (older stores lack some)
};

// Combines `inputs` into `out_path` (created or migrated if needed; it may already hold data).
// Runs are merged by run_id; a trial identical in (case_key, trial_index, run_id) is stored once,
// so merging the same inputs twice changes nothing. Inputs are read only. Throws naming a missing
// input before anything is written.
MergeSummary merge(const std::string& out_path, const std::vector<std::string>& inputs);

}  // namespace accel::results
