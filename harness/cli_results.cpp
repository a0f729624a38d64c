// `accelbench report`, `compare` and `merge`: thin CLI glue over results/ and reports/. Reading
// commands open stores read-only, so a mistyped path is an error naming the file, never a new
// empty store. Exit codes: 0 ok, 1 error (cli_main), 3 = compare found a regression.
#include <algorithm>
#include <cstdio>
#include <stdexcept>

#include "harness/cli.h"
#include "reports/compare.h"
#include "reports/niah_report.h"
#include "reports/paper_table.h"
#include "reports/serve_table.h"
#include "reports/tables.h"
#include "results/result_store.h"

namespace accel {

namespace {
constexpr int kExitRegression = 3;
constexpr int kExitUsage = 2;

// --table accepts every report by name plus "paper", which needs published files besides the
// store and so is dispatched here rather than by make_report.
std::vector<std::string> table_names() {
  auto v = reports::report_names();
  v.push_back("paper");
  return v;
}

// `--table paper`: "list", an empty or an unknown --paper prints the published files (unknown:
// exit 2 with the name on stderr).
int report_paper(const std::string& db, const std::string& dir, const std::string& name,
                 const reports::ReportOptions& opt, reports::Format format) {
  const auto sets = reports::load_published_dir(dir);
  const auto it = std::find_if(sets.begin(), sets.end(),
                               [&](const reports::PublishedSet& s) { return s.id == name; });
  if (it == sets.end()) {
    std::fputs(reports::render(reports::published_list_table(sets), format).c_str(), stdout);
    if (name.empty() || name == "list") return 0;
    std::fprintf(stderr, "report: no published file with id '%s' in %s (listed above)\n",
                 name.c_str(), dir.c_str());
    return kExitUsage;
  }
  const auto store = results::ResultStore::open_readonly(db);
  std::fputs(reports::render_paper(reports::paper_table(store, *it, opt), format).c_str(), stdout);
  return 0;
}
}  // namespace

void register_results_commands(CLI::App& app, CliCommands& out) {
  struct ReportArgs {
    std::string db, table, format = "md", where, param, metric, svg, paper,
                           published = "reports/published";
  };
  auto r = std::make_shared<ReportArgs>();
  CLI::App* report = app.add_subcommand("report", "Print a table from a results store");
  report->add_option("--db", r->db, "Results store (SQLite)")->required();
  report
      ->add_option("--table", r->table,
                   "ttft, phases, ablation, costmodel (SpecPrefill ratio model), agreement "
                   "(with the reference), decode (decode tok/s and KV bytes per token against "
                   "the f32-cache baseline), suite (every suite metric by its declaration), "
                   "parity (token-exact parity and the cross-configuration matrix), niah (NIAH "
                   "score by needle depth and context length), pareto (quality against TTFT and "
                   "TTFT FLOPs, with the Pareto fronts), serve (load-sweep latency percentiles and "
                   "throughput of endpoint plans), runs, trials, or paper (published "
                   "values beside this store's, see --paper)")
      ->required()
      ->check(CLI::IsMember(table_names()));
  report->add_option("--format", r->format, "md, csv, latex or json")
      ->check(CLI::IsMember({"md", "markdown", "csv", "latex", "tex", "json"}));
  report->add_option("--where", r->where,
                     "SQL expression over trials columns, e.g. \"context_len >= 8192\"");
  report->add_option("--param", r->param, "Swept parameter for --table ablation (e.g. keep)");
  report->add_option("--metric", r->metric,
                     "With --table pareto: the quality score (default: a '<suite>.score' in the "
                     "selection, else agreement.top1)");
  report->add_option("--svg", r->svg,
                     "With --table niah: also write one heatmap per configuration (depth x "
                     "context length, colour = score) as DIR/niah-<configuration>.svg; with "
                     "--table pareto: one quality-vs-TTFT-FLOPs plot per target, workload and "
                     "context as DIR/pareto-*.svg; with --table serve: the latency-vs-throughput "
                     "plot per prompt length as DIR/serve-ctx<N>.svg");
  report->add_option("--paper", r->paper,
                     "With --table paper: the published file's id; 'list' (or an unknown id) "
                     "lists them");
  report->add_option("--published", r->published,
                     "With --table paper: directory of published value files (default "
                     "reports/published, relative to the working directory)");
  out.push_back(
      {report, [r] {
         if (r->table == "paper") {
           if (!r->svg.empty() || !r->param.empty())
             throw std::invalid_argument("--svg and --param do not apply to --table paper");
           reports::ReportOptions opt;
           opt.where = r->where;
           return report_paper(r->db, r->published, r->paper, opt,
                               reports::parse_format(r->format));
         }
         if (!r->paper.empty()) throw std::invalid_argument("--paper needs --table paper");
         if (!r->svg.empty() && r->table != "niah" && r->table != "pareto" && r->table != "serve")
           throw std::invalid_argument(
               "--svg draws NIAH heatmaps, pareto or serve plots: use --table niah, "
               "pareto or serve");
         if (!r->metric.empty() && r->table != "pareto")
           throw std::invalid_argument("--metric applies to --table pareto");
         const auto store = results::ResultStore::open_readonly(r->db);
         reports::ReportOptions opt;
         opt.where = r->where;
         opt.param = r->param;
         opt.metric = r->metric;
         const reports::Table t = reports::make_report(store, r->table, opt);
         std::fputs(reports::render(t, reports::parse_format(r->format)).c_str(), stdout);
         if (!r->svg.empty())
           for (const auto& p :
                r->table == "pareto"  ? reports::write_pareto_plots(store, opt, r->svg)
                : r->table == "serve" ? reports::write_serve_plots(store, opt, r->svg)
                                      : reports::write_niah_heatmaps(store, opt, r->svg))
             std::fprintf(stderr, "wrote %s\n", p.c_str());
         return 0;
       }});

  struct CompareArgs {
    std::string baseline, candidate, format = "md";
    double max_slowdown_pct = 5;
    std::vector<std::string> metrics = {"ttft_s"};
    int min_trials = 5;
    double confidence = 0.95;
  };
  auto c = std::make_shared<CompareArgs>();
  CLI::App* compare = app.add_subcommand(
      "compare", "Compare a candidate store against a baseline store; exit 3 on a regression");
  compare->add_option("--baseline", c->baseline, "Baseline results store")->required();
  compare->add_option("--candidate", c->candidate, "Candidate results store")->required();
  compare
      ->add_option("--max-slowdown", c->max_slowdown_pct,
                   "Allowed slowdown in percent (default 5); a case regresses when the "
                   "confidence interval of its slowdown lies entirely above 1 + this")
      ->check(CLI::NonNegativeNumber);
  compare->add_option("--metric", c->metrics,
                      "ttft_s (default), decode_tok_s, peak_rss_bytes, kv_bytes");
  compare->add_option("--min-trials", c->min_trials,
                      "Trials needed on each side to judge a case (default 5)");
  compare
      ->add_option("--confidence", c->confidence,
                   "Joint confidence over all judged cases (default 0.95; Bonferroni per case)")
      ->check(CLI::Range(0.5, 0.999999));
  compare->add_option("--format", c->format, "md, csv, latex or json")
      ->check(CLI::IsMember({"md", "markdown", "csv", "latex", "tex", "json"}));
  out.push_back({compare, [c] {
                   const auto base = results::ResultStore::open_readonly(c->baseline);
                   const auto cand = results::ResultStore::open_readonly(c->candidate);
                   reports::CompareOptions opt;
                   opt.metrics = c->metrics;
                   opt.max_slowdown = c->max_slowdown_pct / 100.0;
                   opt.min_trials = c->min_trials;
                   opt.level = c->confidence;
                   const auto res = reports::compare_stores(base, cand, opt);
                   const auto t = reports::compare_table(res, opt);
                   std::fputs(reports::render(t, reports::parse_format(c->format)).c_str(), stdout);
                   std::fprintf(stderr, "compare: %zu matched case-metrics, %zu regressed\n",
                                res.cases.size(), res.regressed());
                   return res.regressed() ? kExitRegression : 0;
                 }});

  struct MergeArgs {
    std::string out;
    std::vector<std::string> inputs;
  };
  auto m = std::make_shared<MergeArgs>();
  CLI::App* merge = app.add_subcommand(
      "merge", "Merge results stores (e.g. from several machines) into OUT without duplicates");
  merge->add_option("out", m->out, "Output store (created if missing)")->required();
  merge->add_option("inputs", m->inputs, "Input stores")->required();
  out.push_back({merge, [m] {
                   const auto s = results::merge(m->out, m->inputs);
                   std::printf(
                       "merged %zu store(s) into %s: %lld run(s) added, %lld trial(s) added, "
                       "%lld duplicate, %lld conflicting (kept first), %lld failure(s) replaced\n",
                       m->inputs.size(), m->out.c_str(), (long long)s.runs_added,
                       (long long)s.trials_added, (long long)s.trials_duplicate,
                       (long long)s.trials_conflict, (long long)s.failures_replaced);
                   return 0;
                 }});
}

}  // namespace accel
