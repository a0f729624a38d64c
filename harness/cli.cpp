// cli_main: builds the app from every register_* function and dispatches (see cli.h).
#include "harness/cli.h"

#include <cstdio>
#include <exception>

#include "kernels/decode_prefetch.h"

namespace accel {

// Declared here rather than in cli.h: `plot` (cli_plot.cpp) and `dashboard` (cli_dashboard.cpp).
void register_plot_command(CLI::App& app, CliCommands& out);
void register_dashboard_command(CLI::App& app, CliCommands& out);
void register_bench_serve_command(CLI::App& app, CliCommands& out);  // cli_bench_serve.cpp

int cli_main(int argc, char** argv) {
  CLI::App app{"accelbench: a research harness for LLM inference-acceleration methods"};
  app.require_subcommand(1);
  app.set_help_all_flag("--help-all", "Show help for every subcommand");
  CliCommands commands;
  register_models_commands(app, commands);
  register_info_command(app, commands);
  register_generate_command(app, commands);
  register_tokenize_command(app, commands);
  register_perplexity_command(app, commands);
  register_run_commands(app, commands);
  register_results_commands(app, commands);
  register_costmodel_commands(app, commands);
  register_bench_table_command(app, commands);
  register_kvpred_commands(app, commands);
  register_kvcalc_command(app, commands);
  register_plot_command(app, commands);
  register_dashboard_command(app, commands);
  register_serve_command(app, commands);
  register_bench_serve_command(app, commands);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  try {
    // Chosen here, on the main thread, so that a malformed ACCELBENCH_DECODE_PREFETCH stops the
    // command before any work: a kernel's first use may be on a pool thread.
    decode_prefetch();
    for (const auto& c : commands)
      if (c.sub->parsed()) return c.run();
    std::fprintf(stderr, "accelbench: no command chosen (see --help)\n");
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "accelbench: error: %s\n", e.what());
    return 1;
  }
}

std::string join_list(const std::vector<std::string>& items, const std::string& sep) {
  std::string s;
  for (size_t i = 0; i < items.size(); ++i) s += (i ? sep : "") + items[i];
  return s;
}

}  // namespace accel
