// The layer table and the include scanner (layer_rules.h). Plain text processing: block and line
// comments are stripped so that a commented-out include neither passes nor fails the check.
#include "tests/architecture/layer_rules.h"

#include <algorithm>
#include <fstream>
// At -O1 (the sanitizer build) GCC 12 reports a maybe-uninitialized std::function inside
// libstdc++'s std::regex compiler; a false positive, silenced for this file only.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <regex>
#include <sstream>
#include <stdexcept>

namespace accel::architecture {

namespace fs = std::filesystem;

const std::vector<LayerRefinement>& layer_refinements() {
  static const std::vector<LayerRefinement> r = {
      {"suites", "kernels",
       "metrics reuse the kernels' log-sum-exp (agreement's KL) rather than keep a second copy"},
  };
  return r;
}

const std::vector<LayerRule>& layer_rules() {
  // ARCHITECTURE.md, "Layout": the "may use" column. suites/ may use models/ for the tokenizer
  // and chat template only; at folder granularity that is "models" (headers_used lists which).
  static const std::vector<LayerRule> rules = {
      {"kernels", false, {}, "nothing of ours"},
      {"models", false, {"kernels"}, "kernels"},
      {"methods", false, {"models", "kernels"}, "models, kernels"},
      {"suites", false, {"models", "kernels"}, "models (tokenizer and chat template only)"},
      {"harness", true, {}, "everything"},
      {"results", false, {}, "nothing of ours"},
      {"reports", false, {"results"}, "results"},
      {"tests", true, {}, "everything"},
  };
  return rules;
}

namespace {

bool is_source(const fs::path& p) {
  static const std::set<std::string> ext = {".h", ".hpp", ".cpp", ".cc", ".cxx", ".inl", ".inc"};
  return ext.count(p.extension().string()) > 0;
}

// Removes // and /* */ comments from one line, carrying the block state across lines.
// String literals are not tracked: an include directive has none before its target.
std::string strip_comments(const std::string& line, bool& in_block) {
  std::string out;
  for (size_t i = 0; i < line.size(); ++i) {
    if (in_block) {
      if (line.compare(i, 2, "*/") == 0) in_block = false, ++i;
      continue;
    }
    if (line.compare(i, 2, "//") == 0) break;
    if (line.compare(i, 2, "/*") == 0) {
      in_block = true, ++i;
      continue;
    }
    out += line[i];
  }
  return out;
}

// The top-level folder an include names, or "" when it is not one of `known`.
std::string resolve_folder(const fs::path& relative_file, const std::string& target,
                           const std::set<std::string>& known) {
  fs::path p(target);
  if (target.rfind("./", 0) == 0 || target.rfind("../", 0) == 0)
    p = (relative_file.parent_path() / p).lexically_normal();
  if (p.empty() || p.begin() == p.end()) return "";
  const std::string first = p.begin()->string();
  // A bare "x.h" has one component: it is the includer's own folder, never a crossing.
  if (std::distance(p.begin(), p.end()) < 2) return "";
  return known.count(first) ? first : "";
}

std::set<std::string> folders_of(const std::vector<LayerRule>& rules) {
  std::set<std::string> s;
  for (const auto& r : rules) s.insert(r.folder);
  return s;
}

std::vector<fs::path> sources_under(const fs::path& root, const std::string& folder) {
  std::vector<fs::path> files;
  const fs::path dir = root / folder;
  if (!fs::is_directory(dir)) return files;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file() && is_source(e.path())) files.push_back(fs::relative(e.path(), root));
  std::sort(files.begin(), files.end());
  return files;
}

bool allowed(const LayerRule& rule, const std::string& folder) {
  if (folder.empty() || folder == rule.folder || rule.everything) return true;
  return std::find(rule.may_use.begin(), rule.may_use.end(), folder) != rule.may_use.end();
}

std::string trim(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t`"), e = s.find_last_not_of(" \t`");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

}  // namespace

std::vector<Include> scan_includes(const fs::path& root, const fs::path& relative_file,
                                   const std::set<std::string>& known) {
  std::ifstream in(root / relative_file);
  if (!in) throw std::runtime_error("layer rules: cannot read " + (root / relative_file).string());
  static const std::regex directive(R"(^\s*#\s*include\s*([<"])([^>"]+)[>"])");
  std::vector<Include> out;
  std::string line;
  bool in_block = false;
  for (int n = 1; std::getline(in, line); ++n) {
    const std::string code = strip_comments(line, in_block);
    std::smatch m;
    if (!std::regex_search(code, m, directive)) continue;
    const std::string target = m[2];
    out.push_back({relative_file, n, target, resolve_folder(relative_file, target, known)});
  }
  return out;
}

std::vector<Violation> check_layer_rules(const fs::path& root,
                                         const std::vector<LayerRule>& rules) {
  const std::set<std::string> known = folders_of(rules);
  std::vector<Violation> v;
  for (const auto& rule : rules)
    for (const auto& file : sources_under(root, rule.folder))
      for (const auto& inc : scan_includes(root, file, known))
        if (!allowed(rule, inc.folder)) v.push_back({inc, rule.folder, rule.wording});
  return v;
}

std::string describe(const Violation& v) {
  std::ostringstream o;
  o << v.include.file.generic_string() << ":" << v.include.line << ": includes \""
    << v.include.target << "\" (" << v.include.folder << "/), but " << v.layer
    << "/ may use: " << v.rule << " (ARCHITECTURE.md, Layout)";
  return o.str();
}

std::map<std::string, std::set<std::string>> headers_used(const fs::path& root,
                                                          const std::string& layer,
                                                          const std::string& folder,
                                                          const std::vector<LayerRule>& rules) {
  const std::set<std::string> known = folders_of(rules);
  std::map<std::string, std::set<std::string>> used;
  for (const auto& file : sources_under(root, layer))
    for (const auto& inc : scan_includes(root, file, known))
      if (inc.folder == folder) used[file.generic_string()].insert(inc.target);
  return used;
}

std::vector<LayerRule> parse_architecture_table(const std::string& markdown) {
  // Rows of the layout table look like: | `models/` | owns ... | kernels |
  static const std::regex row(R"(^\|\s*`([a-z_]+)/`\s*\|.*\|([^|]*)\|\s*$)");
  std::vector<LayerRule> rules;
  std::istringstream in(markdown);
  std::string line;
  while (std::getline(in, line)) {
    std::smatch m;
    if (!std::regex_match(line, m, row)) continue;
    LayerRule r;
    r.folder = m[1];
    std::string cell = trim(m[2]);
    r.wording = cell;
    if (const size_t paren = cell.find('('); paren != std::string::npos)
      cell = trim(cell.substr(0, paren));
    if (cell == "everything") {
      r.everything = true;
    } else if (cell != "nothing of ours") {
      std::istringstream parts(cell);
      for (std::string part; std::getline(parts, part, ',');)
        if (!trim(part).empty()) r.may_use.push_back(trim(part));
    }
    rules.push_back(r);
  }
  return rules;
}

}  // namespace accel::architecture
