// The libFuzzer targets' inputs replayed in the ordinary build (tests/support/fuzz_entries.h):
// every generated seed and every committed regression file (tests/fuzz/regressions/<target>/,
// one per crash the fuzzers found) goes through its entry without an undocumented error escaping;
// the seeds are also checked to be valid inputs, so the fuzzers start from files that load.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "harness/plan.h"
#include "models/gguf.h"
#include "models/llama2c_import.h"
#include "models/model_config.h"
#include "models/tokenizer.h"
#include "tests/support/fuzz_entries.h"
#include "tests/support/test_support.h"

namespace accel {
namespace {

namespace fs = std::filesystem;

std::vector<uint8_t> read_bytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

void write_bytes(const std::string& path, const std::vector<uint8_t>& b) {
  std::ofstream(path, std::ios::binary)
      .write(reinterpret_cast<const char*>(b.data()), std::streamsize(b.size()));
}

TEST(FuzzRegressions, EverySeedAndRegressionFileReplaysThroughItsEntry) {
  size_t files = 0;
  for (const std::string& target : fuzz::targets()) {
    for (const auto& [name, bytes] : fuzz::seeds(target)) {
      SCOPED_TRACE(target + " seed " + name);
      EXPECT_EQ(fuzz::run(target, bytes.data(), bytes.size()), 0);
      ++files;
    }
    const fs::path dir = fs::path(ACCELBENCH_SOURCE_DIR) / "tests/fuzz/regressions" / target;
    if (!fs::exists(dir)) continue;
    for (const auto& e : fs::directory_iterator(dir)) {
      SCOPED_TRACE(e.path().string());
      const std::vector<uint8_t> bytes = read_bytes(e.path());
      EXPECT_EQ(fuzz::run(target, bytes.data(), bytes.size()), 0);
      ++files;
    }
  }
  EXPECT_GE(files, 4u);
}

TEST(FuzzRegressions, SeedsAreValidInputs) {
  test::TempDir dir;
  const auto g = fuzz::seeds("gguf").at(0).second;
  write_bytes(dir.file("s.gguf"), g);
  const GgufFile f = GgufFile::open(dir.file("s.gguf"));
  EXPECT_EQ(f.tensors().size(), 9u) << "one row of each weight type (mxfp4 included)";
  EXPECT_NO_THROW(Tokenizer::create(TokenizerSpec::from_gguf(f)));
  // Every gguf seed is a readable config; the sliding-window ones (window, pattern, per-kind
  // RoPE, sinks) read as sliding.
  for (const auto& [name, bytes] : fuzz::seeds("gguf")) {
    write_bytes(dir.file(name), bytes);
    const ModelConfig c = ModelConfig::from_gguf(GgufFile::open(dir.file(name)));
    if (name.find("sliding") != std::string::npos) {
      EXPECT_GT(c.n_swa, 0) << name;
    }
    if (name.find("hybrid") != std::string::npos) {
      EXPECT_TRUE(has_recurrent_layers(c)) << name;
    }
  }
  for (const auto& [name, bytes] : fuzz::seeds("tokenizer_metadata")) {
    write_bytes(dir.file(name), bytes);
    EXPECT_NO_THROW(Tokenizer::create(TokenizerSpec::from_gguf(GgufFile::open(dir.file(name)))))
        << name;
  }
  const auto l = fuzz::seeds("llama2c").at(0).second;
  uint32_t n = 0;
  std::memcpy(&n, l.data(), 4);
  write_bytes(dir.file("c.bin"), {l.begin() + 4, l.begin() + 4 + n});
  write_bytes(dir.file("t.bin"), {l.begin() + 4 + n, l.end()});
  EXPECT_NO_THROW(import_llama2c(dir.file("c.bin"), dir.file("t.bin"), dir.file("l.gguf")));
  for (const auto& [name, bytes] : fuzz::seeds("plan"))
    EXPECT_NO_THROW(
        parse_plan(nlohmann::json::parse(bytes.begin(), bytes.end()), name, dir.file("models")))
        << name;
}

}  // namespace
}  // namespace accel
