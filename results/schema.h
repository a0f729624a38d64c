// The store's schema: the frozen v1 DDL and the ordered migrations after it. A fresh store is built
// by running v1 and then every migration, so a new store and a migrated old one are the same thing.
// Never edit a released migration; append a new one and bump kSchemaVersion.
#pragma once
#include <string>
#include <vector>

#include "results/sqlite_db.h"

namespace accel::results {

inline constexpr int kSchemaVersion = 8;
// PRAGMA application_id of an accelbench store ("ACCB"), so a foreign SQLite file is refused.
inline constexpr int kApplicationId = 0x41434342;

// The v1 DDL exactly as released (sets user_version = 1). Kept so that tests can build old stores.
const char* schema_v1_ddl();

struct Migration {
  int to_version;   // user_version after this step
  const char* why;  // one line for humans
  const char* sql;
};
// Migrations from v1 upwards, in order; the last one reaches kSchemaVersion.
const std::vector<Migration>& migrations();

int user_version(sqlite::Database& db);
int application_id(sqlite::Database& db);

// Brings a writable database to kSchemaVersion inside one IMMEDIATE transaction: creates v1 when
// the file is empty, then applies the missing migrations. Safe when several processes open the same
// new store at once (the version is re-read under the write lock). Throws for a newer schema or a
// file that is not an accelbench store.
void migrate(sqlite::Database& db);

// Column names of a table, in order (PRAGMA table_info); empty when the table does not exist.
std::vector<std::string> table_columns(sqlite::Database& db, const std::string& table);

}  // namespace accel::results
