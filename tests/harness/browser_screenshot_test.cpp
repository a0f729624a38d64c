// The dashboard and a plot rendered by a real browser: Debian's headless chromium takes a
// screenshot of each from file://; each must be far from blank (larger than a blank page's PNG
// at the same size) with no console errors. Skips with a message where no chromium is installed
// (scripts/setup.sh installs it when the archive has it). Screenshots are kept as artifacts in
// <build>/test-artifacts/.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "tests/reports/plot_fixtures.h"
#include "tests/support/test_support.h"

namespace accel {
namespace {

namespace fs = std::filesystem;

std::string find_chromium() {
  for (const char* p : {"/usr/bin/chromium", "/usr/bin/chromium-browser"})
    if (fs::exists(p)) return p;
  return "";
}

// Screenshots `url` into `png`; returns chromium's console output (stderr with logging on).
std::string screenshot(const std::string& chromium, const std::string& url, const std::string& png,
                       const test::TempDir& dir) {
  const std::string log = dir.file("chromium.log");
  const std::string cmd =
      "timeout 120 " + chromium +
      " --headless --no-sandbox --disable-gpu --hide-scrollbars "
      "--no-first-run --user-data-dir=" +
      dir.file("profile") +
      " --enable-logging=stderr --v=0 --window-size=1000,800 --screenshot=" + png + " '" + url +
      "' >" + log + " 2>&1";
  const int rc = std::system(cmd.c_str());
  std::ifstream f(log);
  std::string out((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  EXPECT_EQ(rc, 0) << out;
  return out;
}

TEST(BrowserScreenshot, DashboardAndPlotRenderWithoutConsoleErrors) {
  const std::string chromium = find_chromium();
  if (chromium.empty())
    GTEST_SKIP() << "no chromium installed (apt-get install chromium, or scripts/setup.sh): the "
                    "dashboard and plot are not checked in a browser";
  test::TempDir dir;
  const std::string db = dir.file("p.sqlite");
  test::make_plot_store(db);
  std::string out;
  ASSERT_EQ(test::run_cli("dashboard --db " + db + " --out " + dir.file("site"), &out), 0) << out;
  ASSERT_EQ(
      test::run_cli(
          "plot --db " + db + " --kind speedup-vs-context --out " + dir.file("speedup.svg"), &out),
      0)
      << out;
  std::ofstream(dir.file("blank.html")) << "<!DOCTYPE html><html><body></body></html>\n";
  const fs::path artifacts = fs::path(test::accelbench_binary()).parent_path() / "test-artifacts";
  fs::create_directories(artifacts);
  const std::string blank_png = (artifacts / "blank.png").string();
  screenshot(chromium, "file://" + dir.file("blank.html"), blank_png, dir);
  ASSERT_TRUE(fs::exists(blank_png));
  const auto blank_size = fs::file_size(blank_png);
  for (const auto& [url, name] :
       {std::pair{"file://" + dir.file("site/index.html"), std::string("dashboard.png")},
        std::pair{"file://" + dir.file("speedup.svg"), std::string("plot-speedup.png")}}) {
    const std::string png = (artifacts / name).string();
    fs::remove(png);
    const std::string console = screenshot(chromium, url, png, dir);
    ASSERT_TRUE(fs::exists(png)) << console;
    EXPECT_GT(fs::file_size(png), 4 * blank_size) << name << " looks blank";
    EXPECT_EQ(console.find("CONSOLE"), std::string::npos) << name << ": " << console;
    EXPECT_EQ(console.find("Uncaught"), std::string::npos) << name << ": " << console;
    std::fprintf(stderr, "screenshot kept: %s (%ju bytes; blank page %ju)\n", png.c_str(),
                 uintmax_t(fs::file_size(png)), uintmax_t(blank_size));
  }
}

}  // namespace
}  // namespace accel
