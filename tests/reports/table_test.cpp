// The four printers of table.h on one small table, matched line by line.
#include "reports/table.h"

#include <gtest/gtest.h>

#include "tests/reports/line_match.h"

namespace accel::reports {
namespace {

Table small() {
  Table t;
  t.title = "Demo";
  t.columns = {{"method", "Method", Align::Left},
               {"ttft", "TTFT (s)", Align::Right},
               {"speedup", "Speedup", Align::Center}};
  t.rows = {{Cell("base_line"), Cell("1.10 ± 0.10", {{"mean", 1.1}}), Cell("1.00×")},
            {Cell("a|b, \"c\""), Cell("—", nullptr), Cell("2.00× [1.90, 2.10]")}};
  t.footnotes = {"50% of x & y"};
  return t;
}

TEST(Table, Markdown) {
  EXPECT_EQ(to_markdown(small()),
            "**Demo**\n\n"
            "| Method | TTFT (s) | Speedup |\n"
            "| :--- | ---: | :---: |\n"
            "| base_line | 1.10 ± 0.10 | 1.00× |\n"
            "| a\\|b, \"c\" | — | 2.00× [1.90, 2.10] |\n"
            "\n"
            "Note: 50% of x & y\n");
}

TEST(Table, Csv) {
  EXPECT_EQ(to_csv(small()),
            "Method,TTFT (s),Speedup\n"
            "base_line,1.10 ± 0.10,1.00×\n"
            "\"a|b, \"\"c\"\"\",—,\"2.00× [1.90, 2.10]\"\n");
}

TEST(Table, LatexBooktabs) {
  EXPECT_EQ(to_latex(small()),
            "% Demo\n"
            "\\begin{tabular}{lrc}\n"
            "\\toprule\n"
            "Method & TTFT (s) & Speedup \\\\\n"
            "\\midrule\n"
            "base\\_line & 1.10 $\\pm$ 0.10 & 1.00$\\times$ \\\\\n"
            "a|b, \"c\" & --- & 2.00$\\times$ [1.90, 2.10] \\\\\n"
            "\\bottomrule\n"
            "\\end{tabular}\n"
            "\\par{\\footnotesize 50\\% of x \\& y}\n");
}

TEST(Table, Json) {
  const auto j = to_json(small());
  EXPECT_EQ(j["title"], "Demo");
  EXPECT_EQ(j["columns"][1]["key"], "ttft");
  EXPECT_EQ(j["columns"][1]["align"], "right");
  EXPECT_EQ(j["rows"][0]["method"], "base_line");
  EXPECT_EQ(j["rows"][0]["ttft"]["mean"], 1.1);
  EXPECT_TRUE(j["rows"][1]["ttft"].is_null());
  EXPECT_EQ(j["rows"][1]["speedup"], "2.00× [1.90, 2.10]");
  EXPECT_EQ(j["footnotes"][0], "50% of x & y");
  EXPECT_EQ(nlohmann::json::parse(render(small(), Format::Json)), j);
}

TEST(Table, RejectsRaggedRowsAndUnknownFormats) {
  Table t = small();
  t.rows[0].pop_back();
  EXPECT_THROW(to_markdown(t), std::logic_error);
  EXPECT_THROW(parse_format("html"), std::invalid_argument);
  EXPECT_EQ(parse_format("tex"), Format::Latex);
}

}  // namespace
}  // namespace accel::reports
