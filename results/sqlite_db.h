// A small RAII layer over the sqlite3 C API: a connection, prepared statements with typed binding
// and reading, and IMMEDIATE transactions retried with backoff when another process holds the lock.
// It knows nothing of accelbench's schema; errors are exceptions naming the database file.
#pragma once
#include <sqlite3.h>

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

namespace accel::sqlite {

// An SQLite failure; `code()` is the extended result code (SQLITE_BUSY,
// SQLITE_CONSTRAINT_UNIQUE...).
class Error : public std::runtime_error {
 public:
  Error(const std::string& what, int code) : std::runtime_error(what), code_(code) {}
  int code() const { return code_; }
  // True for the lock-contention codes that a retry can cure.
  bool busy() const { return (code_ & 0xff) == SQLITE_BUSY || (code_ & 0xff) == SQLITE_LOCKED; }

 private:
  int code_;
};

class Statement {
 public:
  Statement(sqlite3* db, std::string_view sql, std::string context);
  ~Statement();
  Statement(Statement&& o) noexcept
      : db_(o.db_), stmt_(std::exchange(o.stmt_, nullptr)), context_(std::move(o.context_)) {}
  Statement& operator=(Statement&&) = delete;
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  // Binding, 1-based like SQLite. Text is copied (SQLITE_TRANSIENT), so temporaries are safe.
  Statement& bind(int i, std::nullptr_t);
  Statement& bind(int i, int64_t v);
  Statement& bind(int i, int v) { return bind(i, int64_t(v)); }
  Statement& bind(int i, double v);
  Statement& bind(int i, std::string_view v);
  Statement& bind(int i, const std::string& v) { return bind(i, std::string_view(v)); }
  Statement& bind(int i, const char* v) { return bind(i, std::string_view(v)); }
  template <class T>
  Statement& bind(int i, const std::optional<T>& v) {
    return v ? bind(i, *v) : bind(i, nullptr);
  }
  // bind_all(a, b, c) binds parameters 1, 2, 3.
  template <class... A>
  Statement& bind_all(const A&... a) {
    int i = 0;
    (bind(++i, a), ...);
    return *this;
  }

  // Advances one row: true when a row is available, false when done. Throws on error.
  bool step();
  // Steps to completion (for statements without rows).
  void run();
  // Ready for re-execution with new bindings.
  void reset();

  int column_count() const;
  std::string column_name(int c) const;
  bool is_null(int c) const;
  int64_t get_int(int c) const;
  double get_double(int c) const;
  std::string get_text(int c) const;  // NULL reads as ""
  std::optional<int64_t> get_opt_int(int c) const;
  std::optional<double> get_opt_double(int c) const;
  std::optional<std::string> get_opt_text(int c) const;

  sqlite3_stmt* handle() const { return stmt_; }

 private:
  [[noreturn]] void fail(int rc, const char* op) const;
  sqlite3* db_;
  sqlite3_stmt* stmt_ = nullptr;
  std::string context_;
};

// How long (in total) a transaction keeps retrying on SQLITE_BUSY before giving up, and how long
// each lock wait may take inside SQLite's own busy handler.
struct BusyPolicy {
  int busy_timeout_ms = 5000;
  int max_total_wait_ms = 120000;
};

class Database {
 public:
  enum class Mode { ReadOnly, ReadWrite, ReadWriteCreate };
  Database(const std::string& path, Mode mode, BusyPolicy busy = {});
  ~Database();
  Database(Database&& o) noexcept
      : db_(std::exchange(o.db_, nullptr)),
        path_(std::move(o.path_)),
        label_(std::move(o.label_)),
        busy_(o.busy_) {}
  Database& operator=(Database&&) = delete;
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;

  // Runs one or more statements with no results, retrying briefly on SQLITE_BUSY.
  void exec(std::string_view sql);
  Statement prepare(std::string_view sql) const;
  int64_t changes() const { return sqlite3_changes64(db_); }
  bool in_transaction() const { return sqlite3_get_autocommit(db_) == 0; }

  // Runs f() inside BEGIN IMMEDIATE ... COMMIT. Any exception rolls back; a busy error (from
  // BEGIN, a statement or COMMIT) rolls back, sleeps with jittered exponential backoff and runs
  // f() again, so f must only touch the database (or be safe to repeat).
  template <class F>
  auto transaction(F&& f) -> decltype(f()) {
    waited_ms_ = 0;  // the retry budget is per transaction
    for (int attempt = 0;; ++attempt) {
      try {
        begin_immediate();
        if constexpr (std::is_void_v<decltype(f())>) {
          f();
          commit();
          return;
        } else {
          auto r = f();
          commit();
          return r;
        }
      } catch (const Error& e) {
        rollback_quietly();
        if (!e.busy() || !backoff(attempt)) throw;
      } catch (...) {
        rollback_quietly();
        throw;
      }
    }
  }

  // "[results] file.sqlite" — the prefix of every error about this database.
  const std::string& label() const { return label_; }
  const std::string& path() const { return path_; }
  sqlite3* handle() const { return db_; }

  // Sleeps before retry number `attempt`; false once the total wait budget is spent.
  bool backoff(int attempt);

 private:
  void begin_immediate();
  void commit();
  void rollback_quietly() noexcept;
  sqlite3* db_ = nullptr;
  std::string path_, label_;
  BusyPolicy busy_;
  int waited_ms_ = 0;
};

}  // namespace accel::sqlite
