// The NIAH grid report on a hand-made store: the depth x length grid per configuration (scores
// repeated on every trial count once, fallbacks and other suites' trials are left out), its
// printed table, and the SVG heatmaps: well-formed, self-contained, one cell per (depth, length)
// coloured by its score on gkamradt's colormap.
#include "reports/niah_report.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <tuple>

#include "tests/reports/line_match.h"
#include "tests/results/store_fixtures.h"
#include "tests/support/pattern.h"
#include "tests/support/test_support.h"

namespace accel::reports {
namespace {

using test::lines_match;

// One niah case: `trials` trials of a sample at (depth, length) with the given score.
void niah_case(results::ResultStore& s, const std::string& run, const std::string& method,
               const nlohmann::json& params, int64_t len, int depth, int rep, double score,
               int trials = 2, bool fallback = false) {
  std::vector<results::TrialRecord> v;
  const std::string id = "depth" + std::to_string(depth) + "-" + std::to_string(rep);
  for (int i = 0; i < trials; ++i) {
    auto t = test::simple_trial(run, method, params, len, id, i, 1.0);
    t.workload = "niah";
    t.scores = {{"niah.score", score}, {"niah.depth", depth}, {"niah.depth_actual", depth - 0.5}};
    if (fallback) t.stats = {{"fallback", "below_threshold"}};
    v.push_back(t);
  }
  s.record_case(v);
}

// baseline: 1024 {0: 100, 50: 100 and 0, 100: 100}; 2048 {0: 0, 50: 100, 100: 100}.
// specprefill keep=0.2 at 1024 {0: 0, 50: 0, 100: 100}, and a fallback at 2048/50 (left out);
// keep=0.5 at 1024 {0: 100} only. One agreement trial (no niah scores) is ignored.
void fill(results::ResultStore& s) {
  const std::string run = s.begin_run(test::full_run());
  const nlohmann::json none = nlohmann::json::object();
  const nlohmann::json k2 = {{"keep", 0.2}, {"lookahead", 8}},
                       k5 = {{"keep", 0.5}, {"lookahead", 8}};
  niah_case(s, run, "baseline", none, 1024, 0, 0, 100);
  niah_case(s, run, "baseline", none, 1024, 50, 0, 100);
  niah_case(s, run, "baseline", none, 1024, 50, 1, 0);
  niah_case(s, run, "baseline", none, 1024, 100, 0, 100, 3);
  niah_case(s, run, "baseline", none, 2048, 0, 0, 0);
  niah_case(s, run, "baseline", none, 2048, 50, 0, 100);
  niah_case(s, run, "baseline", none, 2048, 100, 0, 100);
  niah_case(s, run, "specprefill", k2, 1024, 0, 0, 0);
  niah_case(s, run, "specprefill", k2, 1024, 50, 0, 0);
  niah_case(s, run, "specprefill", k2, 1024, 100, 0, 100, 1);
  niah_case(s, run, "specprefill", k2, 2048, 50, 0, 100, 1, /*fallback=*/true);
  niah_case(s, run, "specprefill", k5, 1024, 0, 0, 100);
  test::add_case(s, run, "baseline", none, 1024, "s0", {1.0}, {}, {{"agreement.top1", 1.0}});
}

struct NiahReport : ::testing::Test {
  test::TempDir dir;
  std::string path = dir.file("r.sqlite");
  void SetUp() override {
    auto s = results::ResultStore::open(path);
    fill(s);
  }
  results::ResultStore store() const { return results::ResultStore::open_readonly(path); }
};

TEST_F(NiahReport, GridsHoldTheMeanScorePerDepthAndLength) {
  const auto grids = niah_grids(store(), {});
  ASSERT_EQ(grids.size(), 3u);
  const NiahGrid& b = grids[0];
  EXPECT_EQ(b.method, "baseline");
  EXPECT_EQ(b.params, "");
  EXPECT_EQ(b.kv, "f32");
  EXPECT_EQ(b.depths, (std::vector<double>{0, 50, 100}));
  EXPECT_EQ(b.lengths, (std::vector<int64_t>{1024, 2048}));
  ASSERT_EQ(b.cells.size(), 6u);
  const auto cell = [](const NiahGrid& g, double d, int64_t len) {
    const auto it = g.cells.find({d, len});
    return it == g.cells.end() ? std::make_pair(-1.0, size_t(0))
                               : std::make_pair(it->second.mean, it->second.n);
  };
  EXPECT_EQ(cell(b, 50, 1024), std::make_pair(50.0, size_t(2)));    // two samples, two trials each
  EXPECT_EQ(cell(b, 100, 1024), std::make_pair(100.0, size_t(1)));  // three trials, one sample
  EXPECT_EQ(cell(b, 0, 2048), std::make_pair(0.0, size_t(1)));
  EXPECT_EQ(b.samples, 7u);
  EXPECT_NEAR(b.mean, 500.0 / 7, 1e-12);
  const NiahGrid& k2 = grids[1];
  EXPECT_EQ(k2.params, "keep=0.2");  // lookahead does not vary
  EXPECT_EQ(k2.fallbacks, 1u);
  EXPECT_EQ(k2.cells.size(), 3u) << "the fallback trial is left out";
  EXPECT_EQ(cell(k2, 50, 2048).first, -1.0);
  EXPECT_EQ(grids[2].params, "keep=0.5");
  EXPECT_EQ(grids[2].cells.size(), 1u);
  EXPECT_EQ(grids[2].depths, b.depths) << "every grid has every depth and length";
  // --where narrows the selection.
  ReportOptions opt;
  opt.where = "context_len = 2048";
  const auto only = niah_grids(store(), opt);
  EXPECT_EQ(only[0].lengths, (std::vector<int64_t>{2048}));
}

TEST_F(NiahReport, TablePrintsOneRowPerDepthAndAnAllRow) {
  const std::string out = render(make_report(store(), "niah", {}), Format::Markdown);
  EXPECT_TRUE(lines_match(
      out,
      {"**NIAH: needle score (0-100) by depth and context length**",
       "| Method | Params | Depth (%) | 1024 | 2048 | Mean |",
       "| :--- | :--- | ---: | ---: | ---: | ---: |", "| baseline |  | 0 | 100.0 | 0.0 | 50.0 |",
       "| baseline |  | 50 | 50.0 | 100.0 | 66.7 |",
       "| baseline |  | 100 | 100.0 | 100.0 | 100.0 |",
       "| baseline |  | all | 75.0 | 66.7 | 71.4 |",
       "| specprefill | keep=0.2 | 0 | 0.0 | — | 0.0 |",
       "| specprefill | keep=0.2 | 50 | 0.0 | — | 0.0 |",
       "| specprefill | keep=0.2 | 100 | 100.0 | — | 100.0 |",
       "| specprefill | keep=0.2 | all | 33.3 | — | 33.3 |",
       "| specprefill | keep=0.5 | 0 | 100.0 | — | 100.0 |",
       "| specprefill | keep=0.5 | 50 | — | — | — |",
       "| specprefill | keep=0.5 | 100 | — | — | — |",
       "| specprefill | keep=0.5 | all | 100.0 | — | 100.0 |",
       "Note: Cell = mean niah.score over samples %*samples per cell: 1-2;%*",
       "Note: 1 trial(s) fell back to the method's full path and are left out."}))
      << out;
  const auto j = to_json(niah_table(store(), {}));
  EXPECT_EQ(j["rows"][1]["score@1024"], (nlohmann::json{{"mean", 50.0}, {"n", 2}}));
  EXPECT_EQ(j["rows"][1]["depth"], 50.0);
  EXPECT_TRUE(j["rows"][9]["score@1024"].is_null());  // keep=0.5 at depth 50
}

// KV Prediction's LP and C configurations share the target and every param; only their input
// files (aux, predictor) differ. Each must be its own grid, labelled by file, with its own scores
// (pooled, the second configuration's samples were dropped as repeats of the first's).
TEST(NiahReportInputs, ConfigurationsWithDifferentInputFilesAreSeparateGridsLabelledByFile) {
  test::TempDir dir;
  auto s = results::ResultStore::open(dir.file("r.sqlite"));
  const std::string run = s.begin_run(test::full_run());
  int idx = 0;
  for (const auto& [aux, score] :
       {std::pair{"m/kvp/aux-0.50l.gguf", 100.0}, std::pair{"m/fam/draft.gguf", 0.0}}) {
    auto t =
        test::simple_trial(run, "kvpred", nlohmann::json::object(), 1024, "depth50-0", idx++, 1.0);
    t.workload = "niah";
    t.scores = {{"niah.score", score}, {"niah.depth", 50}};
    t.inputs = {{"aux", {{"path", aux}, {"sha256", std::string(64, 'a')}}},
                {"predictor", {{"path", "m/kvp/pred.gguf"}, {"sha256", std::string(64, 'b')}}}};
    s.record_case({t});
  }
  const auto grids = niah_grids(s, {});
  ASSERT_EQ(grids.size(), 2u);
  std::map<std::string, double> mean;
  for (const auto& g : grids) mean[g.params] = g.mean;
  EXPECT_EQ(mean.at("aux=kvp/aux-0.50l"), 100.0);
  EXPECT_EQ(mean.at("aux=fam/draft"), 0.0);
}

TEST_F(NiahReport, EmptySelectionSaysSo) {
  ReportOptions opt;
  opt.where = "method = 'pld'";
  const Table t = niah_table(store(), opt);
  EXPECT_TRUE(t.rows.empty());
  EXPECT_EQ(t.footnotes.back(), "No niah scores in this selection.");
  EXPECT_THROW(write_niah_heatmaps(store(), opt, dir.file("svg")), std::invalid_argument);
}

TEST(NiahColor, ScoresMapOntoKamradtsColormap) {
  EXPECT_EQ(niah_color(0), "#f0496e");
  EXPECT_EQ(niah_color(50), "#ebb839");
  EXPECT_EQ(niah_color(100), "#0cd79f");
  // Halfway between the first two stops, each channel rounded: (240+235)/2, (73+184)/2,
  // (110+57)/2 = 237.5, 128.5, 83.5.
  EXPECT_EQ(niah_color(25), "#ee8154");
  EXPECT_EQ(niah_color(-5), niah_color(0));
  EXPECT_EQ(niah_color(150), niah_color(100));
  // Green rises with the score all the way; red falls past the middle.
  int last_g = -1, last_r = 256;
  for (int s = 0; s <= 100; ++s) {
    const std::string c = niah_color(s);
    const int r = std::stoi(c.substr(1, 2), nullptr, 16),
              g = std::stoi(c.substr(3, 2), nullptr, 16);
    EXPECT_GE(g, last_g) << s;
    if (s >= 50) {
      EXPECT_LE(r, last_r) << s;
    }
    last_g = g, last_r = r;
  }
}

// Well-formedness: every element closed in order, attribute values quoted, entities known.
::testing::AssertionResult well_formed(const std::string& x) {
  std::vector<std::string> open;
  for (size_t i = 0; i < x.size();) {
    if (x[i] == '&') {
      static const test::Pattern ent("&(amp|lt|gt|quot|apos);");
      if (!ent.match_at(x, i)) return ::testing::AssertionFailure() << "bad entity at " << i;
      ++i;
      continue;
    }
    if (x[i] != '<') {
      ++i;
      continue;
    }
    if (x.compare(i, 2, "<?") == 0) {
      i = x.find("?>", i) + 2;
      continue;
    }
    const size_t end = x.find('>', i);
    if (end == std::string::npos) return ::testing::AssertionFailure() << "unclosed tag at " << i;
    std::string tag = x.substr(i + 1, end - i - 1);
    i = end + 1;
    if (tag.front() == '/') {
      const std::string name = tag.substr(1);
      if (open.empty() || open.back() != name)
        return ::testing::AssertionFailure()
               << "</" << name << "> closes " << (open.empty() ? "nothing" : open.back());
      open.pop_back();
      continue;
    }
    const bool self = tag.back() == '/';
    static const test::Pattern element(R"(^[A-Za-z][\w:-]*(\s+[\w:-]+="[^"<]*")*\s*/?$)");
    if (!element.full_match(tag))
      return ::testing::AssertionFailure() << "malformed tag <" << tag << ">";
    if (!self) open.push_back(tag.substr(0, tag.find_first_of(" /")));
  }
  if (!open.empty()) return ::testing::AssertionFailure() << "<" << open.back() << "> not closed";
  return ::testing::AssertionSuccess();
}

TEST(NiahSvg, TheCheckerCatchesBrokenDocuments) {
  EXPECT_TRUE(well_formed("<a><b x=\"1\"/>t &amp; u</a>"));
  EXPECT_FALSE(well_formed("<a><b></a></b>"));
  EXPECT_FALSE(well_formed("<a x=1></a>"));
  EXPECT_FALSE(well_formed("<a>R&D</a>"));
  EXPECT_FALSE(well_formed("<a>"));
}

TEST_F(NiahReport, HeatmapHasOneColouredCellPerDepthAndLength) {
  const auto grids = niah_grids(store(), {});
  const std::string svg = niah_svg(grids[0]);
  EXPECT_TRUE(well_formed(svg));
  EXPECT_EQ(
      svg.rfind(
          "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\"",
          0),
      0u);
  // Self-contained: no scripts, external references or style sheets.
  for (const char* banned : {"<script", "href", "@import", "<image", "<foreignObject"})
    EXPECT_EQ(svg.find(banned), std::string::npos) << banned;
  static const test::Pattern cell_re(
      "<rect class=\"cell\" x=\"([0-9.]+)\" y=\"([0-9.]+)\"[^>]* data-depth=\"([0-9.]+)\" "
      "data-length=\"([0-9]+)\" data-score=\"([0-9.]+)\" data-n=\"([0-9]+)\" "
      "fill=\"(#[0-9a-f]{6})\"");
  std::map<std::pair<std::string, std::string>, std::tuple<double, double, double, std::string>>
      cells;  // (depth, length) -> x, y, score, fill
  for (const auto& m : cell_re.find_all(svg)) {
    const auto& g = m.groups;
    cells[{g[2], g[3]}] = {std::stod(g[0]), std::stod(g[1]), std::stod(g[4]), g[6]};
  }
  ASSERT_EQ(cells.size(), 6u) << svg;
  const std::map<std::pair<std::string, std::string>, double> want = {
      {{"0", "1024"}, 100}, {{"50", "1024"}, 50},  {{"100", "1024"}, 100},
      {{"0", "2048"}, 0},   {{"50", "2048"}, 100}, {{"100", "2048"}, 100}};
  for (const auto& [k, score] : want) {
    const auto& [x, y, s, fill] = cells.at(k);
    EXPECT_EQ(s, score) << k.first << "/" << k.second;
    EXPECT_EQ(fill, niah_color(score)) << k.first << "/" << k.second;
  }
  // Depth grows downwards (0% at the top), length to the right.
  EXPECT_LT(std::get<1>(cells.at({"0", "1024"})), std::get<1>(cells.at({"50", "1024"})));
  EXPECT_LT(std::get<1>(cells.at({"50", "1024"})), std::get<1>(cells.at({"100", "1024"})));
  EXPECT_LT(std::get<0>(cells.at({"0", "1024"})), std::get<0>(cells.at({"0", "2048"})));
  EXPECT_NE(svg.find("<title>NIAH heatmap: baseline (target, KV f32)</title>"), std::string::npos);
  EXPECT_NE(svg.find("fill=\"url(#niah-scale)\""), std::string::npos) << "a colour bar";

  // Cells without samples are grey and say so.
  const std::string k5 = niah_svg(grids[2]);
  EXPECT_TRUE(well_formed(k5));
  size_t missing = 0;
  for (size_t at = k5.find("class=\"cell missing\""); at != std::string::npos;
       at = k5.find("class=\"cell missing\"", at + 1))
    ++missing;
  EXPECT_EQ(missing, 5u);
  EXPECT_NE(k5.find("data-depth=\"0\" data-length=\"1024\" data-score=\"100.0\""),
            std::string::npos);
  // Titles are escaped.
  NiahGrid odd = grids[2];
  odd.params = "name=<a&b>";
  const std::string esc = niah_svg(odd);
  EXPECT_TRUE(well_formed(esc));
  EXPECT_NE(esc.find("name=&lt;a&amp;b&gt;"), std::string::npos);
}

TEST_F(NiahReport, HeatmapsAreWrittenOnePerConfiguration) {
  const std::string out = dir.file("figs/niah");
  const auto paths = write_niah_heatmaps(store(), {}, out);
  ASSERT_EQ(paths.size(), 3u);
  EXPECT_EQ(std::filesystem::path(paths[0]).filename(), "niah-baseline__f32_target.svg");
  EXPECT_EQ(std::filesystem::path(paths[1]).filename(), "niah-specprefill_keep-0.2_f32_target.svg");
  const auto grids = niah_grids(store(), {});
  for (size_t i = 0; i < paths.size(); ++i) {
    std::ifstream f(paths[i]);
    std::stringstream ss;
    ss << f.rdbuf();
    EXPECT_EQ(ss.str(), niah_svg(grids[i])) << paths[i];
  }
}

TEST_F(NiahReport, CliPrintsTheTableAndWritesHeatmaps) {
  std::string out;
  const std::string svg_dir = dir.file("svg");
  ASSERT_EQ(test::run_cli("report --db " + path + " --table niah --svg " + svg_dir, &out), 0)
      << out;
  // stdout (the table) and stderr (the files written) interleave in any order.
  EXPECT_NE(out.find("| baseline |  | 50 | 50.0 | 100.0 | 66.7 |"), std::string::npos) << out;
  EXPECT_NE(out.find("wrote " + svg_dir + "/niah-baseline__f32_target.svg"), std::string::npos)
      << out;
  EXPECT_TRUE(std::filesystem::exists(svg_dir + "/niah-specprefill_keep-0.5_f32_target.svg"));
  EXPECT_NE(test::run_cli("report --db " + path + " --table ttft --svg " + svg_dir, &out), 0);
  EXPECT_NE(out.find("use --table niah"), std::string::npos) << out;
}

}  // namespace
}  // namespace accel::reports
