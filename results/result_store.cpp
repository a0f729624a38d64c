// ResultStore (result_store.h): SQL over the field lists of records.h. Every write is one IMMEDIATE
// transaction retried on SQLITE_BUSY, so whole cases land or nothing does, across processes.
#include "results/result_store.h"

#include <filesystem>
#include <map>
#include <stdexcept>

#include "results/schema.h"

namespace accel::results {

namespace {

std::string file_label(const std::string& path) {
  return "[results] " + std::filesystem::path(path).filename().string();
}

void bind_value(sqlite::Statement& st, int i, const Value& v) {
  std::visit(
      [&](const auto& x) {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, std::monostate>)
          st.bind(i, nullptr);
        else
          st.bind(i, x);
      },
      v);
}

Value read_value(const sqlite::Statement& st, int c, Kind kind) {
  if (st.is_null(c)) return Value{};
  switch (kind) {
    case Kind::Int:
      return st.get_int(c);
    case Kind::Real:
      return st.get_double(c);
    case Kind::Text:
    case Kind::Json:
      return st.get_text(c);
  }
  return Value{};
}

// What an older store that lacks a column reads as.
template <class R>
std::string default_sql(const Field<R>& f) {
  if (f.nullable) return "NULL";
  switch (f.kind) {
    case Kind::Int:
      return "0";
    case Kind::Real:
      return "0.0";
    case Kind::Text:
      return "''";
    case Kind::Json:
      return "'{}'";
  }
  return "NULL";
}

template <class R>
std::string column_list(const std::vector<Field<R>>& fields, const std::set<std::string>& present) {
  std::string s;
  for (const auto& f : fields) {
    if (!s.empty()) s += ", ";
    s += present.count(f.name) ? std::string(f.name) : default_sql(f) + " AS " + f.name;
  }
  return s;
}

template <class R>
R read_record(const sqlite::Statement& st, const std::vector<Field<R>>& fields,
              const std::string& label, const char* what) {
  R r{};
  for (size_t i = 0; i < fields.size(); ++i) {
    try {
      fields[i].set(r, read_value(st, int(i), fields[i].kind));
    } catch (const std::exception& e) {
      throw std::runtime_error(label + ": malformed " + what + " row: " + e.what());
    }
  }
  return r;
}

std::string insert_sql(const char* table, const std::vector<std::string>& cols,
                       const std::string& tail) {
  std::string names, marks;
  for (const auto& c : cols) {
    names += (names.empty() ? "" : ", ") + c;
    marks += marks.empty() ? "?" : ", ?";
  }
  return std::string("INSERT INTO ") + table + " (" + names + ") VALUES (" + marks + ")" + tail;
}

std::vector<std::string> names_of_trials() {
  std::vector<std::string> v;
  for (const auto& f : trial_fields()) v.push_back(f.name);
  return v;
}
std::vector<std::string> names_of_runs() {
  std::vector<std::string> v;
  for (const auto& f : run_fields()) v.push_back(f.name);
  return v;
}

// Insert a trial; on (case_key, trial_index) conflict overwrite only a failed row, so a successful
// trial is never replaced and a failure is superseded by a later success.
std::string upsert_trial_sql() {
  std::string set;
  for (const auto& n : names_of_trials())
    if (n != "case_key" && n != "trial_index")
      set += (set.empty() ? "" : ", ") + n + " = excluded." + n;
  return insert_sql("trials", names_of_trials(),
                    " ON CONFLICT(case_key, trial_index) DO UPDATE SET " + set +
                        " WHERE trials.error IS NOT NULL");
}

}  // namespace

ResultStore::ResultStore(std::unique_ptr<sqlite::Database> db, bool read_only)
    : db_(std::move(db)), read_only_(read_only) {
  version_ = user_version(*db_);
  for (const auto& c : table_columns(*db_, "trials")) trial_cols_.insert(c);
  for (const auto& c : table_columns(*db_, "runs")) run_cols_.insert(c);
}

const std::string& ResultStore::path() const {
  return db_->path();
}

ResultStore ResultStore::open(const std::string& path, sqlite::BusyPolicy busy) {
  if (std::filesystem::is_directory(path))
    throw std::runtime_error(file_label(path) + ": is a directory, not a results store");
  auto db = std::make_unique<sqlite::Database>(path, sqlite::Database::Mode::ReadWriteCreate, busy);
  // WAL lets readers run beside one writer and keeps a killed writer's partial transaction out of
  // the database; synchronous=FULL makes each committed case durable, not just crash-consistent.
  db->exec("PRAGMA journal_mode = WAL");
  db->exec("PRAGMA synchronous = FULL");
  db->exec("PRAGMA foreign_keys = ON");
  migrate(*db);
  return ResultStore(std::move(db), false);
}

ResultStore ResultStore::open_readonly(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec))
    throw std::runtime_error(file_label(path) + ": no such results store: " + path);
  if (std::filesystem::is_directory(path, ec))
    throw std::runtime_error(file_label(path) + ": is a directory, not a results store: " + path);
  auto db = std::make_unique<sqlite::Database>(path, sqlite::Database::Mode::ReadOnly);
  int v = 0, app = 0;
  try {
    v = user_version(*db);
    app = application_id(*db);
  } catch (const sqlite::Error& e) {
    throw std::runtime_error(file_label(path) + ": not a results store (" + e.what() + ")");
  }
  if (app != kApplicationId || v < 1)
    throw std::runtime_error(file_label(path) + ": not an accelbench results store: " + path);
  if (v > kSchemaVersion)
    throw std::runtime_error(file_label(path) + ": schema version " + std::to_string(v) +
                             " is newer than this build understands (" +
                             std::to_string(kSchemaVersion) + ")");
  return ResultStore(std::move(db), true);
}

std::string ResultStore::begin_run(RunInfo info) {
  if (read_only_) throw std::logic_error(db_->label() + ": begin_run on a read-only store");
  if (info.run_id.empty()) info.run_id = new_run_id();
  if (info.started_at.empty()) info.started_at = utc_now();
  const auto names = names_of_runs();
  db_->transaction([&] {
    auto st = db_->prepare(insert_sql("runs", names, ""));
    int i = 0;
    for (const auto& f : run_fields()) bind_value(st, ++i, f.get(info));
    try {
      st.run();
    } catch (const sqlite::Error& e) {
      if (e.code() == SQLITE_CONSTRAINT_PRIMARYKEY)
        throw std::runtime_error(db_->label() + ": run_id '" + info.run_id + "' already exists");
      throw;
    }
  });
  return info.run_id;
}

void ResultStore::end_run(const std::string& run_id) {
  if (read_only_) throw std::logic_error(db_->label() + ": end_run on a read-only store");
  const int64_t n = db_->transaction([&] {
    auto st = db_->prepare("UPDATE runs SET ended_at = ? WHERE run_id = ?");
    st.bind_all(utc_now(), run_id).run();
    return db_->changes();
  });
  if (n == 0) throw std::runtime_error(db_->label() + ": end_run: unknown run_id '" + run_id + "'");
}

bool ResultStore::case_done(const std::string& case_key, int n_trials) const {
  auto st = db_->prepare("SELECT count(*) FROM trials WHERE case_key = ? AND error IS NULL");
  st.bind(1, case_key).step();
  return st.get_int(0) >= n_trials;
}

std::set<std::string> ResultStore::done_cases(int n_trials) const {
  auto st = db_->prepare(
      "SELECT case_key FROM trials WHERE error IS NULL GROUP BY case_key HAVING count(*) >= ?");
  st.bind(1, n_trials);
  std::set<std::string> out;
  while (st.step()) out.insert(st.get_text(0));
  return out;
}

std::set<std::string> ResultStore::failed_cases() const {
  auto st = db_->prepare(
      "SELECT DISTINCT case_key FROM trials WHERE error IS NOT NULL AND case_key NOT IN "
      "(SELECT case_key FROM trials WHERE error IS NULL)");
  std::set<std::string> out;
  while (st.step()) out.insert(st.get_text(0));
  return out;
}

void ResultStore::check_record(const TrialRecord& t, const std::string& case_key) const {
  auto bad = [&](const std::string& why) {
    throw std::invalid_argument(db_->label() + ": case '" + case_key + "': " + why);
  };
  if (t.case_key != case_key)
    bad("trials of several cases in one record_case ('" + t.case_key + "')");
  if (t.trial_index < 0) bad("negative trial_index");
  if (t.run_id.empty()) bad("empty run_id (call begin_run first)");
  if (t.method.empty()) bad("empty method");
}

int64_t ResultStore::upsert(sqlite::Statement& st, const TrialRecord& t) {
  st.reset();
  int i = 0;
  for (const auto& f : trial_fields()) bind_value(st, ++i, f.get(t));
  st.run();
  return db_->changes();
}

namespace {

// A point already stored for the case is kept: the first writer wins, as for its trials.
int64_t insert_load_point(sqlite::Database& db, const LoadPointRecord& p) {
  auto st = db.prepare(
      "INSERT OR IGNORE INTO load_points (case_key, run_id, method, context_len, concurrency, "
      "request_rate, requests, wall_s, output_tokens, recorded_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, "
      "?, ?)");
  st.bind_all(p.case_key, p.run_id, p.method, p.context_len, p.concurrency, p.request_rate,
              p.requests, p.wall_s, p.output_tokens, p.recorded_at)
      .run();
  return db.changes();
}

}  // namespace

int64_t ResultStore::record_case(const std::vector<TrialRecord>& trials) {
  return record_trials(trials, nullptr);
}

int64_t ResultStore::record_load_point(LoadPointRecord point,
                                       const std::vector<TrialRecord>& requests) {
  if (!requests.empty() && requests.front().case_key != point.case_key)
    throw std::invalid_argument(db_->label() + ": load point '" + point.case_key +
                                "' with requests of case '" + requests.front().case_key + "'");
  if (point.concurrency < 1 || !(point.request_rate >= 0) || !(point.wall_s >= 0))
    throw std::invalid_argument(db_->label() + ": load point '" + point.case_key +
                                "': concurrency < 1, negative rate or wall time");
  if (point.recorded_at.empty()) point.recorded_at = utc_now();
  return record_trials(requests, &point);
}

std::vector<LoadPointRecord> ResultStore::load_points() const {
  std::vector<LoadPointRecord> out;
  if (table_columns(*db_, "load_points").empty()) return out;
  auto st = db_->prepare(
      "SELECT case_key, run_id, method, context_len, concurrency, request_rate, requests, wall_s, "
      "output_tokens, recorded_at FROM load_points ORDER BY method, context_len, request_rate, "
      "concurrency");
  while (st.step())
    out.push_back({st.get_text(0), st.get_text(1), st.get_text(2), st.get_int(3), st.get_int(4),
                   st.get_double(5), st.get_int(6), st.get_double(7), st.get_int(8),
                   st.get_text(9)});
  return out;
}

int64_t ResultStore::record_trials(const std::vector<TrialRecord>& trials,
                                   const LoadPointRecord* point) {
  if (read_only_) throw std::logic_error(db_->label() + ": record_case on a read-only store");
  if (trials.empty()) throw std::invalid_argument(db_->label() + ": record_case with no trials");
  const std::string& key = trials.front().case_key;
  if (key.empty()) throw std::invalid_argument(db_->label() + ": record_case with empty case_key");
  std::set<int64_t> seen;
  std::set<std::string> run_ids;
  for (const auto& t : trials) {
    check_record(t, key);
    if (!seen.insert(t.trial_index).second)
      throw std::invalid_argument(db_->label() + ": case '" + key + "': trial_index " +
                                  std::to_string(t.trial_index) + " given twice");
    run_ids.insert(t.run_id);
  }
  const std::string now = utc_now();
  std::vector<TrialRecord> filled = trials;
  for (TrialRecord& t : filled) {
    if (t.recorded_at.empty()) t.recorded_at = now;
    if (t.config_key.empty()) t.config_key = t.case_key;
  }
  return db_->transaction([&] {
    auto chk = db_->prepare("SELECT 1 FROM runs WHERE run_id = ?");
    for (const auto& id : run_ids) {
      chk.reset();
      if (!chk.bind(1, id).step())
        throw std::invalid_argument(db_->label() + ": case '" + key + "': run_id '" + id +
                                    "' is not in the runs table (call begin_run first)");
    }
    auto st = db_->prepare(upsert_trial_sql());
    int64_t written = 0;
    for (const auto& t : filled) written += upsert(st, t);
    if (point) insert_load_point(*db_, *point);
    return written;
  });
}

int64_t ResultStore::record_failure(const TrialRecord& base, const std::string& error) {
  return record_case({make_failed(base, error.empty() ? std::string("unknown error") : error)});
}

std::string ResultStore::select_list() const {
  return column_list(trial_fields(), trial_cols_);
}

void ResultStore::validate_where(const std::string& expr) const {
  auto bad = [&](const std::string& why) {
    throw std::invalid_argument("--where '" + expr + "': " + why);
  };
  if (expr.find_first_not_of(" \t\r\n") == std::string::npos) bad("empty expression");
  // A lexical pass first: the expression is pasted inside "WHERE (...)", so it must not be able to
  // close that parenthesis, start a comment that swallows it, or start another statement.
  int depth = 0;
  char quote = 0;
  for (size_t i = 0; i < expr.size(); ++i) {
    const char c = expr[i];
    if (quote) {
      if (c == quote) quote = 0;  // a doubled quote re-opens at once: same effect
      continue;
    }
    if (c == '\'' || c == '"' || c == '`')
      quote = c;
    else if (c == '[')
      quote = ']';
    else if (c == ';')
      bad("';' is not allowed (one expression only)");
    else if (c == '-' && i + 1 < expr.size() && expr[i + 1] == '-')
      bad("comments are not allowed");
    else if (c == '/' && i + 1 < expr.size() && expr[i + 1] == '*')
      bad("comments are not allowed");
    else if (c == '(')
      ++depth;
    else if (c == ')' && --depth < 0)
      bad("unbalanced ')'");
  }
  if (quote) bad("unterminated quote");
  if (depth != 0) bad("unbalanced '('");
  const std::string sql = "SELECT count(*) FROM trials WHERE (" + expr + ")";
  sqlite3_stmt* st = nullptr;
  const char* tail = nullptr;
  const int rc = sqlite3_prepare_v2(db_->handle(), sql.c_str(), int(sql.size()), &st, &tail);
  const std::string msg = rc == SQLITE_OK ? "" : sqlite3_errmsg(db_->handle());
  const bool readonly = st && sqlite3_stmt_readonly(st);
  const bool trailing = tail && std::string(tail).find_first_not_of(" \t\r\n") != std::string::npos;
  sqlite3_finalize(st);
  if (rc != SQLITE_OK) bad(msg);
  if (trailing || !readonly) bad("not a single read-only expression");
}

std::vector<TrialRecord> ResultStore::trials(const TrialFilter& f) const {
  std::string sql = "SELECT " + select_list() + " FROM trials WHERE 1";
  if (!f.include_failed) sql += " AND error IS NULL";
  if (f.method) sql += " AND method = :method";
  if (f.context_len) sql += " AND context_len = :ctx";
  if (f.run_id) sql += " AND run_id = :run";
  if (!f.where.empty()) {
    validate_where(f.where);
    sql += " AND (" + f.where + ")";
  }
  sql += " ORDER BY id";
  auto st = db_->prepare(sql);
  auto bind_named = [&](const char* name, const auto& v) {
    const int i = sqlite3_bind_parameter_index(st.handle(), name);
    if (i > 0) st.bind(i, v);
  };
  if (f.method) bind_named(":method", *f.method);
  if (f.context_len) bind_named(":ctx", *f.context_len);
  if (f.run_id) bind_named(":run", *f.run_id);
  std::vector<TrialRecord> out;
  while (st.step()) {
    out.push_back(read_record(st, trial_fields(), db_->label(), "trials"));
    // A store before v7, read without migrating: its keys had no conditions.
    if (out.back().config_key.empty()) out.back().config_key = out.back().case_key;
  }
  return out;
}

std::optional<std::string> ResultStore::cached_digest(const FileIdentity& id) const {
  if (version_ < 4) return std::nullopt;  // an old store read as it is has no cache
  auto st = db_->prepare(
      "SELECT sha256 FROM file_digests WHERE path = ? AND size = ? AND mtime_ns = ? AND inode = ?");
  st.bind(1, id.path);
  st.bind(2, id.size);
  st.bind(3, id.mtime_ns);
  st.bind(4, id.inode);
  if (!st.step()) return std::nullopt;
  return st.get_text(0);
}

void ResultStore::remember_digest(const FileIdentity& id, const std::string& sha256) {
  db_->transaction([&] {
    auto st = db_->prepare(
        "INSERT OR REPLACE INTO file_digests (path, size, mtime_ns, inode, sha256) "
        "VALUES (?, ?, ?, ?, ?)");
    st.bind(1, id.path);
    st.bind(2, id.size);
    st.bind(3, id.mtime_ns);
    st.bind(4, id.inode);
    st.bind(5, sha256);
    st.step();
  });
}

std::vector<RunInfo> ResultStore::runs() const {
  auto st = db_->prepare("SELECT " + column_list(run_fields(), run_cols_) +
                         " FROM runs ORDER BY started_at, run_id");
  std::vector<RunInfo> out;
  while (st.step()) out.push_back(read_record(st, run_fields(), db_->label(), "runs"));
  return out;
}

std::optional<RunInfo> ResultStore::run(const std::string& run_id) const {
  auto st = db_->prepare("SELECT " + column_list(run_fields(), run_cols_) +
                         " FROM runs WHERE run_id = ?");
  st.bind(1, run_id);
  if (!st.step()) return std::nullopt;
  return read_record(st, run_fields(), db_->label(), "runs");
}

int64_t ResultStore::trial_count(bool include_failed) const {
  auto st = db_->prepare(include_failed ? "SELECT count(*) FROM trials"
                                        : "SELECT count(*) FROM trials WHERE error IS NULL");
  st.step();
  return st.get_int(0);
}

MergeSummary merge(const std::string& out_path, const std::vector<std::string>& inputs) {
  // Open (and so validate) every input before the output is touched.
  std::vector<ResultStore> in;
  for (const auto& p : inputs) in.push_back(ResultStore::open_readonly(p));
  ResultStore out = ResultStore::open(out_path);
  sqlite::Database& db = out.db();
  MergeSummary sum;
  const auto run_names = names_of_runs();
  for (const auto& src : in) {
    const auto runs = src.runs();
    TrialFilter all;
    all.include_failed = true;
    const auto trials = src.trials(all);
    const auto points = src.load_points();
    const MergeSummary s = db.transaction([&] {
      MergeSummary s;  // per attempt, so a retried transaction does not double count
      auto ins_run = db.prepare(insert_sql("runs", run_names, " ON CONFLICT(run_id) DO NOTHING"));
      for (const auto& r : runs) {
        ins_run.reset();
        int i = 0;
        for (const auto& f : run_fields()) bind_value(ins_run, ++i, f.get(r));
        ins_run.run();
        s.runs_added += db.changes();
      }
      auto existing = db.prepare(
          "SELECT run_id, error IS NOT NULL FROM trials WHERE case_key = ? AND trial_index = ?");
      auto up = db.prepare(upsert_trial_sql());
      for (const auto& t : trials) {
        existing.reset();
        existing.bind_all(t.case_key, t.trial_index);
        if (!existing.step()) {
          up.reset();
          int i = 0;
          for (const auto& f : trial_fields()) bind_value(up, ++i, f.get(t));
          up.run();
          ++s.trials_added;
          continue;
        }
        const std::string have_run = existing.get_text(0);
        const bool have_failed = existing.get_int(1) != 0;
        if (have_failed && !t.failed()) {
          up.reset();
          int i = 0;
          for (const auto& f : trial_fields()) bind_value(up, ++i, f.get(t));
          up.run();
          ++s.failures_replaced;
        } else if (have_run == t.run_id) {
          ++s.trials_duplicate;
        } else {
          ++s.trials_conflict;
        }
      }
      for (const auto& p : points) insert_load_point(db, p);
      return s;
    });
    sum.runs_added += s.runs_added;
    sum.trials_added += s.trials_added;
    sum.trials_duplicate += s.trials_duplicate;
    sum.trials_conflict += s.trials_conflict;
    sum.failures_replaced += s.failures_replaced;
  }
  return sum;
}

}  // namespace accel::results
