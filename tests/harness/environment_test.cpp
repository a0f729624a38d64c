// Tests of environment capture: the compiled-in git commit, dirty flag and version match the source
// tree and the CMake project version, cmake/provenance.cmake computes them correctly on scratch git
// repositories (clean, dirty, unchanged, not a checkout), the CPU identity and kernel variant are
// recorded, and the FMA peak is measured once.
#include "harness/environment.h"

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <sstream>
#include <string>

#include "tests/support/pattern.h"
#include "tests/support/test_support.h"

#ifndef ACCELBENCH_CMAKE_COMMAND
#define ACCELBENCH_CMAKE_COMMAND "cmake"
#endif

namespace accel {
namespace {

namespace fs = std::filesystem;

// Runs a shell command; its stdout (trailing newlines stripped) when it exits 0, else nullopt.
std::optional<std::string> shell(const std::string& cmd) {
  FILE* p = popen((cmd + " 2>/dev/null").c_str(), "r");
  if (!p) return std::nullopt;
  std::string out;
  std::array<char, 512> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) out.append(buf.data(), n);
  const int status = pclose(p);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return std::nullopt;
  while (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

std::string read_file(const fs::path& p) {
  std::ifstream f(p);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::string git(const fs::path& repo, const std::string& args) {
  const auto out = shell("git --no-optional-locks -C '" + repo.string() + "' " + args);
  if (!out) ADD_FAILURE() << "git " << args << " failed in " << repo;
  return out.value_or("");
}

// The VERSION of `project(accelbench VERSION x.y.z ...)` in the top-level CMakeLists.txt.
std::string cmake_project_version() {
  const std::string cml = read_file(fs::path(ACCELBENCH_SOURCE_DIR) / "CMakeLists.txt");
  const auto m = test::Pattern(R"(project\s*\(\s*accelbench\s+VERSION\s+([0-9.]+))").search(cml);
  return m ? m->groups[0] : "";
}

// Runs cmake/provenance.cmake on `source` writing `out`; true when cmake exits 0.
bool run_provenance_script(const fs::path& source, const fs::path& out,
                           const std::string& version) {
  const std::string script = std::string(ACCELBENCH_SOURCE_DIR) + "/cmake/provenance.cmake";
  return shell(std::string("'") + ACCELBENCH_CMAKE_COMMAND + "' -DSOURCE_DIR='" + source.string() +
               "' -DOUTPUT='" + out.string() + "' -DVERSION=" + version + " -P '" + script + "'")
      .has_value();
}

bool have_git() {
  return shell("git --version").has_value();
}

// The initializer the generated source holds: {"<commit>", <dirty>, "<version>", "<diff sha>"}.
std::string initializer(const std::string& commit, bool dirty, const std::string& version,
                        const std::string& diff_sha256 = "") {
  return "{\"" + commit + "\", " + (dirty ? "true" : "false") + ", \"" + version + "\", \"" +
         diff_sha256 + "\"}";
}

// The diff digest a generated source holds ("" when there is none).
std::string diff_digest_in(const std::string& generated) {
  const auto m = test::Pattern(R"re(, "([0-9a-f]{64})"\})re").search(generated);
  return m ? m->groups[0] : "";
}

TEST(BuildProvenance, CommitEqualsHeadOfTheSourceTreeItWasBuiltFrom) {
  if (!have_git()) GTEST_SKIP() << "git is not installed";
  const auto head = shell(std::string("git -C '") + ACCELBENCH_SOURCE_DIR + "' rev-parse HEAD");
  if (!head) GTEST_SKIP() << ACCELBENCH_SOURCE_DIR << " is not a git checkout";
  // ctest runs after a build, so HEAD now is HEAD at build time unless someone committed since.
  EXPECT_EQ(build_provenance().git_commit, *head)
      << "the binary was built from another commit: rebuild before testing";
}

TEST(BuildProvenance, DirtyFlagMatchesTrackedChangesInTheSourceTree) {
  if (!have_git()) GTEST_SKIP() << "git is not installed";
  const auto status = shell(std::string("git --no-optional-locks -C '") + ACCELBENCH_SOURCE_DIR +
                            "' status --porcelain --untracked-files=no");
  if (!status) GTEST_SKIP() << ACCELBENCH_SOURCE_DIR << " is not a git checkout";
  EXPECT_EQ(build_provenance().git_dirty, !status->empty())
      << "tracked changes now:\n"
      << *status << "\n(the build saw the tree in another state: rebuild before testing)";
}

TEST(BuildProvenance, VersionIsTheCMakeProjectVersion) {
  const std::string want = cmake_project_version();
  ASSERT_FALSE(want.empty()) << "no `project(accelbench VERSION ...)` in CMakeLists.txt";
  EXPECT_EQ(build_provenance().version, want);
}

TEST(BuildProvenance, CaptureEnvironmentReportsTheBuildProvenance) {
  const Environment e = capture_environment();
  EXPECT_EQ(e.git_commit, build_provenance().git_commit);
  EXPECT_EQ(e.git_dirty, build_provenance().git_dirty);
  EXPECT_EQ(e.git_diff_sha256, build_provenance().git_diff_sha256);
  EXPECT_EQ(e.git_diff_sha256.empty(), !e.git_dirty);
  EXPECT_EQ(e.accelbench_version, build_provenance().version);
  EXPECT_FALSE(e.accelbench_version.empty());
  EXPECT_EQ(e.to_json().at("git_commit"), e.git_commit);
}

// The CPU's identity fields and the kernel variant reach the record (runs.config.environment).
TEST(Environment, RecordsTheCpuIdentityAndTheKernelVariant) {
  const Environment e = capture_environment();
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string text((std::istreambuf_iterator<char>(cpuinfo)), std::istreambuf_iterator<char>());
  if (text.find("cpu family") != std::string::npos) {  // x86 Linux
    EXPECT_TRUE(
        test::Pattern(R"(\S+ family [0-9]+ model [0-9]+ stepping [0-9]+)").full_match(e.cpu_id))
        << e.cpu_id;
  }
  const nlohmann::json j = e.to_json();
  EXPECT_EQ(j.at("cpu_id"), e.cpu_id);
  const KernelVariant v = kernel_variant();
  const nlohmann::json& k = j.at("kernels");
  EXPECT_EQ(k.at("simd_width"), v.simd_width);
  EXPECT_EQ(k.at("int8_dot"), v.int8_dot);
  EXPECT_EQ(k.at("gemm_tile"), nlohmann::json({v.gemm_tile_rows, v.gemm_tile_cols}));
  EXPECT_EQ(k.at("gemm_k_block"), v.gemm_k_block);
  EXPECT_EQ(k.at("kquant_prefetch_superblocks"), v.kquant_prefetch_superblocks);
  EXPECT_EQ(k.at("block_prefetch_blocks"), v.block_prefetch_blocks);
  EXPECT_EQ(k.at("decode_prefetch_source"), v.decode_prefetch_source);
  EXPECT_EQ(k.at("pool_spin_us"), v.pool_spin_us);
  EXPECT_EQ(k.at("transparent_hugepages"), v.transparent_hugepages);
}

// A scratch repository with one committed file.
class ScratchRepo : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!have_git()) GTEST_SKIP() << "git is not installed";
    repo_ = dir_.path() / "repo";
    fs::create_directories(repo_);
    std::ofstream(repo_ / "a.txt") << "one\n";
    git(repo_, "init -q");
    git(repo_, "add a.txt");
    git(repo_, "-c user.name=t -c user.email=t@example.invalid commit -q -m first");
    out_ = dir_.path() / "gen" / "build_provenance.cpp";
  }
  test::TempDir dir_;
  fs::path repo_, out_;
};

TEST_F(ScratchRepo, ScriptWritesHeadAndCleanForAnUnmodifiedCheckout) {
  ASSERT_TRUE(run_provenance_script(repo_, out_, "1.2.3"));
  const std::string head = git(repo_, "rev-parse HEAD");
  EXPECT_NE(read_file(out_).find(initializer(head, false, "1.2.3")), std::string::npos)
      << read_file(out_);
}

TEST_F(ScratchRepo, ScriptMarksAModifiedTrackedFileDirtyButNotAnUntrackedOne) {
  std::ofstream(repo_ / "untracked.txt") << "x\n";
  ASSERT_TRUE(run_provenance_script(repo_, out_, "1.2.3"));
  const std::string head = git(repo_, "rev-parse HEAD");
  EXPECT_NE(read_file(out_).find(initializer(head, false, "1.2.3")), std::string::npos)
      << "an untracked file made the build dirty:\n"
      << read_file(out_);
  std::ofstream(repo_ / "a.txt") << "two\n";
  ASSERT_TRUE(run_provenance_script(repo_, out_, "1.2.3"));
  const std::string two = diff_digest_in(read_file(out_));
  ASSERT_FALSE(two.empty()) << "a dirty build without its diff digest:\n" << read_file(out_);
  EXPECT_NE(read_file(out_).find(initializer(head, true, "1.2.3", two)), std::string::npos)
      << read_file(out_);
  // Another edit of the same commit is another dirty state; the same edit again is the same one.
  std::ofstream(repo_ / "a.txt") << "three\n";
  ASSERT_TRUE(run_provenance_script(repo_, out_, "1.2.3"));
  EXPECT_NE(diff_digest_in(read_file(out_)), two);
  std::ofstream(repo_ / "a.txt") << "two\n";
  ASSERT_TRUE(run_provenance_script(repo_, out_, "1.2.3"));
  EXPECT_EQ(diff_digest_in(read_file(out_)), two);
}

TEST_F(ScratchRepo, ScriptFollowsANewCommitAndLeavesAnUnchangedFileUntouched) {
  ASSERT_TRUE(run_provenance_script(repo_, out_, "1.2.3"));
  const auto first_time = fs::last_write_time(out_);
  // Same tree again: the file must keep its timestamp, or every build would recompile it.
  ASSERT_TRUE(run_provenance_script(repo_, out_, "1.2.3"));
  EXPECT_EQ(fs::last_write_time(out_), first_time);

  std::ofstream(repo_ / "a.txt") << "two\n";
  git(repo_, "-c user.name=t -c user.email=t@example.invalid commit -q -am second");
  ASSERT_TRUE(run_provenance_script(repo_, out_, "1.2.4"));
  EXPECT_NE(read_file(out_).find(initializer(git(repo_, "rev-parse HEAD"), false, "1.2.4")),
            std::string::npos)
      << read_file(out_);
}

TEST(BuildProvenanceScript, OutsideAGitCheckoutTheCommitIsUnknown) {
  test::TempDir dir;
  const fs::path out = dir.path() / "build_provenance.cpp";
  // GIT_CEILING_DIRECTORIES stops git from finding a repository above the temp dir.
  const std::string ceiling =
      "GIT_CEILING_DIRECTORIES='" + dir.path().parent_path().string() + "' ";
  const std::string script = std::string(ACCELBENCH_SOURCE_DIR) + "/cmake/provenance.cmake";
  ASSERT_TRUE(shell(ceiling + "'" + ACCELBENCH_CMAKE_COMMAND + "' -DSOURCE_DIR='" +
                    dir.path().string() + "' -DOUTPUT='" + out.string() + "' -DVERSION=0.0.1 -P '" +
                    script + "'"));
  EXPECT_NE(read_file(out).find(initializer("unknown", false, "0.0.1")), std::string::npos)
      << read_file(out);
}

TEST(FmaPeak, MeasuredOncePerThreadCountAndPositive) {
  const double first = run_fma_peak_gflops(1);
  EXPECT_TRUE(std::isfinite(first));
  EXPECT_GT(first, 0);
  // The second call must return the remembered figure, not a new measurement (which would differ
  // in its last bits on any real clock).
  EXPECT_EQ(run_fma_peak_gflops(1), first);
}

}  // namespace
}  // namespace accel
