// Shipped model families: manifest checks (each error names the file and field), sha256-verified
// installation, and plans that name a shipped family. Uses a throwaway root with a tiny synthetic
// model standing in for the trained files, via ACCELBENCH_SHIPPED_MODELS_DIR.
#include "harness/shipped_models.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "harness/file_hash.h"
#include "harness/plan.h"
#include "models/synthetic.h"
#include "tests/support/test_support.h"

namespace accel {
namespace {

namespace fs = std::filesystem;

// Points the shipped-models root at a temp dir holding family "fam" (members target and draft,
// both the tiny family's files) for the test's lifetime.
class ShippedRoot {
 public:
  ShippedRoot() {
    fs::create_directories(root_.path() / "fam");
    const auto files =
        make_synthetic_family("tiny", (root_.path() / "src").string(), 0, DType::F32);
    manifest_ = {
        {"family", "fam"}, {"description", "test family"}, {"members", nlohmann::json::array()}};
    for (const std::string role : {"target", "draft"}) {
      const fs::path src = root_.path() / "src" / (role + ".gguf");
      fs::copy_file(src, root_.path() / "fam" / (role + "-v1.gguf"));
      manifest_["members"].push_back({{"role", role},
                                      {"file", role + "-v1.gguf"},
                                      {"sha256", sha256_file(src.string())},
                                      {"bytes", fs::file_size(src)}});
    }
    write_manifest();
    setenv("ACCELBENCH_SHIPPED_MODELS_DIR", root_.path().c_str(), 1);
  }
  ~ShippedRoot() { unsetenv("ACCELBENCH_SHIPPED_MODELS_DIR"); }
  void write_manifest() const {
    std::ofstream(root_.path() / "fam" / "manifest.json") << manifest_.dump(1);
  }
  nlohmann::json& manifest() { return manifest_; }
  fs::path dir() const { return root_.path() / "fam"; }

 private:
  test::TempDir root_;
  nlohmann::json manifest_;
};

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

TEST(ShippedModels, InstallCopiesEveryMemberUnderItsRoleAfterCheckingItsDigest) {
  ShippedRoot r;
  const auto fam = find_shipped_family("fam");
  ASSERT_TRUE(fam);
  ASSERT_EQ(fam->members.size(), 2u);
  test::TempDir out;
  const auto paths = install_shipped_family(*fam, out.path().string());
  ASSERT_EQ(paths.size(), 2u);
  EXPECT_EQ(paths[0], out.file("target.gguf"));
  EXPECT_EQ(sha256_file(paths[0]), fam->members[0].sha256);
  EXPECT_EQ(sha256_file(paths[1]), fam->members[1].sha256);
  EXPECT_FALSE(find_shipped_family("nope"));
  EXPECT_FALSE(find_shipped_family("../fam"));  // never a path
}

TEST(ShippedModels, ADigestMismatchNamesTheFileAndLeavesNothingInstalled) {
  ShippedRoot r;
  r.manifest()["members"][1]["sha256"] = std::string(64, '0');
  r.write_manifest();
  test::TempDir out;
  const std::string e =
      error_of([&] { install_shipped_family(*find_shipped_family("fam"), out.path().string()); });
  EXPECT_NE(e.find((r.dir() / "draft-v1.gguf").string()), std::string::npos) << e;
  EXPECT_NE(e.find("does not match the manifest"), std::string::npos) << e;
  EXPECT_FALSE(fs::exists(out.file("draft.gguf")));
  EXPECT_FALSE(fs::exists(out.file("draft.gguf.tmp")));
}

TEST(ShippedModels, MalformedManifestsNameTheField) {
  ShippedRoot r;
  const auto expect_field = [&](const std::function<void(nlohmann::json&)>& edit,
                                const std::string& field) {
    nlohmann::json saved = r.manifest();
    edit(r.manifest());
    r.write_manifest();
    const std::string e = error_of([] { find_shipped_family("fam"); });
    EXPECT_NE(e.find("manifest.json: " + field), std::string::npos) << field << ": " << e;
    r.manifest() = saved;
    r.write_manifest();
  };
  expect_field([](auto& j) { j["members"][0].erase("sha256"); }, "members[0].sha256");
  expect_field([](auto& j) { j["members"][1]["role"] = "../x"; }, "members[1].role");
  expect_field([](auto& j) { j["members"][0]["file"] = "../../etc/passwd"; }, "members[0].file");
  expect_field([](auto& j) { j["members"][1]["role"] = "target"; }, "members[1].role");
  expect_field([](auto& j) { j["members"][0]["bytes"] = -1; }, "members[0].bytes");
  expect_field([](auto& j) { j["family"] = "other"; }, "family");
  expect_field([](auto& j) { j["members"] = nlohmann::json::array(); }, "members");
}

TEST(ShippedModels, PlansResolveAShippedFamilysRolesAndRefuseASeedOrDtype) {
  ShippedRoot r;
  nlohmann::json j = nlohmann::json::parse(R"({
    "name": "t", "models": [{"name": "m", "family": "fam"}],
    "methods": [{"name": "baseline"}], "context_lengths": [64],
    "workload": {"kind": "synthetic", "samples": 1}, "trials": 1, "warmup": 0, "decode_tokens": 1
  })");
  const Plan p = parse_plan(j, "p.json", "/tmp/m");
  EXPECT_EQ(p.models[0].path("target"), "/tmp/m/fam-shipped/target.gguf");
  EXPECT_EQ(p.models[0].path("draft"), "/tmp/m/fam-shipped/draft.gguf");
  j["models"][0]["dtype"] = "q8_0";
  const std::string e = error_of([&] { parse_plan(j, "p.json", "/tmp/m"); });
  EXPECT_NE(e.find("models[0].dtype"), std::string::npos) << e;
  j["models"][0].erase("dtype");
  j["models"][0]["draft_role"] = "draft-xl";
  EXPECT_NE(error_of([&] { parse_plan(j, "p.json", "/tmp/m"); }).find("has no member 'draft-xl'"),
            std::string::npos);
}

}  // namespace
}  // namespace accel
