// End-to-end `accelbench report --table paper`: listing the published files, an unknown id (exit 2
// after the list), and a published file printed beside a hand-built store.
#include <gtest/gtest.h>

#include <fstream>

#include "tests/reports/line_match.h"
#include "tests/results/store_fixtures.h"
#include "tests/support/test_support.h"

namespace accel {
namespace {

using test::run_cli;

const std::string kPublished = " --published " ACCELBENCH_SOURCE_DIR "/reports/published";

TEST(PaperCli, ListAndUnknownIdPrintThePublishedFiles) {
  test::TempDir dir;
  std::string out;
  ASSERT_EQ(
      run_cli("report --db " + dir.file("none.sqlite") + " --table paper --paper list" + kPublished,
              &out),
      0)
      << out;
  EXPECT_NE(out.find("| specprefill-vllm-mlx |"), std::string::npos) << out;
  EXPECT_EQ(run_cli("report --db x --table paper --paper no-such-paper" + kPublished, &out), 2);
  EXPECT_NE(out.find("| open-tq-metal |"), std::string::npos) << out;
  EXPECT_NE(run_cli("report --db x --table ttft --paper pld", &out), 0);
}

// baseline 2.0 s and specprefill keep 0.2 at 0.5 s at 8192 tokens: 4.00x against the MLX port's
// published 3.7x at 8K -> ratio of ratios 4 / 3.7 = 1.08; 16K-128K have no measurement.
TEST(PaperCli, SpecPrefillTtftTableBesideAHandBuiltStore) {
  test::TempDir dir;
  const std::string db = dir.file("r.sqlite");
  {
    auto s = results::ResultStore::open(db);
    const std::string run = s.begin_run(test::full_run());
    test::add_case(s, run, "baseline", nlohmann::json::object(), 8192, "s0", {2.0, 2.0, 2.0});
    test::add_case(s, run, "specprefill", {{"keep", 0.2}, {"threshold", 0}}, 8192, "s0",
                   {0.5, 0.5, 0.5});
  }
  std::string out;
  ASSERT_EQ(
      run_cli("report --db " + db + " --table paper --paper specprefill-vllm-mlx" + kPublished,
              &out),
      0)
      << out;
  EXPECT_TRUE(test::lines_match(
      out, {"Published setup: hardware Apple M2 Ultra, 128 GB; %*",
            "This store: CPU Test CPU @ 3.0GHz (8 threads) on host(s) host-a; target(s) target; "
            "draft(s) none.",
            "| TTFT reduction 8K | 8K | 3.7× | 8192 | target, specprefill (keep=0.2) | 4.00× "
            "[4.00, 4.00] | 2.00 s → 0.500 s | 1.08 |  |",
            "| TTFT reduction 16K | 16K | 4.1× | — | — | no measurement | — | — | no "
            "'specprefill' trials with keep=0.2 at context 16384 in this store |"}))
      << out;
  ASSERT_EQ(run_cli("report --db " + db +
                        " --table paper --paper specprefill-vllm-mlx --format json" + kPublished,
                    &out),
            0);
  const auto j = nlohmann::json::parse(out);
  EXPECT_EQ(j["table"]["rows"].size(), 5u);
  EXPECT_NEAR(j["table"]["rows"][0]["ratio_of_ratios"].get<double>(), 4.0 / 3.7, 1e-9);
}

}  // namespace
}  // namespace accel
