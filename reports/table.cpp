// The four printers of table.h. Each row must have one cell per column (checked: a short row is a
// bug in the report that built it).
#include "reports/table.h"

#include <stdexcept>

#include "results/records.h"

namespace accel::reports {

namespace {
void check_shape(const Table& t) {
  for (size_t r = 0; r < t.rows.size(); ++r)
    if (t.rows[r].size() != t.columns.size())
      throw std::logic_error("[reports] table '" + t.title + "': row " + std::to_string(r) +
                             " has " + std::to_string(t.rows[r].size()) + " cells for " +
                             std::to_string(t.columns.size()) + " columns");
}

std::string md_escape(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c == '|') o += '\\';
    o += c;
  }
  return o;
}

std::string latex_escape(const std::string& s) {
  std::string o;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    // UTF-8 "±" (C2 B1) and "×" (C3 97) and "—" (E2 80 94) become math / text commands.
    if (s.compare(i, 2, "\xC2\xB1") == 0) {
      o += "$\\pm$";
      ++i;
      continue;
    }
    if (s.compare(i, 2, "\xC3\x97") == 0) {
      o += "$\\times$";
      ++i;
      continue;
    }
    if (s.compare(i, 3, "\xE2\x80\x94") == 0) {
      o += "---";
      i += 2;
      continue;
    }
    switch (c) {
      case '\\':
        o += "\\textbackslash{}";
        break;
      case '&':
      case '%':
      case '$':
      case '#':
      case '_':
      case '{':
      case '}':
        o += '\\';
        o += c;
        break;
      case '~':
        o += "\\textasciitilde{}";
        break;
      case '^':
        o += "\\textasciicircum{}";
        break;
      default:
        o += c;
    }
  }
  return o;
}

const char* align_name(Align a) {
  return a == Align::Left ? "left" : a == Align::Right ? "right" : "center";
}
}  // namespace

Format parse_format(const std::string& n) {
  if (n == "md" || n == "markdown") return Format::Markdown;
  if (n == "csv") return Format::Csv;
  if (n == "latex" || n == "tex") return Format::Latex;
  if (n == "json") return Format::Json;
  throw std::invalid_argument("unknown format '" + n + "' (md, csv, latex, json)");
}

std::string to_markdown(const Table& t) {
  check_shape(t);
  std::string o;
  if (!t.title.empty()) {
    o += "**";
    o += t.title;
    o += "**\n\n";
  }
  o += "|";
  for (const auto& c : t.columns) {
    o += ' ';
    o += md_escape(c.label);
    o += " |";
  }
  o += "\n|";
  for (const auto& c : t.columns)
    o += c.align == Align::Left ? " :--- |" : c.align == Align::Right ? " ---: |" : " :---: |";
  o += "\n";
  for (const auto& row : t.rows) {
    o += "|";
    for (const auto& cell : row) {
      o += ' ';
      o += md_escape(cell.text);
      o += " |";
    }
    o += "\n";
  }
  if (!t.footnotes.empty()) o += "\n";
  for (const auto& f : t.footnotes) o += "Note: " + f + "\n";
  return o;
}

std::string to_csv(const Table& t) {
  check_shape(t);
  std::string o;
  for (size_t i = 0; i < t.columns.size(); ++i) {
    if (i) o += ',';
    o += results::csv_quote(t.columns[i].label);
  }
  o += "\n";
  for (const auto& row : t.rows) {
    for (size_t i = 0; i < row.size(); ++i) {
      if (i) o += ',';
      o += results::csv_quote(row[i].text);
    }
    o += "\n";
  }
  return o;
}

std::string to_latex(const Table& t) {
  check_shape(t);
  std::string spec;
  for (const auto& c : t.columns)
    spec += c.align == Align::Left ? 'l' : c.align == Align::Right ? 'r' : 'c';
  std::string o;
  if (!t.title.empty()) o += "% " + t.title + "\n";
  o += "\\begin{tabular}{" + spec + "}\n\\toprule\n";
  auto line = [&](const std::vector<std::string>& cells) {
    for (size_t i = 0; i < cells.size(); ++i) o += (i ? " & " : "") + latex_escape(cells[i]);
    o += " \\\\\n";
  };
  std::vector<std::string> head;
  for (const auto& c : t.columns) head.push_back(c.label);
  line(head);
  o += "\\midrule\n";
  for (const auto& row : t.rows) {
    std::vector<std::string> cells;
    for (const auto& c : row) cells.push_back(c.text);
    line(cells);
  }
  o += "\\bottomrule\n\\end{tabular}\n";
  for (const auto& f : t.footnotes) o += "\\par{\\footnotesize " + latex_escape(f) + "}\n";
  return o;
}

nlohmann::json to_json(const Table& t) {
  check_shape(t);
  nlohmann::json j;
  j["title"] = t.title;
  j["columns"] = nlohmann::json::array();
  for (const auto& c : t.columns)
    j["columns"].push_back({{"key", c.key}, {"label", c.label}, {"align", align_name(c.align)}});
  j["rows"] = nlohmann::json::array();
  for (const auto& row : t.rows) {
    nlohmann::json r = nlohmann::json::object();
    for (size_t i = 0; i < row.size(); ++i)
      r[t.columns[i].key] = row[i].data.is_discarded() ? nlohmann::json(row[i].text) : row[i].data;
    j["rows"].push_back(std::move(r));
  }
  j["footnotes"] = t.footnotes;
  return j;
}

std::string render(const Table& t, Format f) {
  switch (f) {
    case Format::Markdown:
      return to_markdown(t);
    case Format::Csv:
      return to_csv(t);
    case Format::Latex:
      return to_latex(t);
    case Format::Json:
      return to_json(t).dump(2) + "\n";
  }
  return "";
}

}  // namespace accel::reports
