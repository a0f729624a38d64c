// print_default_report: the `ttft` table `accelbench run` prints when it finishes (see cli.h).
#include <cstdio>

#include "harness/cli.h"
#include "reports/tables.h"
#include "results/result_store.h"

namespace accel {

void print_default_report(const std::string& db_path) {
  const auto store = results::ResultStore::open_readonly(db_path);
  const reports::Table t = reports::make_report(store, "ttft", {});
  std::fputs(reports::render(t, reports::Format::Markdown).c_str(), stdout);
}

}  // namespace accel
