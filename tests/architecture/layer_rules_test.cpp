// ARCHITECTURE.md's layer rules hold in this tree: no file includes a header from a folder its
// layer may not use. Also checks that the checker catches violations (on scratch trees with
// forbidden includes), that its table covers every source folder, and that it agrees with the
// table in ARCHITECTURE.md when that file is present.
#include "tests/architecture/layer_rules.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <iostream>
#include <random>
#include <set>
#include <sstream>

namespace accel::architecture {
namespace {

namespace fs = std::filesystem;

const fs::path kSourceDir = ACCELBENCH_SOURCE_DIR;

// A scratch source tree, removed when the object dies.
class ScratchTree {
 public:
  ScratchTree() {
    std::random_device rd;
    root_ = fs::temp_directory_path() / ("accelbench-layers-" + std::to_string(rd()));
    fs::create_directories(root_);
  }
  ~ScratchTree() { fs::remove_all(root_); }
  void write(const std::string& rel, const std::string& text) const {
    fs::create_directories((root_ / rel).parent_path());
    std::ofstream(root_ / rel) << text;
  }
  const fs::path& root() const { return root_; }

 private:
  fs::path root_;
};

std::string all_described(const std::vector<Violation>& vs) {
  std::string s;
  for (const auto& v : vs) s += describe(v) + "\n";
  return s;
}

TEST(LayerRules, NoFileIncludesAHeaderFromAFolderItsLayerMayNotUse) {
  const auto violations = check_layer_rules(kSourceDir, layer_rules());
  EXPECT_TRUE(violations.empty()) << violations.size() << " forbidden include(s):\n"
                                  << all_described(violations);
  // suites/ may use models/ for the tokenizer and chat template only: the folder rule cannot see
  // which header, so list them for the reader of the test log.
  for (const auto& [file, headers] : headers_used(kSourceDir, "suites", "models", layer_rules()))
    for (const auto& h : headers) std::cout << "[suites -> models] " << file << ": " << h << "\n";
}

TEST(LayerRules, TableNamesEveryTopLevelFolderThatHoldsSources) {
  std::set<std::string> in_table;
  for (const auto& r : layer_rules()) in_table.insert(r.folder);
  for (const auto& e : fs::directory_iterator(kSourceDir)) {
    const std::string name = e.path().filename().string();
    // Hidden folders and CMake build trees hold no sources of ours.
    if (!e.is_directory() || name.starts_with(".") || fs::exists(e.path() / "CMakeCache.txt"))
      continue;
    bool has_sources = false;
    for (const auto& f : fs::recursive_directory_iterator(e.path()))
      has_sources = has_sources || f.path().extension() == ".cpp" || f.path().extension() == ".h";
    if (!has_sources) continue;
    EXPECT_TRUE(in_table.count(name)) << name << "/ has no layer rule";
  }
}

TEST(LayerRules, TableAgreesWithArchitectureMd) {
  std::ifstream in(ACCELBENCH_ARCHITECTURE_DOC);
  if (!in) GTEST_SKIP() << "no " << ACCELBENCH_ARCHITECTURE_DOC << " to compare with";
  std::stringstream text;
  text << in.rdbuf();
  auto doc = parse_architecture_table(text.str());
  for (const auto& r : layer_refinements())
    for (auto& d : doc)
      if (d.folder == r.folder) d.may_use.push_back(r.extra);
  ASSERT_EQ(doc.size(), layer_rules().size()) << "rows in ARCHITECTURE.md's layout table";
  for (const auto& mine : layer_rules()) {
    auto it = std::find_if(doc.begin(), doc.end(),
                           [&](const LayerRule& d) { return d.folder == mine.folder; });
    ASSERT_NE(it, doc.end()) << mine.folder << "/ is not in ARCHITECTURE.md";
    EXPECT_EQ(it->everything, mine.everything) << mine.folder;
    EXPECT_EQ(std::set<std::string>(it->may_use.begin(), it->may_use.end()),
              std::set<std::string>(mine.may_use.begin(), mine.may_use.end()))
        << mine.folder << "/: ARCHITECTURE.md says \"" << it->wording << "\"";
  }
}

TEST(LayerRules, ForbiddenIncludeIsReportedWithFileLineIncludeAndRule) {
  ScratchTree t;
  t.write("models/model.h", "#pragma once\n");
  t.write("methods/m.cpp",
          "// a method\n"
          "#include \"models/model.h\"\n"
          "#include \"harness/runner.h\"\n"
          "// #include \"results/result_store.h\"   (commented out: not an include)\n"
          "/* #include \"reports/tables.h\"\n"
          "   #include \"suites/agreement.h\" */\n"
          "#include <vector>\n");
  const auto v = check_layer_rules(t.root(), layer_rules());
  ASSERT_EQ(v.size(), 1u) << all_described(v);
  EXPECT_EQ(v[0].include.file, fs::path("methods/m.cpp"));
  EXPECT_EQ(v[0].include.line, 3);
  EXPECT_EQ(v[0].include.target, "harness/runner.h");
  EXPECT_EQ(v[0].layer, "methods");
  EXPECT_EQ(describe(v[0]),
            "methods/m.cpp:3: includes \"harness/runner.h\" (harness/), but methods/ may use: "
            "models, kernels (ARCHITECTURE.md, Layout)");
}

TEST(LayerRules, ParentRelativeAndAngleIncludesAreResolvedToTheirFolder) {
  ScratchTree t;
  t.write("kernels/sub/k.h", "#include \"../../models/model.h\"\n#include \"sub2/x.h\"\n");
  t.write("results/r.cpp", "  #  include <reports/tables.h>\n#include \"nlohmann/json.hpp\"\n");
  t.write("reports/ok.cpp", "#include <results/records.h>\n#include \"../results/schema.h\"\n");
  const auto v = check_layer_rules(t.root(), layer_rules());
  ASSERT_EQ(v.size(), 2u) << all_described(v);
  EXPECT_EQ(v[0].include.file, fs::path("kernels/sub/k.h"));
  EXPECT_EQ(v[0].include.folder, "models");
  EXPECT_EQ(v[1].include.file, fs::path("results/r.cpp"));
  EXPECT_EQ(v[1].include.folder, "reports");
}

TEST(LayerRules, EveryRestrictedLayerRejectsEachFolderOutsideItsRule) {
  // One scratch file per (layer, other folder) pair: the checker must flag exactly the pairs that
  // the table forbids, so a rule that silently allows too much shows up here.
  ScratchTree t;
  size_t forbidden = 0;
  for (const auto& rule : layer_rules())
    for (const auto& other : layer_rules()) {
      if (other.folder == rule.folder) continue;
      t.write(rule.folder + "/uses_" + other.folder + ".cpp",
              "#include \"" + other.folder + "/x.h\"\n");
      const bool ok = rule.everything || std::find(rule.may_use.begin(), rule.may_use.end(),
                                                   other.folder) != rule.may_use.end();
      forbidden += ok ? 0 : 1;
    }
  // kernels 7, models 6, methods 5, suites 5 (models, kernels allowed), results 7, reports 6;
  // harness and tests 0.
  EXPECT_EQ(forbidden, 36u);
  EXPECT_EQ(check_layer_rules(t.root(), layer_rules()).size(), forbidden);
}

TEST(LayerRules, ParsesTheLayoutTableOfAMarkdownPage) {
  const std::string md =
      "| folder | owns | may use |\n"
      "| --- | --- | --- |\n"
      "| `kernels/` | GEMM, RoPE | nothing of ours |\n"
      "| `methods/` | one pair per method | models, kernels |\n"
      "| `suites/` | workloads | models (tokenizer and chat template only) |\n"
      "| `harness/` | the CLI | everything |\n"
      "Some prose | with pipes | that is not a row\n";
  const auto r = parse_architecture_table(md);
  ASSERT_EQ(r.size(), 4u);
  EXPECT_EQ(r[0].folder, "kernels");
  EXPECT_TRUE(r[0].may_use.empty());
  EXPECT_FALSE(r[0].everything);
  EXPECT_EQ(r[1].may_use, (std::vector<std::string>{"models", "kernels"}));
  EXPECT_EQ(r[2].may_use, (std::vector<std::string>{"models"}));
  EXPECT_EQ(r[2].wording, "models (tokenizer and chat template only)");
  EXPECT_TRUE(r[3].everything);
}

}  // namespace
}  // namespace accel::architecture
