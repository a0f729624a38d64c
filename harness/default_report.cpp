// print_default_report: the table `accelbench run` prints when it finishes, `serve` after a load
// sweep and `ttft` otherwise (see cli.h).
#include <cstdio>

#include "harness/cli.h"
#include "reports/tables.h"
#include "results/result_store.h"

namespace accel {

void print_default_report(const std::string& db_path, bool load_sweep) {
  const auto store = results::ResultStore::open_readonly(db_path);
  const reports::Table t = reports::make_report(store, load_sweep ? "serve" : "ttft", {});
  std::fputs(reports::render(t, reports::Format::Markdown).c_str(), stdout);
}

}  // namespace accel
