// jieba's cut and LongBench's Chinese metrics against Python itself on thousands of generated
// cases: tests/suites/fixtures/make_jieba_cases.py (seeded) runs under /usr/bin/python3 with
// Debian's jieba 0.42.1 and prints, per (prediction, reference) pair, jieba.cut of both and
// metrics.py's qa_f1_zh_score (THUDM/LongBench 2e00731f, restated there). Token lists must be
// equal exactly and scores bit for bit (no tolerance: the port follows Python's floating-point
// order). pltrdy's `rouge` cannot be installed here, so rouge_zh_score is compared only when the
// script could import it (the project's rouge_score already equals pltrdy's bit for bit; what
// the Chinese version adds is the cut, compared on every case).
#include <gtest/gtest.h>

#include <cstdio>
#include <nlohmann/json.hpp>

#include "suites/jieba_data.h"
#include "suites/longbench_metrics.h"
#include "suites/longbench_text.h"
#include "tests/support/jieba_data.h"

namespace accel::jieba {
namespace {

std::string run_generator() {
  const std::string cmd = "/usr/bin/python3 " + std::string(ACCELBENCH_SOURCE_DIR) +
                          "/tests/suites/fixtures/make_jieba_cases.py --cases 6000";
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return "";
  std::string out;
  char buf[1 << 16];
  for (size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
  return pclose(p) == 0 ? out : "";
}

std::vector<std::u32string> u32s(const nlohmann::json& list) {
  std::vector<std::u32string> out;
  for (const auto& t : list) out.push_back(longbench::utf8_decode_lossy(t.get<std::string>()));
  return out;
}

TEST(JiebaReference, GeneratedCasesEqualPythonJiebaAndMetricsPy) {
  ACCEL_REQUIRE(test::missing_python_jieba());
  const std::string text = run_generator();
  ASSERT_FALSE(text.empty()) << "make_jieba_cases.py failed";
  const nlohmann::json doc = nlohmann::json::parse(text);
  ASSERT_EQ(doc.at("jieba_version"), "0.42.1");
  // The data Python used, so both sides read the same files.
  const std::string dir = doc.at("jieba_dir").get<std::string>();
  const Segmenter& seg = *shared_segmenter(dir);
  const longbench::ZhSegmenter zh{longbench::ZhSegmenter::Kind::Jieba, dir};
  const longbench::ZhSegmenter chars{longbench::ZhSegmenter::Kind::Char, ""};

  const auto& cases = doc.at("cases");
  ASSERT_GE(cases.size(), 5000u);
  size_t cut_equal = 0, f1_equal = 0, rouge_compared = 0, rouge_equal = 0, char_cut_differs = 0;
  double f1_jieba = 0, f1_char = 0;
  for (size_t i = 0; i < cases.size(); ++i) {
    const auto& c = cases[i];
    const std::u32string pred = longbench::utf8_decode_lossy(c.at("prediction").get<std::string>());
    const std::u32string ref = longbench::utf8_decode_lossy(c.at("reference").get<std::string>());
    const bool cuts_equal = seg.cut(pred) == u32s(c.at("cut_prediction")) &&
                            seg.cut(ref) == u32s(c.at("cut_reference"));
    cut_equal += cuts_equal;
    EXPECT_TRUE(cuts_equal) << "case " << i << ": " << c.dump();
    char_cut_differs += longbench::char_cut(ref) != seg.cut(ref);
    const double f1 = longbench::qa_f1_zh_score(pred, ref, zh);
    f1_equal += f1 == c.at("qa_f1_zh").get<double>();
    EXPECT_EQ(f1, c.at("qa_f1_zh").get<double>()) << "case " << i;
    f1_jieba += f1;
    f1_char += longbench::qa_f1_zh_score(pred, ref, chars);
    if (c.contains("rouge_zh")) {
      ++rouge_compared;
      const double r = longbench::rouge_zh_score(pred, ref, {}, zh);
      rouge_equal += r == c.at("rouge_zh").get<double>();
      EXPECT_EQ(r, c.at("rouge_zh").get<double>()) << "case " << i;
    }
  }
  std::printf(
      "[jieba] %zu cases: cuts equal %zu, qa_f1_zh equal %zu, rouge_zh equal %zu of %zu "
      "compared; the character cut differs from jieba on %zu references; mean qa_f1_zh x100: "
      "jieba %.2f, char %.2f\n",
      cases.size(), cut_equal, f1_equal, rouge_equal, rouge_compared, char_cut_differs,
      100 * f1_jieba / double(cases.size()), 100 * f1_char / double(cases.size()));
}

}  // namespace
}  // namespace accel::jieba
