// `accelbench plot`: one figure of a results store as SVG (reports/plots.h). Thin glue: opens the
// store read-only, draws, and writes the file all or nothing; it computes nothing itself.
#include <cstdio>
#include <filesystem>

#include "harness/cli.h"
#include "reports/plots.h"
#include "reports/svg.h"
#include "results/result_store.h"

namespace accel {

void register_plot_command(CLI::App& app, CliCommands& out) {
  struct PlotArgs {
    std::string db, kind, out, where, param, metric;
  };
  auto a = std::make_shared<PlotArgs>();
  CLI::App* plot =
      app.add_subcommand("plot", "Draw a figure of a results store as a self-contained SVG file");
  plot->footer("Kinds:\n" + reports::plot_kind_help());
  plot->add_option("--db", a->db, "Results store (SQLite)")->required();
  plot->add_option("--kind", a->kind, "The figure (see below)")
      ->required()
      ->check(CLI::IsMember(reports::plot_kinds()));
  plot->add_option("--out", a->out, "Output file (.svg); its directory must exist")->required();
  plot->add_option("--where", a->where,
                   "SQL expression over trials columns, e.g. \"context_len >= 8192\"");
  plot->add_option("--param", a->param, "quality-vs-keep: the swept parameter (default keep)");
  plot->add_option("--metric", a->metric,
                   "quality-vs-keep: the score (default the first); metric-over-commits: ttft_s "
                   "(default), decode_tok_s, peak_rss_bytes or kv_bytes");
  out.push_back({plot, [a] {
                   const auto store = results::ResultStore::open_readonly(a->db);
                   reports::PlotOptions opt;
                   opt.report.where = a->where;
                   opt.report.param = a->param;
                   opt.metric = a->metric;
                   if (!a->where.empty()) store.validate_where(a->where);
                   const std::string svg = reports::plot_svg(store, a->kind, opt);
                   reports::svg::write_file(a->out, svg);
                   std::fprintf(stderr, "wrote %s (%zu bytes)\n", a->out.c_str(), svg.size());
                   return 0;
                 }});
}

}  // namespace accel
