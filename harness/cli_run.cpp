// `accelbench run [PLAN]`, `accelbench plan show PLAN` and `accelbench methods`.
#include <cstdio>
#include <iostream>

#include "harness/cli.h"
#include "harness/plan.h"
#include "harness/runner.h"
#include "methods/method.h"
#include "suites/suite.h"

namespace accel {

namespace {

Plan plan_from(const std::string& file, const std::string& models_dir) {
  if (file.empty()) return parse_plan(default_plan_json(), "(built-in quick plan)", models_dir);
  return load_plan(file, models_dir);
}

}  // namespace

void register_run_commands(CLI::App& app, CliCommands& out) {
  struct RunArgs {
    std::string plan, db = "runs/accelbench.sqlite", models_dir = "models-cache", shard;
    bool dry_run = false, no_report = false, reuse_timings = false;
    int threads = 0;
  };
  auto a = std::make_shared<RunArgs>();
  CLI::App* run = app.add_subcommand(
      "run", "Run a plan (default: the built-in quick plan on the tiny family) into a store");
  run->footer(
      "Resume: a rerun into the same store skips the cases it already holds. A timing case is done "
      "only if it was measured by the same build (commit; a dirty build also by the digest of its "
      "diff) on the same CPU model, so a rerun after a code change or on another machine "
      "re-measures it, and says why. A plan with \"timings\": false is quality-only (its figures "
      "are its suite's scores): its cases are reused whatever the commit or CPU.");
  run->add_option("plan", a->plan, "Plan JSON file (omit for the built-in quick plan)");
  run->add_option("--db", a->db, "Results store (default runs/accelbench.sqlite)");
  run->add_option("--models-dir", a->models_dir,
                  "Where synthetic families are made on demand (default models-cache)");
  run->add_option("--threads", a->threads, "Override the plan's thread count");
  run->add_option("--shard", a->shard,
                  "I/N: run only shard I of N (1-based; a case's shard is fixed by its key), for "
                  "array jobs whose stores are combined with `merge`");
  run->add_flag("--dry-run", a->dry_run, "Print the cases and whether each is done; run nothing");
  run->add_flag("--reuse-timings", a->reuse_timings,
                "Count timing cases measured on another commit or CPU as done (not re-measured); "
                "each trial keeps its run's commit and CPU, so reports still tell them apart");
  run->add_flag("--no-report", a->no_report,
                "Do not print the ttft table (serve table after a load sweep) afterwards");
  out.push_back(
      {run, [a] {
         const Plan p = plan_from(a->plan, a->models_dir);
         RunOptions opt;
         opt.db_path = a->db;
         opt.dry_run = a->dry_run;
         opt.threads = a->threads;
         opt.reuse_timings = a->reuse_timings;
         if (!a->shard.empty()) opt.shard = parse_shard(a->shard);
         const RunSummary s = run_plan(p, opt, std::cerr);
         if (a->dry_run) return 0;
         const std::string shard_note = opt.shard.all() ? "" : " in shard " + opt.shard.text();
         std::fprintf(stderr,
                      "run %s: %zu cases%s, %zu already done, %zu completed, %zu failed%s\n"
                      "measured %.2f s; harness overhead %.4f s (%.3f%% of measured); "
                      "setup %.2f s\n",
                      s.run_id.c_str(), s.cases, shard_note.c_str(), s.skipped, s.completed,
                      s.failed, s.interrupted ? ", interrupted (rerun to continue)" : "",
                      s.measured_s, s.overhead_s,
                      s.measured_s > 0 ? 100.0 * s.overhead_s / s.measured_s : 0.0, s.setup_s);
         if (!a->no_report && !s.interrupted)
           print_default_report(a->db, !p.load.max_concurrency.empty());
         return s.interrupted ? 130 : (s.failed ? 4 : 0);  // 4: some cases failed (recorded)
       }});

  auto plan_file = std::make_shared<std::string>();
  auto models_dir = std::make_shared<std::string>("models-cache");
  CLI::App* plan = app.add_subcommand("plan", "Inspect plans");
  plan->require_subcommand(1);
  CLI::App* show = plan->add_subcommand("show", "Print the cases a plan expands to");
  show->add_option("plan", *plan_file, "Plan JSON file (omit for the built-in quick plan)");
  show->add_option("--models-dir", *models_dir, "Where synthetic families are made");
  out.push_back({show, [plan_file, models_dir] {
                   const Plan p = plan_from(*plan_file, *models_dir);
                   const auto cases = expand_plan(p);
                   std::printf("plan '%s': %zu cases (%d warm-up + %d measured trials each)\n",
                               p.name.c_str(), cases.size(), p.warmup, p.trials);
                   for (const auto& c : cases) std::printf("  %s\n", c.label(p).c_str());
                   return 0;
                 }});

  CLI::App* suites = app.add_subcommand("suites", "List the suites, their parameters and metrics");
  out.push_back({suites, [] {
                   for (const Suite* s : all_suites()) {
                     std::printf("%s (version %s): %s\n", s->name().c_str(), s->version().c_str(),
                                 s->summary().c_str());
                     for (const auto& p : s->params())
                       std::printf("  param  %-20s default %-8s %-14s %s\n", p.name.c_str(),
                                   p.default_value.dump().c_str(), param_range_text(p).c_str(),
                                   p.help.c_str());
                     for (const auto& m : s->metrics())
                       std::printf("  metric %-24s %s, %s; %s\n", m.name.c_str(),
                                   aggregation_name(m.aggregation).c_str(),
                                   m.higher_is_better ? "higher is better" : "lower is better",
                                   m.help.c_str());
                   }
                   return 0;
                 }});

  CLI::App* methods = app.add_subcommand("methods", "List the methods and their parameters");
  out.push_back({methods, [] {
                   for (const Method* m : all_methods()) {
                     std::printf("%s: %s\n", m->name().c_str(), m->summary().c_str());
                     for (const auto& in : m->inputs())
                       std::printf("  input %-14s %-6s %s\n", in.role.c_str(),
                                   in.kind == InputSpec::Kind::Model ? "model" : "file",
                                   in.help.c_str());
                     for (const auto& r : m->fallback_reasons())
                       std::printf("  may fall back: %s\n", r.c_str());
                     for (const auto& p : m->params())
                       std::printf("  %-20s default %-8s %-14s %s\n", p.name.c_str(),
                                   p.default_value.dump().c_str(), param_range_text(p).c_str(),
                                   p.help.c_str());
                   }
                   return 0;
                 }});
}

}  // namespace accel
