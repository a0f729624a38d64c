// The layer table of ARCHITECTURE.md ("may use") written once as data, and a checker that scans a
// source tree for `#include`s of our headers that cross into a folder the including layer may not
// use. Reads files only; it knows nothing of CMake targets (every target exports the repository
// root, so the compiler cannot catch a forbidden include: this checker does).
#pragma once
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace accel::architecture {

struct LayerRule {
  std::string folder;                // top-level folder, e.g. "methods"
  bool everything = false;           // may use every other layer
  std::vector<std::string> may_use;  // other layers it may include from (when !everything)
  std::string wording;               // the "may use" cell of ARCHITECTURE.md, for messages
};

// Where this repository's rules are wider than ARCHITECTURE.md's table, each with its reason (a
// closing note proposes the change to the document); the table test allows exactly these.
struct LayerRefinement {
  std::string folder, extra, why;
};
const std::vector<LayerRefinement>& layer_refinements();

// One row per top-level source folder of the repository, in ARCHITECTURE.md's order.
const std::vector<LayerRule>& layer_rules();

struct Include {
  std::filesystem::path file;  // relative to the scanned root
  int line = 0;                // 1-based
  std::string target;          // as written between the quotes or brackets
  std::string folder;          // our top-level folder it resolves into ("" when not ours)
};

struct Violation {
  Include include;
  std::string layer;  // folder of the including file
  std::string rule;   // the including layer's rule wording
};

// `#include "x"` / `#include <x>` directives of one file, outside comments, each resolved to the
// top-level folder it names: "a/b.h" names folder a; "../a/b.h" is resolved against the including
// file's folder first. `known` is the set of our folders; other includes get folder "".
std::vector<Include> scan_includes(const std::filesystem::path& root,
                                   const std::filesystem::path& relative_file,
                                   const std::set<std::string>& known);

// Every include in the C++ sources under root/<rule.folder>/ (recursively) whose folder is ours,
// not the includer's own, and not in its rule's may_use.
std::vector<Violation> check_layer_rules(const std::filesystem::path& root,
                                         const std::vector<LayerRule>& rules);

// "methods/x.cpp:12: includes \"harness/runner.h\", but methods/ may use: models, kernels".
std::string describe(const Violation& v);

// For each file of `layer`, the headers of `folder` it includes (sorted, for reporting).
std::map<std::string, std::set<std::string>> headers_used(const std::filesystem::path& root,
                                                          const std::string& layer,
                                                          const std::string& folder,
                                                          const std::vector<LayerRule>& rules);

// Parses the layout table of an ARCHITECTURE.md text into rules (folder, everything, may_use):
// "nothing of ours" is the empty list, "everything" sets the flag, a parenthesised remark is
// dropped ("models (tokenizer and chat template only)" -> models).
std::vector<LayerRule> parse_architecture_table(const std::string& markdown);

}  // namespace accel::architecture
