// `accelbench bench-table`: a kernel benchmark's Google Benchmark JSON (with repetitions) as a
// table of medians and ratios with bootstrap intervals (reports/bench_table.h). Reads a file only.
#include <fstream>
#include <iostream>

#include "harness/cli.h"
#include "reports/bench_table.h"

namespace accel {

void register_bench_table_command(CLI::App& app, CliCommands& out) {
  auto* cmd = app.add_subcommand(
      "bench-table",
      "Table of a kernel benchmark's JSON output (--benchmark_format=json with "
      "--benchmark_repetitions): median times and ratios to a reference variant with bootstrap "
      "intervals, and each variant's time over its roofline bound when the run measured the "
      "machine's rates, e.g. scripts/kv_kernel_table.sh, or bench_kquant's JSON with --family "
      "kquant --reference q8_0 --floor none --size-label K");
  auto file = std::make_shared<std::string>();
  auto opt = std::make_shared<reports::BenchTableOptions>();
  auto format = std::make_shared<std::string>("md");
  cmd->add_option("file", *file, "Google Benchmark JSON file")->required();
  cmd->add_option("--family", opt->family, "Benchmark name prefix (default kv_attention)");
  cmd->add_option("--reference", opt->reference,
                  "Variant the ratios divide by (default fused_int4)");
  cmd->add_option("--floor", opt->floor_variant,
                  "Variant giving the reference's read-bound floor (default stream_int4)");
  cmd->add_option("--size-label", opt->size_label,
                  "Header of the size column (default Keys; bench_kquant's is K)");
  cmd->add_option("--format", *format, "md, csv, latex or json");
  out.push_back({cmd, [=]() {
                   std::ifstream in(*file);
                   if (!in) throw std::runtime_error(*file + ": cannot open");
                   nlohmann::json j;
                   try {
                     in >> j;
                   } catch (const nlohmann::json::exception& e) {
                     throw std::runtime_error(*file + ": not JSON: " + e.what());
                   }
                   reports::Table t;
                   try {
                     t = reports::bench_table(j, *opt);
                   } catch (const std::invalid_argument& e) {
                     throw std::runtime_error(*file + ": " + e.what());
                   }
                   std::cout << reports::render(t, reports::parse_format(*format));
                   return 0;
                 }});
}

}  // namespace accel
