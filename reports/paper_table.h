// Published values as data (reports/published/*.json) and the `paper` table that prints each
// published row beside this store's matching measurement. Owns the published-file schema, its
// validating loader and the matching rules; it reuses the tables' ratios (ratio.h) and the cost
// model's structured rows (cost_model()), and never runs a model or writes a number that is not in
// a published file or store.
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "reports/table.h"
#include "reports/tables.h"
#include "results/result_store.h"

namespace accel::reports {

// How a published row's figure is measured in a store:
//   ttft_speedup    reference TTFT / method TTFT (ratio.h: ratio of medians, bootstrap interval)
//   decode_speedup  method decode tok/s / reference decode tok/s
//   kv_bytes_ratio  reference kv_bytes / method kv_bytes
//   score           mean of the named suite score (retention against the reference beside it)
//   costmodel       cost_model()'s rows for the method (r, k, predicted, measured, G)
//   kernel_speedup  kernel timings: never in a store (Google Benchmark JSON, `bench-table`)
const std::vector<std::string>& published_metrics();

// A row's context selector: a length ("8K" = 8192, or an integer), "longest" / "shortest" (of the
// store's matching contexts; for "up to" headlines), or absent (every matching context).
struct ContextSelector {
  enum class Kind { Any, Exact, Longest, Shortest } kind = Kind::Any;
  int64_t tokens = 0;  // Exact only
  std::string text;    // as written in the file ("8K"), empty for Any
};

struct PublishedAbsolute {
  std::string unit;  // "s", "min", "ms", "tok/s", "GB"
  double reference = 0, method = 0;
};

struct PublishedRow {
  std::string label, metric, method;
  nlohmann::json params = nlohmann::json::object();  // subset match; "kv_dtype" = trial KV type
  std::string ref_method = "baseline", ref_kv = "f32";
  ContextSelector context;
  std::string prompt_class;  // parity-suite sample class ("<class>-<i>"); empty = any sample
  std::string score;         // metric "score" only
  std::optional<double> value;
  std::optional<PublishedAbsolute> absolute;
  std::string qualifier, claim;
};

struct PublishedSet {
  std::string file, id, title;
  nlohmann::json source, setup;  // objects of strings, as in the file
  std::vector<PublishedRow> rows;
};

// Parses "8K" / "128K" (x1024) or a plain integer; throws std::invalid_argument otherwise.
int64_t parse_context_tokens(const std::string& text);
// Loads and validates one file; errors name the file and the field ("rows[2].value").
PublishedSet load_published(const std::string& path);
// Every *.json in dir, sorted by id; throws on a duplicate id or an unreadable dir.
std::vector<PublishedSet> load_published_dir(const std::string& dir);
// The published ratio: `value` when given, else computed from `absolute` (times: reference /
// method; tok/s: method / reference; sizes: reference / method). NaN when neither is given.
double published_ratio(const PublishedRow& row);

// Lines stating the published setup against this store's (CPU, threads, targets, drafts).
struct PaperReport {
  std::vector<std::string> header;
  Table table;
};
PaperReport paper_table(const results::ResultStore& store, const PublishedSet& set,
                        const ReportOptions& opt);
// `--paper list`: id, title, source and row count of every published file.
Table published_list_table(const std::vector<PublishedSet>& sets);
// Markdown/LaTeX: header lines, then the table; JSON: {"header": [...], "table": {...}}; CSV:
// the table only (a header is not CSV data).
std::string render_paper(const PaperReport& r, Format f);

}  // namespace accel::reports
