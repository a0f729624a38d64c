// Wiring of the `accelbench` subcommands. Each cli_*.cpp file registers its subcommand(s) on the
// CLI11 app and returns the action to run when chosen; cli_main parses, dispatches, and turns
// exceptions into one clear error line and a non-zero exit.
#pragma once
#include <CLI/CLI.hpp>
#include <functional>
#include <string>
#include <vector>

namespace accel {

struct CliCommand {
  CLI::App* sub = nullptr;
  std::function<int()> run;
};
using CliCommands = std::vector<CliCommand>;

int cli_main(int argc, char** argv);

// "a, b, c": the items with `sep` between them (for option help and printed lists).
std::string join_list(const std::vector<std::string>& items, const std::string& sep);

// Prints the table `accelbench run` shows when it finishes: `serve` after a load-sweep plan (its
// points are what it stored), else `ttft` (default_report.cpp).
void print_default_report(const std::string& db_path, bool load_sweep);

void register_models_commands(CLI::App& app, CliCommands& out);     // cli_models.cpp
void register_info_command(CLI::App& app, CliCommands& out);        // cli_info.cpp
void register_generate_command(CLI::App& app, CliCommands& out);    // cli_generate.cpp
void register_tokenize_command(CLI::App& app, CliCommands& out);    // cli_tokenize.cpp
void register_perplexity_command(CLI::App& app, CliCommands& out);  // cli_perplexity.cpp
// `run`, `plan show`, `methods`.
void register_run_commands(CLI::App& app, CliCommands& out);  // cli_run.cpp
// `report`, `compare`, `merge` over results stores.
void register_results_commands(CLI::App& app, CliCommands& out);  // cli_results.cpp
// `costmodel rank`: draft selection by analytic r and predicted speedup.
void register_costmodel_commands(CLI::App& app, CliCommands& out);  // cli_costmodel.cpp
// `kvcalc`: KV cache sizes per storage type and the longest context a budget holds.
void register_kvcalc_command(CLI::App& app, CliCommands& out);  // cli_kvcalc.cpp
// `bench-table`: a kernel benchmark's JSON output as medians and bootstrap ratio intervals.
void register_bench_table_command(CLI::App& app, CliCommands& out);  // cli_bench_table.cpp
// `kvpred fit` / `kvpred identity`: KV Prediction's predictor files.
void register_kvpred_commands(CLI::App& app, CliCommands& out);  // cli_kvpred.cpp
// `models make-aux`: a layer-pruned auxiliary from a target, added under `models`.
void add_make_aux_command(CLI::App& models, CliCommands& out);  // cli_kvpred.cpp
// `models import-llama2c`, added under the `models` subcommand by register_models_commands.
void add_import_llama2c_command(CLI::App& models, CliCommands& out);  // cli_import_llama2c.cpp
// `serve`: the engine behind an OpenAI-compatible HTTP API.
void register_serve_command(CLI::App& app, CliCommands& out);  // cli_serve.cpp

}  // namespace accel
