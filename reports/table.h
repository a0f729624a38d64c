// The one table model every report builds — title, columns with alignment, rows of cells,
// footnotes — and its four printers (Markdown, CSV, LaTeX booktabs, JSON). Printers only format;
// they never compute statistics or touch the store.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace accel::reports {

enum class Align { Left, Right, Center };

struct Column {
  std::string key;    // JSON key (stable, machine-friendly)
  std::string label;  // header text for humans
  Align align = Align::Left;
};

// `text` is what humans see (may use "±" and "×"; the LaTeX printer converts them). `data` is the
// machine-readable value for JSON (numbers, {mean, std, n} objects, or null for a missing value);
// when left unset (discarded) JSON gets the text.
struct Cell {
  std::string text;
  nlohmann::json data = nlohmann::json(nlohmann::json::value_t::discarded);
  Cell() = default;
  Cell(std::string t) : text(std::move(t)) {}
  Cell(const char* t) : text(t) {}
  Cell(std::string t, nlohmann::json d) : text(std::move(t)), data(std::move(d)) {}
};

struct Table {
  std::string title;
  std::vector<Column> columns;
  std::vector<std::vector<Cell>> rows;  // each row has columns.size() cells
  std::vector<std::string> footnotes;
};

enum class Format { Markdown, Csv, Latex, Json };
// "md"/"markdown", "csv", "latex"/"tex", "json"; throws std::invalid_argument otherwise.
Format parse_format(const std::string& name);

// Markdown: optional "**title**" line, a blank line, the pipe table, then "Note: ..." lines.
std::string to_markdown(const Table& t);
// CSV (RFC 4180) of the header labels and cell texts. Footnotes are not part of CSV data.
std::string to_csv(const Table& t);
// A booktabs tabular (\toprule/\midrule/\bottomrule) with LaTeX-escaped text and footnotes as
// \footnotesize lines after it.
std::string to_latex(const Table& t);
// {"title", "columns": [{key,label,align}], "rows": [{key: data-or-text}], "footnotes": [...]}
nlohmann::json to_json(const Table& t);
std::string render(const Table& t, Format f);

}  // namespace accel::reports
