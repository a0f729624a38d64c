// RULER's metrics: hand-worked cases from the reference definitions (evaluate.py postprocess_pred,
// constants.py string_match_all / string_match_part), 300 seeded pairs scored by RULER's own
// Python functions (fixtures/ruler_metric_cases.json, made by make_ruler_metric_cases.py), and a
// plain reimplementation on generated ASCII pairs.
#include "suites/ruler_metrics.h"

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <random>

#include "suites/ruler.h"

namespace accel::ruler {
namespace {

using Refs = std::vector<std::string>;

TEST(RulerMetrics, PostprocessStripsAndTurnsControlCharactersIntoNewlines) {
  EXPECT_EQ(postprocess_pred("  \x01"
                             "7046187\tand\x1f"
                             "x  "),
            "7046187\nand\nx");
  EXPECT_EQ(postprocess_pred("\n\n"), "");
  EXPECT_EQ(postprocess_pred("A, b. C!"), "A, b. C!");  // no punctuation or article removal
  EXPECT_EQ(postprocess_pred("\xe3\x80\x80"
                             "x"
                             "\xc2\xa0"),
            "x");                                           // Unicode whitespace
  EXPECT_EQ(postprocess_pred("ok\xff"), "ok\xef\xbf\xbd");  // invalid bytes as U+FFFD
}

TEST(RulerMetrics, MatchAllIsTheShareOfReferencesFoundCaseInsensitively) {
  EXPECT_EQ(match_all("The special magic number is 7046187.", {"7046187"}), 1.0);
  EXPECT_EQ(match_all("answer: ABCDE, fghij", {"abcde", "FGHIJ", "klmno", "pqrst"}), 0.5);
  EXPECT_EQ(match_all("1. owl 2. cat 3. dog", {"owl", "cat", "dog", "eel"}), 0.75);
  EXPECT_EQ(match_all("", {"x"}), 0.0);                           // an empty prediction
  EXPECT_EQ(match_all("anything", {""}), 1.0);                    // '' in s is True in Python
  EXPECT_EQ(match_all("rhône glacier", {"Rhône Glacier"}), 1.0);  // non-ASCII lowercase
  EXPECT_EQ(match_all("Theatre", {"the"}), 1.0);                  // substrings, not words
  EXPECT_EQ(match_all("7 046 187", {"7046187"}), 0.0);            // no normalisation of spaces
  EXPECT_EQ(match_all("x", {"a", "a", "x"}), 1.0 / 3.0);          // duplicates count twice
  EXPECT_THROW(match_all("x", {}), std::invalid_argument);
}

TEST(RulerMetrics, MatchPartIsOneWhenAnyReferenceIsFound) {
  EXPECT_EQ(match_part("It was built in 1871.", {"1871", "in 1871"}), 1.0);
  EXPECT_EQ(match_part("forty-one ships", {"41", "Forty-One"}), 1.0);
  EXPECT_EQ(match_part("no idea", {"1871", "in 1871"}), 0.0);
  EXPECT_EQ(match_part("", {"yes"}), 0.0);
}

TEST(RulerMetrics, TaskScoresAverageTimesHundredRoundedToTwoDecimals) {
  // (1 + 0.5 + 0) / 3 * 100 = 50.0; thirds give 33.33 / 66.67.
  EXPECT_EQ(string_match_all({"a b", "a", "z"}, {{"a", "b"}, {"a", "b"}, {"a"}}), 50.0);
  EXPECT_EQ(string_match_part({"a", "z", "z"}, {{"a"}, {"a"}, {"a"}}), 33.33);
  EXPECT_EQ(string_match_part({"a", "a", "z"}, {{"a"}, {"a"}, {"a"}}), 66.67);
  EXPECT_EQ(string_match_all({"x"}, {{"x", "y", "z"}}), 33.33);
  EXPECT_EQ(py_round(2.675, 2), 2.67);  // the binary value is below 2.675, as Python rounds it
  EXPECT_EQ(py_round(0.125, 2), 0.12);  // ties to even on an exact binary tie
  EXPECT_EQ(py_round(0.375, 2), 0.38);
}

TEST(RulerMetrics, AgreeWithRulersPythonOnThreeHundredPairs) {
  std::ifstream f(ACCELBENCH_SOURCE_DIR "/tests/suites/fixtures/ruler_metric_cases.json");
  ASSERT_TRUE(f) << "fixture ruler_metric_cases.json";
  const nlohmann::json j = nlohmann::json::parse(f);
  std::vector<std::string> preds;
  std::vector<Refs> refs;
  int both_nonzero = 0, nulls = 0;
  for (const auto& c : j["cases"]) {
    const std::string pred = postprocess_pred(c["raw"].get<std::string>());
    ASSERT_EQ(pred, c["pred"].get<std::string>()) << c.dump();
    const Refs r = c["refs"].get<Refs>();
    EXPECT_EQ(py_round(match_all(pred, r) * 100, 2), c["all"].get<double>()) << c.dump();
    EXPECT_EQ(py_round(match_part(pred, r) * 100, 2), c["part"].get<double>()) << c.dump();
    EXPECT_EQ(string_match_all({pred}, {r}), c["all"].get<double>()) << c.dump();
    both_nonzero += c["all"].get<double>() > 0;
    nulls += pred.empty();
    preds.push_back(pred);
    refs.push_back(r);
  }
  ASSERT_EQ(preds.size(), 300u);
  EXPECT_GT(both_nonzero, 50);  // the cases are not all misses
  EXPECT_GT(nulls, 10);         // and include empty predictions
  EXPECT_EQ(string_match_all(preds, refs), j["string_match_all"].get<double>());
  EXPECT_EQ(string_match_part(preds, refs), j["string_match_part"].get<double>());
  const std::vector<std::string> p7(preds.begin(), preds.begin() + 7);
  const std::vector<Refs> r7(refs.begin(), refs.begin() + 7);
  EXPECT_EQ(string_match_all(p7, r7), j["first_7_all"].get<double>());
  EXPECT_EQ(string_match_part(p7, r7), j["first_7_part"].get<double>());
}

// The definitions again, written plainly for ASCII: lowercase both, std::string::find.
double plain_all(std::string p, Refs refs) {
  for (char& c : p) c = char(std::tolower(uint8_t(c)));
  double hit = 0;
  for (auto r : refs) {
    for (char& c : r) c = char(std::tolower(uint8_t(c)));
    hit += p.find(r) != std::string::npos;
  }
  return hit / double(refs.size());
}

TEST(RulerMetrics, AgreeWithAPlainReimplementationOnGeneratedPairs) {
  std::mt19937 rng(11);
  const std::vector<std::string> atoms = {"a", "B", "ab", "AB", "7046187", "x-y", " ", "VAR QX"};
  const auto pick = [&] { return atoms[rng() % atoms.size()]; };
  int partial = 0;
  for (int i = 0; i < 400; ++i) {
    Refs refs(1 + rng() % 4);
    for (auto& r : refs) r = pick() + (rng() % 2 ? pick() : "");
    std::string pred;
    for (unsigned k = rng() % 6; k; --k) pred += pick();
    const std::string pp = postprocess_pred(pred);
    const double want = plain_all(pp, refs);
    EXPECT_EQ(match_all(pp, refs), want) << pred;
    EXPECT_EQ(match_part(pp, refs), want > 0 ? 1.0 : 0.0) << pred;
    partial += want > 0 && want < 1;
  }
  EXPECT_GT(partial, 20);
}

TEST(RulerMetrics, SuiteScoresUseTheTasksMetricAndCountNulls) {
  const Scores niah = ruler_scores("niah_multivalue", " 111, 222\n", {"111", "222", "333", "444"});
  EXPECT_EQ(niah.at("ruler.score"), 50.0);
  EXPECT_EQ(niah.at("ruler.string_match_all"), 50.0);
  EXPECT_EQ(niah.at("ruler.string_match_part"), 100.0);
  EXPECT_EQ(niah.at("ruler.null"), 0.0);
  const Scores qa = ruler_scores("qa_1", "in 1871", {"1871", "eighteen", "x"});
  EXPECT_EQ(qa.at("ruler.score"), 100.0);  // string_match_part: any reference
  EXPECT_NEAR(qa.at("ruler.string_match_all"), 100.0 / 3, 1e-12);
  EXPECT_EQ(ruler_scores("vt", " \x02 ", {"ABCDE"}).at("ruler.null"), 1.0);
  EXPECT_THROW(ruler_scores("nope", "", {"a"}), std::invalid_argument);
}

}  // namespace
}  // namespace accel::ruler
