// `accelbench dashboard`: the static regression dashboard of one or more stores
// (reports/dashboard.h). Thin glue: opens every store read-only before anything is written, and
// writes DIR/index.html all or nothing.
#include <cstdio>

#include "harness/cli.h"
#include "reports/dashboard.h"
#include "results/result_store.h"

namespace accel {

void register_dashboard_command(CLI::App& app, CliCommands& out) {
  struct DashArgs {
    std::vector<std::string> dbs;
    std::string out, metric = "ttft_s", where;
    double max_slowdown_pct = 5, confidence = 0.95;
    int min_trials = 5;
    bool fail = false;
  };
  auto a = std::make_shared<DashArgs>();
  CLI::App* dash = app.add_subcommand(
      "dashboard",
      "Write a static HTML regression dashboard (DIR/index.html) of the runs in the stores");
  dash->add_option("--db", a->dbs, "Results store; repeat for the history (one store per run)")
      ->required();
  dash->add_option("--out", a->out, "Output directory (created)")->required();
  dash->add_option("--metric", a->metric,
                   "ttft_s (default), decode_tok_s, peak_rss_bytes, kv_bytes");
  dash->add_option("--where", a->where, "SQL expression over trials columns");
  dash->add_option("--max-slowdown", a->max_slowdown_pct,
                   "Allowed slowdown in percent (default 5), as compare")
      ->check(CLI::NonNegativeNumber);
  dash->add_option("--min-trials", a->min_trials, "Trials needed per side to judge (default 5)");
  dash->add_option("--confidence", a->confidence,
                   "Family-wise confidence of the verdicts (default 0.95)")
      ->check(CLI::Range(0.5, 0.9999));
  dash->add_flag("--fail-on-regression", a->fail, "Exit 3 when a case's latest run regressed");
  out.push_back(
      {dash, [a] {
         std::vector<results::ResultStore> stores;
         for (const auto& p : a->dbs) stores.push_back(results::ResultStore::open_readonly(p));
         std::vector<std::pair<std::string, const results::ResultStore*>> named;
         for (size_t i = 0; i < stores.size(); ++i) named.push_back({a->dbs[i], &stores[i]});
         reports::DashboardOptions opt;
         opt.history.metric = a->metric;
         opt.history.where = a->where;
         opt.compare.max_slowdown = a->max_slowdown_pct / 100.0;
         opt.compare.min_trials = a->min_trials;
         opt.compare.level = a->confidence;
         const reports::Dashboard d = reports::build_dashboard(named, opt);
         const std::string path = reports::write_dashboard(reports::dashboard_html(d, opt), a->out);
         std::fprintf(stderr, "wrote %s: %zu cases over %zu runs, %zu regressed, %zu improved\n",
                      path.c_str(), d.history.cases.size(), d.history.runs.size(), d.regressed(),
                      d.improved());
         return a->fail && d.regressed() ? 3 : 0;
       }});
}

}  // namespace accel
