// The dashboard and a plot rendered by a real browser (Debian's headless chromium, from file://):
// the dashboard of two commits with one regression is screenshotted and its pixels checked (the
// PNG decodes, is far from one colour, and shows the regression's red), its DOM after the script
// ran says it ran without error and holds the overview charts, and a filter given in the URL
// hides the cases it should. Without chromium the test skips naming it, and fails under CI=true
// (scripts/setup.sh installs it). The page and screenshots are kept in <build>/test-artifacts/.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <regex>
#include <set>

#include "tests/harness/png_pixels.h"
#include "tests/reports/plot_fixtures.h"
#include "tests/results/store_fixtures.h"
#include "tests/support/test_support.h"

namespace accel {
namespace {

namespace fs = std::filesystem;

constexpr int kWidth = 1280, kHeight = 2000;  // the screenshot's window

std::string find_chromium() {
  for (const char* p : {"/usr/bin/chromium", "/usr/bin/chromium-browser"})
    if (fs::exists(p)) return p;
  return "";
}

bool under_ci() {
  const char* ci = std::getenv("CI");
  return ci && std::string(ci) == "true";
}

std::string slurp(const std::string& p) {
  std::ifstream f(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

// A SpecPrefill-like configuration: 18 parameters, of which only `keep` varies between cases.
nlohmann::json specprefill_params(double keep) {
  nlohmann::json p = {{"keep", keep}, {"lookahead", 8}, {"pool", "max"}, {"chunk", 32}};
  for (int i = 0; p.size() < 18; ++i) p["switch_" + std::to_string(i)] = i % 3;
  return p;
}

// Two stores, one per commit: baseline at 3 contexts and SpecPrefill (keep 0.1, 0.3) at the same
// contexts, 9 trials each with 2 % noise; on the second commit keep=0.3 at 4000 tokens is 30 %
// slower. Returns the "--db A --db B" arguments.
std::string make_two_commit_stores(const test::TempDir& dir) {
  std::string args;
  for (int commit = 0; commit < 2; ++commit) {
    const std::string path = dir.file("commit" + std::to_string(commit) + ".sqlite");
    auto s = results::ResultStore::open(path);
    s.db().exec("PRAGMA synchronous = OFF");
    auto info = test::full_run();
    info.git_commit = commit ? "b7e1c0de5ca1ab1e0000000000000000000000bb"
                             : "a11ce5e1f0000000000000000000000000000aaa";
    info.git_dirty = false;
    info.started_at = commit ? "2025-03-02T09:00:00.000Z" : "2025-03-01T09:00:00.000Z";
    const std::string run = s.begin_run(info);
    std::mt19937_64 rng(17 + commit);
    std::lognormal_distribution<double> noise(0.0, 0.02);
    for (int64_t ctx : {4000, 512, 1024}) {  // not in order: the page sorts them
      for (double keep : {0.0, 0.1, 0.3}) {
        const double slow = commit == 1 && keep == 0.3 && ctx == 4000 ? 1.3 : 1.0;
        std::vector<double> v;
        for (int t = 0; t < 9; ++t)
          v.push_back(0.05 * double(ctx) / 512.0 * (keep > 0 ? 0.3 + keep : 1.0) * slow *
                      noise(rng));
        test::add_case(s, run, keep > 0 ? "specprefill" : "baseline",
                       keep > 0 ? specprefill_params(keep) : nlohmann::json::object(), ctx, "s0",
                       v);
      }
    }
    args += " --db " + path;
  }
  return args;
}

struct Browser {
  std::string chromium;
  const test::TempDir& dir;

  // Runs chromium headless on `url` with `what` (--screenshot=... or --dump-dom); returns its
  // stdout; `console` gets its log (stderr with logging on).
  std::string run(const std::string& what, const std::string& url, std::string* console) const {
    const std::string out = dir.file("chromium.out"), log = dir.file("chromium.log");
    const std::string cmd = "timeout 60 " + chromium +
                            " --headless --no-sandbox --disable-gpu --hide-scrollbars "
                            "--no-first-run --user-data-dir=" +
                            dir.file("profile") + " --enable-logging=stderr --v=0 --window-size=" +
                            std::to_string(kWidth) + "," + std::to_string(kHeight) + " " + what +
                            " '" + url + "' >" + out + " 2>" + log;
    const int rc = std::system(cmd.c_str());
    *console = slurp(log);
    EXPECT_EQ(rc, 0) << cmd << "\n" << *console;
    return slurp(out);
  }
};

// No console message and no uncaught exception in chromium's log.
void expect_clean_console(const std::string& console, const std::string& what) {
  EXPECT_EQ(console.find("CONSOLE"), std::string::npos) << what << ": " << console;
  EXPECT_EQ(console.find("Uncaught"), std::string::npos) << what << ": " << console;
}

// The PNG decodes at the window's size, its most common colour (the background) covers less than
// `max_background` of it, and (when `red` is set) it shows some of the regression red (#D62728).
void expect_not_blank(const std::string& png, double max_background, bool red) {
  const test::PngImage img = test::read_png(png);
  EXPECT_EQ(img.width, uint32_t(kWidth)) << png;
  EXPECT_EQ(img.height, uint32_t(kHeight)) << png;
  std::map<uint32_t, size_t> colours;
  size_t reds = 0;
  for (uint32_t c : img.rgb) {
    ++colours[c];
    const int r = int(c >> 16), g = int(c >> 8 & 0xff), b = int(c & 0xff);
    reds += std::abs(r - 0xd6) < 24 && std::abs(g - 0x27) < 24 && std::abs(b - 0x28) < 24;
  }
  size_t most = 0;
  for (const auto& [c, n] : colours) most = std::max(most, n);
  // Text and anti-aliased chart lines give hundreds of colours; a blank page has one.
  EXPECT_GE(colours.size(), 32u) << png;
  EXPECT_LT(double(most) / double(img.rgb.size()), max_background) << png << ": nearly one colour";
  if (red) {
    EXPECT_GE(reds, 50u) << png << ": the regression's red is not visible";
  }
  std::fprintf(stderr, "screenshot %s: %ux%u, %zu colours, background %.1f %%, %zu red pixels\n",
               png.c_str(), img.width, img.height, colours.size(),
               100.0 * double(most) / double(img.rgb.size()), reds);
}

// The value of the body's attribute `name` in a --dump-dom output ("" when absent).
std::string body_attr(const std::string& dom, const std::string& name) {
  std::smatch m;
  const std::regex body("<body[^>]*\\s" + name + "=\"([^\"]*)\"");
  return std::regex_search(dom, m, body) ? m[1].str() : "";
}

size_t count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
  return n;
}

TEST(BrowserScreenshot, DashboardOfTwoCommitsRendersFiltersAndShowsItsRegression) {
  const std::string chromium = find_chromium();
  if (chromium.empty()) {
    if (under_ci()) FAIL() << "CI=true and no chromium (/usr/bin/chromium): run scripts/setup.sh";
    GTEST_SKIP() << "no chromium installed (apt-get install chromium, or scripts/setup.sh): the "
                    "dashboard and plot are not checked in a browser";
  }
  test::TempDir dir;
  std::string out;
  ASSERT_EQ(
      test::run_cli("dashboard" + make_two_commit_stores(dir) + " --out " + dir.file("site"), &out),
      0)
      << out;
  ASSERT_NE(out.find("1 regressed"), std::string::npos) << out;
  const std::string page = "file://" + dir.file("site/index.html");
  const Browser browser{chromium, dir};
  const fs::path artifacts = fs::path(test::accelbench_binary()).parent_path() / "test-artifacts";
  fs::create_directories(artifacts);

  fs::copy_file(dir.file("site/index.html"), artifacts / "dashboard.html",
                fs::copy_options::overwrite_existing);  // the page itself, beside its screenshot
  const std::string png = (artifacts / "dashboard.png").string();
  fs::remove(png);
  std::string console;
  browser.run("--screenshot=" + png, page, &console);
  ASSERT_TRUE(fs::exists(png)) << console;
  expect_clean_console(console, "dashboard screenshot");
  expect_not_blank(png, 0.95, /*red=*/true);

  // The script ran (data-ready), raised nothing (data-js-error), and the overview is there.
  const std::string dom = browser.run("--dump-dom", page, &console);
  expect_clean_console(console, "dashboard DOM");
  EXPECT_EQ(body_attr(dom, "data-ready"), "1") << dom.substr(0, 2000);
  EXPECT_EQ(body_attr(dom, "data-js-error"), "");
  EXPECT_EQ(body_attr(dom, "data-shown"), "9");
  EXPECT_NE(dom.find("<figure class=\"overview\" data-metric=\"ttft_s\">\n<svg"),
            std::string::npos);

  // A filter from the URL: "?q=" and "#q=" both pre-fill the box; every word must match.
  for (const auto& [query, shown] :
       std::vector<std::pair<std::string, std::string>>{{"?q=ctx%3D512", "3"},
                                                        {"#q=keep%3D0.3+ctx=4000", "1"},
                                                        {"?q=regressed", "1"},
                                                        {"#q=no-such-case", "0"}}) {
    const std::string filtered = browser.run("--dump-dom", page + query, &console);
    EXPECT_EQ(body_attr(filtered, "data-ready"), "1") << query;
    EXPECT_EQ(body_attr(filtered, "data-shown"), shown) << query;
    EXPECT_NE(filtered.find(">" + shown + " of 9 cases shown<"), std::string::npos) << query;
    // Hidden: the rows and charts of the cases filtered out (two per case, plus its
    // regressions-table row for the regressed one).
    const size_t hidden_rows = count(filtered, "class=\"case-row\"") - std::stoul(shown);
    EXPECT_GE(count(filtered, "hidden=\"\""), 2 * hidden_rows) << query;
  }
}

TEST(BrowserScreenshot, PlotRendersWithoutConsoleErrors) {
  const std::string chromium = find_chromium();
  if (chromium.empty()) {
    if (under_ci()) FAIL() << "CI=true and no chromium (/usr/bin/chromium): run scripts/setup.sh";
    GTEST_SKIP() << "no chromium installed (apt-get install chromium, or scripts/setup.sh)";
  }
  test::TempDir dir;
  const std::string db = dir.file("p.sqlite");
  test::make_plot_store(db);
  std::string out;
  ASSERT_EQ(
      test::run_cli(
          "plot --db " + db + " --kind speedup-vs-context --out " + dir.file("speedup.svg"), &out),
      0)
      << out;
  const fs::path artifacts = fs::path(test::accelbench_binary()).parent_path() / "test-artifacts";
  fs::create_directories(artifacts);
  const std::string png = (artifacts / "plot-speedup.png").string();
  fs::remove(png);
  std::string console;
  Browser{chromium, dir}.run("--screenshot=" + png, "file://" + dir.file("speedup.svg"), &console);
  ASSERT_TRUE(fs::exists(png)) << console;
  expect_clean_console(console, "plot");
  expect_not_blank(png, 0.995, /*red=*/false);  // one figure on a large window
}

}  // namespace
}  // namespace accel
