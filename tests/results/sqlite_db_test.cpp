// Tests of the sqlite RAII wrapper: binding and reading every type, rollback on exceptions, error
// messages naming the file, and a transaction that waits out another connection's write lock.
#include "results/sqlite_db.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "tests/support/test_support.h"

namespace accel::sqlite {
namespace {

TEST(SqliteDb, BindAndReadEveryType) {
  test::TempDir dir;
  Database db(dir.file("a.sqlite"), Database::Mode::ReadWriteCreate);
  db.exec("CREATE TABLE t (i INTEGER, d REAL, s TEXT, n TEXT)");
  db.prepare("INSERT INTO t VALUES (?, ?, ?, ?)")
      .bind_all(int64_t(-9007199254740993), 0.1, std::string("a'b\"c\n"),
                std::optional<std::string>())
      .run();
  auto st = db.prepare("SELECT i, d, s, n FROM t");
  ASSERT_TRUE(st.step());
  EXPECT_EQ(st.get_int(0), -9007199254740993);
  EXPECT_EQ(st.get_double(1), 0.1);
  EXPECT_EQ(st.get_text(2), "a'b\"c\n");
  EXPECT_TRUE(st.is_null(3));
  EXPECT_EQ(st.get_opt_text(3), std::nullopt);
  EXPECT_EQ(st.get_opt_int(0), -9007199254740993);
  EXPECT_FALSE(st.step());
}

TEST(SqliteDb, TransactionRollsBackOnException) {
  test::TempDir dir;
  Database db(dir.file("a.sqlite"), Database::Mode::ReadWriteCreate);
  db.exec("CREATE TABLE t (i INTEGER)");
  EXPECT_THROW(db.transaction([&] {
    db.prepare("INSERT INTO t VALUES (1)").run();
    throw std::runtime_error("boom");
  }),
               std::runtime_error);
  EXPECT_FALSE(db.in_transaction());
  auto st = db.prepare("SELECT count(*) FROM t");
  st.step();
  EXPECT_EQ(st.get_int(0), 0);
  EXPECT_EQ(db.transaction([&] {
    db.prepare("INSERT INTO t VALUES (2)").run();
    return db.changes();
  }),
            1);
}

TEST(SqliteDb, ErrorsNameTheFile) {
  test::TempDir dir;
  Database db(dir.file("named.sqlite"), Database::Mode::ReadWriteCreate);
  try {
    db.prepare("SELEC nonsense");
    FAIL() << "no exception";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("[results] named.sqlite"), std::string::npos) << e.what();
  }
  EXPECT_THROW(Database(dir.file("missing.sqlite"), Database::Mode::ReadOnly), Error);
  EXPECT_FALSE(std::filesystem::exists(dir.file("missing.sqlite")));
}

TEST(SqliteDb, TransactionWaitsForAnotherWriter) {
  test::TempDir dir;
  const std::string path = dir.file("a.sqlite");
  Database a(path, Database::Mode::ReadWriteCreate);
  a.exec("PRAGMA journal_mode = WAL; CREATE TABLE t (i INTEGER)");
  // b's own busy handler gives up after 5 ms, so only the transaction's retry loop can succeed.
  Database b(path, Database::Mode::ReadWrite, BusyPolicy{5, 10000});
  std::atomic<bool> locked{false};
  std::thread holder([&] {
    a.transaction([&] {
      a.prepare("INSERT INTO t VALUES (1)").run();
      locked = true;
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
    });
  });
  while (!locked) std::this_thread::yield();
  b.transaction([&] { b.prepare("INSERT INTO t VALUES (2)").run(); });
  holder.join();
  auto st = b.prepare("SELECT count(*) FROM t");
  st.step();
  EXPECT_EQ(st.get_int(0), 2);
}

TEST(SqliteDb, BusyGivesUpAfterBudget) {
  test::TempDir dir;
  const std::string path = dir.file("a.sqlite");
  Database a(path, Database::Mode::ReadWriteCreate);
  a.exec("PRAGMA journal_mode = WAL; CREATE TABLE t (i INTEGER)");
  Database b(path, Database::Mode::ReadWrite, BusyPolicy{1, 50});
  a.exec("BEGIN IMMEDIATE");
  try {
    b.transaction([&] { b.prepare("INSERT INTO t VALUES (2)").run(); });
    FAIL() << "no exception";
  } catch (const Error& e) {
    EXPECT_TRUE(e.busy()) << e.what();
  }
  a.exec("ROLLBACK");
}

}  // namespace
}  // namespace accel::sqlite
