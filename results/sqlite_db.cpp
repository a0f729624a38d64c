// Implementation of sqlite_db.h: error wrapping, binding/reading, and the busy-retry policy.
// Nothing here knows the accelbench schema.
#include "results/sqlite_db.h"

#include <chrono>
#include <filesystem>
#include <random>
#include <thread>

namespace accel::sqlite {

namespace {
std::string errmsg(sqlite3* db, int rc) {
  return db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
}
}  // namespace

Statement::Statement(sqlite3* db, std::string_view sql, std::string context)
    : db_(db), context_(std::move(context)) {
  const char* tail = nullptr;
  const int rc = sqlite3_prepare_v3(db_, sql.data(), int(sql.size()), 0, &stmt_, &tail);
  if (rc != SQLITE_OK)
    throw Error(context_ + ": prepare failed: " + errmsg(db_, rc) + " in: " + std::string(sql),
                sqlite3_extended_errcode(db_));
}

Statement::~Statement() {
  if (stmt_) sqlite3_finalize(stmt_);
}

void Statement::fail(int rc, const char* op) const {
  (void)rc;
  const char* sql = sqlite3_sql(stmt_);
  throw Error(context_ + ": " + op + ": " + errmsg(db_, rc) + " (in: " + (sql ? sql : "?") + ")",
              sqlite3_extended_errcode(db_));
}

Statement& Statement::bind(int i, std::nullptr_t) {
  if (int rc = sqlite3_bind_null(stmt_, i); rc != SQLITE_OK) fail(rc, "bind");
  return *this;
}
Statement& Statement::bind(int i, int64_t v) {
  if (int rc = sqlite3_bind_int64(stmt_, i, v); rc != SQLITE_OK) fail(rc, "bind");
  return *this;
}
Statement& Statement::bind(int i, double v) {
  if (int rc = sqlite3_bind_double(stmt_, i, v); rc != SQLITE_OK) fail(rc, "bind");
  return *this;
}
Statement& Statement::bind(int i, std::string_view v) {
  if (int rc = sqlite3_bind_text64(stmt_, i, v.data(), v.size(), SQLITE_TRANSIENT, SQLITE_UTF8);
      rc != SQLITE_OK)
    fail(rc, "bind");
  return *this;
}

bool Statement::step() {
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  // A failed step leaves the statement needing a reset before reuse; do it so a retry works.
  sqlite3_reset(stmt_);
  fail(rc, "step");
}

void Statement::run() {
  while (step()) {
  }
}

void Statement::reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

int Statement::column_count() const {
  return sqlite3_column_count(stmt_);
}
std::string Statement::column_name(int c) const {
  return sqlite3_column_name(stmt_, c);
}
bool Statement::is_null(int c) const {
  return sqlite3_column_type(stmt_, c) == SQLITE_NULL;
}
int64_t Statement::get_int(int c) const {
  return sqlite3_column_int64(stmt_, c);
}
double Statement::get_double(int c) const {
  return sqlite3_column_double(stmt_, c);
}
std::string Statement::get_text(int c) const {
  const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, c));
  return p ? std::string(p, size_t(sqlite3_column_bytes(stmt_, c))) : std::string();
}
std::optional<int64_t> Statement::get_opt_int(int c) const {
  if (is_null(c)) return std::nullopt;
  return get_int(c);
}
std::optional<double> Statement::get_opt_double(int c) const {
  if (is_null(c)) return std::nullopt;
  return get_double(c);
}
std::optional<std::string> Statement::get_opt_text(int c) const {
  if (is_null(c)) return std::nullopt;
  return get_text(c);
}

Database::Database(const std::string& path, Mode mode, BusyPolicy busy)
    : path_(path),
      label_("[results] " + std::filesystem::path(path).filename().string()),
      busy_(busy) {
  int flags = SQLITE_OPEN_NOMUTEX;
  switch (mode) {
    case Mode::ReadOnly:
      flags |= SQLITE_OPEN_READONLY;
      break;
    case Mode::ReadWrite:
      flags |= SQLITE_OPEN_READWRITE;
      break;
    case Mode::ReadWriteCreate:
      flags |= SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
      break;
  }
  const int rc = sqlite3_open_v2(path.c_str(), &db_, flags, nullptr);
  if (rc != SQLITE_OK) {
    const std::string msg = errmsg(db_, rc);
    sqlite3_close_v2(db_);
    db_ = nullptr;
    throw Error(label_ + ": cannot open: " + msg, rc);
  }
  sqlite3_extended_result_codes(db_, 1);
  sqlite3_busy_timeout(db_, busy_.busy_timeout_ms);
}

Database::~Database() {
  if (db_) sqlite3_close_v2(db_);
}

Statement Database::prepare(std::string_view sql) const {
  return Statement(db_, sql, label_);
}

void Database::exec(std::string_view sql_view) {
  const std::string sql(sql_view);
  for (int attempt = 0;; ++attempt) {
    char* err = nullptr;
    const int rc = sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err);
    if (rc == SQLITE_OK) return;
    const std::string msg = err ? err : errmsg(db_, rc);
    sqlite3_free(err);
    Error e(label_ + ": " + msg + " (in: " + sql + ")", sqlite3_extended_errcode(db_));
    // Only retry outside a transaction: inside one the caller's transaction() retries as a whole.
    if (!e.busy() || in_transaction() || !backoff(attempt)) throw e;
  }
}

bool Database::backoff(int attempt) {
  if (waited_ms_ >= busy_.max_total_wait_ms) return false;
  // 1, 2, 4 ... 128 ms, with jitter so that colliding writers de-synchronise.
  const int base = 1 << std::min(attempt, 7);
  thread_local std::minstd_rand rng(std::random_device{}());
  const int ms = base + int(rng() % unsigned(base + 1));
  std::this_thread::sleep_for(std::chrono::milliseconds(ms));
  waited_ms_ += ms;
  return true;
}

void Database::begin_immediate() {
  // BEGIN IMMEDIATE takes the write lock up front: a deferred transaction that reads and then
  // writes can fail with SQLITE_BUSY_SNAPSHOT in WAL mode, which no busy handler can cure.
  char* err = nullptr;
  const int rc = sqlite3_exec(db_, "BEGIN IMMEDIATE", nullptr, nullptr, &err);
  if (rc == SQLITE_OK) return;
  const std::string msg = err ? err : errmsg(db_, rc);
  sqlite3_free(err);
  throw Error(label_ + ": BEGIN IMMEDIATE: " + msg, sqlite3_extended_errcode(db_));
}

void Database::commit() {
  char* err = nullptr;
  const int rc = sqlite3_exec(db_, "COMMIT", nullptr, nullptr, &err);
  if (rc == SQLITE_OK) return;
  const std::string msg = err ? err : errmsg(db_, rc);
  sqlite3_free(err);
  throw Error(label_ + ": COMMIT: " + msg, sqlite3_extended_errcode(db_));
}

void Database::rollback_quietly() noexcept {
  if (db_ && in_transaction()) sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
}

}  // namespace accel::sqlite
