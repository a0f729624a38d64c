// LongBench's metrics and eval.py rules. Hand-worked cases follow metrics.py, pltrdy rouge 1.0.1
// and eval.py; every expected value was also produced at development time by running those Python
// definitions (CPython 3.11, numpy 1.24) and pasted here as a constant, bit for bit. The Chinese
// cases here use the per-character segmenter (segmenter=char, longbench_text.h), so they check
// the port around the cut and need no jieba data; jieba_test.cpp checks the metrics with jieba's
// own cut against Python. Then each metric is checked against a plain reimplementation written here
// from the definitions on a few hundred generated (prediction, answer) pairs.
#include "suites/longbench_metrics.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <set>

#include "suites/longbench_text.h"

namespace accel::longbench {
namespace {

U32 u(std::string_view s) {
  return utf8_decode_lossy(s);
}
const ZhSegmenter kChars{ZhSegmenter::Kind::Char, ""};

std::vector<U32> us(const std::vector<std::string>& v) {
  std::vector<U32> out;
  for (const auto& s : v) out.push_back(u(s));
  return out;
}

struct HandCase {
  Metric metric;
  std::string prediction, ground_truth;
  std::vector<std::string> all_classes;
  double want;
  const char* why;
};

TEST(LongBenchMetrics, HandWorkedCasesEqualTheReferenceBitForBit) {
  const std::vector<HandCase> cases = {
      // qa_f1_score: normalisation, then multiset F1 over split() tokens.
      {Metric::QaF1,
       "The Wiki-103 corpus.",
       "Wiki-103",
       {},
       0.6666666666666666,
       "wiki103 corpus vs wiki103: P 1/2, R 1"},
      {Metric::QaF1, "an apple a day", "Apple", {}, 0.6666666666666666, "articles dropped"},
      {Metric::QaF1, "theater", "the ater", {}, 0.0, "'the' inside a word is not an article"},
      {Metric::QaF1, "\u201cParis\u201d", "Paris", {}, 0.0, "curly quotes are not punctuation"},
      {Metric::QaF1, "Éva", "éva", {}, 1.0, "non-ASCII lowercase"},
      {Metric::QaF1, "", "x", {}, 0.0, "empty prediction"},
      {Metric::QaF1, "the", "a", {}, 0.0, "both normalise to nothing: num_same 0"},
      {Metric::QaF1, "éa", "é", {}, 0.0, "Unicode \\b: the a of éa stays"},
      {Metric::QaF1, "x x y", "x y y", {}, 0.6666666666666666, "multiset overlap 2 of 3"},
      {Metric::QaF1, "ΟΔΟΣ", "οδος", {}, 1.0, "final sigma"},
      {Metric::QaF1, "ΟΔΟΣ", "οδοσ", {}, 0.0, "final sigma is not σ"},
      {Metric::QaF1, "İ", "i\u0307", {}, 1.0, "full lowercase mapping"},
      // qa_f1_zh_score (per-character segmentation here: segmenter=char).
      {Metric::QaF1Zh, "北京", "北京清华大学", {}, 0.5, "P 1, R 2/6"},
      {Metric::QaF1Zh, "北京，清华！", "北京清华", {}, 1.0, "punctuation tokens dropped"},
      {Metric::QaF1Zh, "Hello 世界", "hello世界", {}, 1.0, "lowercase; whitespace token dropped"},
      {Metric::QaF1Zh, "。！", "北京", {}, 0.0, "only punctuation"},
      // rouge_score: pltrdy's summary-level union LCS over "."-sentences, distinct words.
      {Metric::Rouge, "", "x", {}, 0.0, "empty hypothesis raises: 0"},
      {Metric::Rouge, "...", "x", {}, 0.0, "no sentence left after splitting on '.'"},
      {Metric::Rouge,
       "the cat sat. on the mat",
       "the cat sat on the mat",
       {},
       0.999999995,
       "5 distinct words each side, union LCS 5: 2*(1*1)/(2+1e-8)"},
      {Metric::Rouge,
       "a. .",
       "a",
       {},
       0.6666666622222223,
       "the blank piece ' ' becomes sentence '' with word '': n 2, m 1, lcs 1"},
      {Metric::Rouge, "The Cat", "the cat", {}, 0.0, "no lowercasing"},
      {Metric::Rouge, "a a a b", "a b", {}, 0.999999995, "distinct words: n 2, m 2, lcs 2"},
      {Metric::Rouge,
       "police killed the gunman. the gunman was shot",
       "the gunman was shot dead by police.",
       {},
       0.6153846104142012,
       "union of LCS {the gunman} and {the gunman was shot}: 4; P 4/6, R 4/7"},
      {Metric::Rouge,
       "b a",
       "a b. a",
       {},
       0.999999995,
       "tie in the backtrack of 'a b' vs 'b a' goes left and keeps 'b'; with 'a' from the second "
       "sentence the union is {a, b}"},
      {Metric::Rouge,
       "a b. a",
       "b a",
       {},
       0.4999999950000001,
       "reversed: the LCS of each pair is 'a' (the left move keeps 'a'): union {a}, P 1/2, R 1/2"},
      {Metric::RougeZh, "北京大学", "北京清华大学", {}, 0.7999999952000001, "chars: P 1, R 4/6"},
      {Metric::RougeZh, "", "北京", {}, 0.0, "empty"},
      // classification_score, with metrics.py's remove-while-iterating.
      {Metric::Classification,
       "Date and Dat at",
       "Date",
       {"Date", "Dat", "at", "Time"},
       0.5,
       "removing 'Dat' makes the loop skip 'at', which stays: 1/2"},
      {Metric::Classification, "It is a City.", "City", {"City", "Country", "Reason"}, 1.0, ""},
      {Metric::Classification, "City or Country", "City", {"City", "Country", "Reason"}, 0.5, ""},
      {Metric::Classification, "Reason", "City", {"City", "Country", "Reason"}, 0.0, ""},
      // retrieval and count: share of the \d+ numbers equal to the gold id / count.
      {Metric::Retrieval, "Paragraph 2", "Paragraph 2", {}, 1.0, ""},
      {Metric::Retrieval, "Paragraph 2 or 12 or 3", "Paragraph 2", {}, 0.3333333333333333, ""},
      {Metric::Retrieval, "none", "Paragraph 2", {}, 0.0, "no numbers"},
      {Metric::Retrieval,
       "Paragraph \uff12",
       "Paragraph 2",
       {},
       0.0,
       "a fullwidth 2 is a \\d number, unequal to '2'"},
      {Metric::RetrievalZh, "答案是段落2", "段落2", {}, 1.0, ""},
      {Metric::Count, "There are 2 unique paragraphs out of 3", "2", {}, 0.5, ""},
      {Metric::Count, "02", "2", {}, 0.0, "compared as strings"},
      // code_sim_score: first line without ` # //, fuzz.ratio / 100.
      {Metric::CodeSim,
       "```python\n    return math.pi * r * r\n```",
       "    return math.pi * r * r",
       {},
       1.0,
       "the fence line is skipped"},
      {Metric::CodeSim, "\n\n# comment\nreturn x", "return x", {}, 1.0, "leading newlines"},
      {Metric::CodeSim, "// only", "return x", {}, 0.0, "no line qualifies: empty"},
      {Metric::CodeSim, "#", "", {}, 1.0, "empty equals empty: fuzz.ratio 100"},
      {Metric::CodeSim, "return self.name", "return self._name", {}, 0.97, "97 / 100"},
  };
  for (const HandCase& c : cases) {
    SCOPED_TRACE(std::string(metric_function_name(c.metric)) + "(" + c.prediction + ", " +
                 c.ground_truth + "): " + c.why);
    EXPECT_EQ(
        metric_score(c.metric, u(c.prediction), u(c.ground_truth), us(c.all_classes), {}, kChars),
        c.want);
  }
}

TEST(LongBenchMetrics, RetrievalGoldWithoutParagraphIdIsAnError) {
  EXPECT_THROW(retrieval_score(U"1", U"no id here"), std::invalid_argument);
  EXPECT_THROW(retrieval_zh_score(U"1", U"Paragraph 1"), std::invalid_argument);
  EXPECT_EQ(*gold_paragraph_id(U"see Paragraph x, Paragraph 12", false), U"12");
}

TEST(LongBenchMetrics, RougeRecursionLimitAsCPythonAtTheBoundary) {
  // Hypothesis "zzz w0 ... w(n-1)" against "zzz": the backtrack walks left n + 1 steps. CPython
  // 3.11 (eval.py's stack: 9 frames below the first _recon) scores 990 steps and raises at 991;
  // through rouge_zh_score one frame deeper, 989 and 990 (cut per character here, so that the
  // word count is plain).
  const auto hyp = [](int words) {
    U32 s = U"zzz";
    for (int i = 0; i + 1 < words; ++i) s += U" w" + u(std::to_string(i));
    return s;
  };
  EXPECT_EQ(rouge_score(hyp(990), U"zzz"), 0.0020181634510799012);  // CPython's value
  EXPECT_EQ(rouge_score(hyp(991), U"zzz"), 0.0);
  EXPECT_GT(rouge_score(hyp(991), U"zzz", RougeOptions{0}), 0.0);  // emulation off
  EXPECT_EQ(rouge_zh_score(U"北" + U32(988, U'我'), U"北", {}, kChars),
            0.6666666622222223);  // 989 steps
  EXPECT_EQ(rouge_zh_score(U"北" + U32(989, U'我'), U"北", {}, kChars), 0.0);
}

TEST(LongBenchScoring, SampleScoreAppliesFirstLineAndMaxOverAnswers) {
  const TaskInfo& trec = *find_task("trec");
  const std::vector<U32> classes = us({"City", "Country", "Reason"});
  // First line only for trec: the second line's "Reason" does not count.
  EXPECT_EQ(sample_score(trec, U"\n\nCity\nReason", us({"City"}), classes), 1.0);
  EXPECT_EQ(sample_score(trec, U"City Reason", us({"City"}), classes), 0.5);
  // No first-line rule for qasper; max over the answers.
  const TaskInfo& qasper = *find_task("qasper");
  EXPECT_EQ(sample_score(qasper, U"no\nyes", us({"no"}), {}), 0.6666666666666666);
  EXPECT_EQ(sample_score(qasper, U"Wiki-103", us({"the Wiki-103 corpus", "Wiki-103"}), {}), 1.0);
  EXPECT_EQ(sample_score(qasper, U"x", {}, {}), 0.0);  // no answers: 0
  const TaskInfo& triviaqa = *find_task("triviaqa");
  EXPECT_EQ(sample_score(triviaqa, U"Paris\nAnswer: Lyon", us({"Lyon"}), {}), 0.0);
}

TEST(LongBenchScoring, TaskAndBucketScoresRoundLikePython) {
  EXPECT_EQ(py_round2(2.675), 2.67);  // the binary value is below 2.675
  EXPECT_EQ(py_round2(0.125), 0.12);  // exact tie: even
  EXPECT_EQ(py_round2(0.375), 0.38);
  EXPECT_EQ(py_round2(33.335), 33.34);
  EXPECT_TRUE(std::isnan(task_score({})));
  EXPECT_EQ(task_score({1.0, 0.5, 0.0}), 50.0);
  EXPECT_EQ(task_score({1.0 / 3, 1.0 / 3, 1.0 / 3}), 33.33);
  // 129 scores where numpy's pairwise sum (66.08666666666667) differs from the sequential sum
  // (66.08666666666663): numpy 1.24 gives np.mean 0.5122997416020673, rounded 51.23.
  const double c[7] = {0.0, 1.0, 1.0 / 3, 2.0 / 3, 0.5, 0.97, 0.123456789};
  std::vector<double> v;
  for (int i = 0; i < 129; ++i) v.push_back(c[(i * i + 3 * i) % 7]);
  EXPECT_EQ(numpy_pairwise_sum(v.data(), v.size()), 66.08666666666667);
  double seq = 0;
  for (double x : v) seq += x;
  EXPECT_EQ(seq, 66.08666666666663);
  EXPECT_EQ(bucket_score(v), 51.23);
  EXPECT_TRUE(std::isnan(bucket_score({})));
  EXPECT_EQ(length_bucket(3999), "0-4k");
  EXPECT_EQ(length_bucket(4000), "4-8k");
  EXPECT_EQ(length_bucket(7999), "4-8k");
  EXPECT_EQ(length_bucket(8000), "8k+");
}

// ---- Plain reimplementations, written from the reference definitions without the ported code.

U32 plain_normalize(const U32& s) {
  const U32 punct = U"!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~";
  U32 t;
  for (char32_t c : py_lower(s))
    if (punct.find(c) == U32::npos) t.push_back(c);
  // Tokenize into word runs and single non-word characters, drop whole-word articles.
  U32 r;
  for (size_t i = 0; i < t.size();) {
    size_t j = i;
    while (j < t.size() && py_isword(t[j])) ++j;
    if (j == i) {
      r.push_back(t[i++]);
      continue;
    }
    const U32 w = t.substr(i, j - i);
    r += (w == U"a" || w == U"an" || w == U"the") ? U32(U" ") : w;
    i = j;
  }
  U32 out, cur;
  for (char32_t c : r + U" ") {
    if (py_isspace(c)) {
      if (!cur.empty()) out += (out.empty() ? U"" : U" ") + cur;
      cur.clear();
    } else {
      cur.push_back(c);
    }
  }
  return out;
}

std::vector<U32> plain_words(const U32& s) {
  std::vector<U32> out;
  U32 cur;
  for (char32_t c : s + U" ") {
    if (py_isspace(c)) {
      if (!cur.empty()) out.push_back(cur);
      cur.clear();
    } else {
      cur.push_back(c);
    }
  }
  return out;
}

double plain_f1(std::vector<U32> p, std::vector<U32> g) {
  std::sort(p.begin(), p.end());
  std::sort(g.begin(), g.end());
  std::vector<U32> common;
  std::set_intersection(p.begin(), p.end(), g.begin(), g.end(), std::back_inserter(common));
  if (common.empty()) return 0;
  const double prec = 1.0 * double(common.size()) / double(p.size());
  const double rec = 1.0 * double(common.size()) / double(g.size());
  return (2 * prec * rec) / (prec + rec);
}

std::vector<U32> plain_sentences(const U32& s) {
  std::vector<U32> out;
  size_t b = 0;
  for (size_t i = 0; i <= s.size(); ++i) {
    if (i < s.size() && s[i] != U'.') continue;
    const U32 piece = s.substr(b, i - b);
    if (!piece.empty()) {
      U32 j;
      for (const U32& w : plain_words(piece)) j += (j.empty() ? U"" : U" ") + w;
      out.push_back(j);
    }
    b = i + 1;
  }
  return out;
}

std::vector<U32> split_space(const U32& s) {
  std::vector<U32> out(1);
  for (char32_t c : s) {
    if (c == U' ')
      out.emplace_back();
    else
      out.back().push_back(c);
  }
  return out;
}

// The reference's recursive reconstruction, literally.
void recon(const std::vector<U32>& x, const std::vector<U32>& y,
           const std::vector<std::vector<int>>& t, size_t i, size_t j, std::set<U32>& out) {
  if (i == 0 || j == 0) return;
  if (x[i - 1] == y[j - 1]) {
    out.insert(x[i - 1]);
    recon(x, y, t, i - 1, j - 1, out);
  } else if (t[i - 1][j] > t[i][j - 1]) {
    recon(x, y, t, i - 1, j, out);
  } else {
    recon(x, y, t, i, j - 1, out);
  }
}

double plain_rouge(const U32& hyp, const U32& ref) {
  const auto hs = plain_sentences(hyp), rs = plain_sentences(ref);
  if (hs.empty() || rs.empty()) return 0.0;
  std::set<U32> hw, rw, uni;
  for (const auto& s : hs)
    for (const auto& w : split_space(s)) hw.insert(w);
  for (const auto& s : rs)
    for (const auto& w : split_space(s)) rw.insert(w);
  for (const auto& r : rs)
    for (const auto& h : hs) {
      const auto x = split_space(r), y = split_space(h);
      std::vector<std::vector<int>> t(x.size() + 1, std::vector<int>(y.size() + 1, 0));
      for (size_t i = 1; i <= x.size(); ++i)
        for (size_t j = 1; j <= y.size(); ++j)
          t[i][j] = x[i - 1] == y[j - 1] ? t[i - 1][j - 1] + 1 : std::max(t[i - 1][j], t[i][j - 1]);
      recon(x, y, t, x.size(), y.size(), uni);
    }
  const double r = double(uni.size()) / double(rw.size()),
               p = double(uni.size()) / double(hw.size());
  return 2.0 * ((p * r) / (p + r + 1e-8));
}

double plain_classification(const U32& pred, const U32& gt, const std::vector<U32>& classes) {
  std::vector<U32> em;
  for (const auto& c : classes)
    if (pred.find(c) != U32::npos) em.push_back(c);
  // Python's list iterator: an index that advances whatever the loop body did.
  size_t it = 0;
  while (it < em.size()) {
    const U32 term = em[it++];
    if (gt.find(term) != U32::npos && term != gt)
      for (size_t k = 0; k < em.size(); ++k)
        if (em[k] == term) {
          em.erase(em.begin() + ptrdiff_t(k));
          break;
        }
  }
  size_t hits = 0;
  for (const auto& x : em) hits += x == gt;
  return hits ? 1.0 / double(em.size()) : 0.0;
}

double plain_number_share(const U32& pred, const U32& target) {
  size_t n = 0, right = 0;
  U32 cur;
  for (char32_t c : pred + U" ") {
    if (py_isdecimal(c)) {
      cur.push_back(c);
    } else if (!cur.empty()) {
      ++n;
      right += cur == target;
      cur.clear();
    }
  }
  return n ? double(right) / double(n) : 0.0;
}

size_t plain_matches(const U32& a, const U32& b) {
  size_t best = 0, bi = 0, bj = 0;
  for (size_t i = 0; i < a.size(); ++i)
    for (size_t j = 0; j < b.size(); ++j) {
      size_t k = 0;
      while (i + k < a.size() && j + k < b.size() && a[i + k] == b[j + k]) ++k;
      if (k > best) best = k, bi = i, bj = j;
    }
  if (!best) return 0;
  return best + plain_matches(a.substr(0, bi), b.substr(0, bj)) +
         plain_matches(a.substr(bi + best), b.substr(bj + best));
}

double plain_code_sim(const U32& pred, const U32& gt) {  // gt shorter than 200: no autojunk
  U32 line;
  size_t s = 0;
  while (s < pred.size() && pred[s] == U'\n') ++s;
  U32 rest = pred.substr(s) + U"\n";
  for (size_t b = 0, e; (e = rest.find(U'\n', b)) != U32::npos; b = e + 1) {
    const U32 l = rest.substr(b, e - b);
    if (l.find(U'`') == U32::npos && l.find(U'#') == U32::npos && l.find(U"//") == U32::npos) {
      line = l;
      break;
    }
  }
  if (line == gt) return 1.0;
  if (line.empty() || gt.empty()) return 0.0;
  const double ratio = 2.0 * double(plain_matches(line, gt)) / double(line.size() + gt.size());
  return double(int(std::nearbyint(100 * ratio))) / 100;  // FE_TONEAREST: ties to even
}

U32 random_text(std::mt19937_64& rng, int max_words) {
  static const std::vector<std::string> pool = {
      "the",     "a",      "an",      "The",      "An",     "cat",    "Cat",       "dog",
      "théâtre", "Éva",    "naïve",   "x_y",      "ΣΑΣ",    "ΟΔΟΣ",   "İstanbul",  "Paris",
      "paris",   "Paris.", "(Paris)", "“Paris”",  "don't",  "U.S.A",  "3",         "42",
      "٣",       "１２",   "e.g.",    "...",      ".",      "-",      "#",         "//",
      "`",       "\n",     "\t",      " ",        "\u3000", "\u00a0", "Paragraph", "Paragraph 3",
      "段落",    "段落12", "北京",    "清华大学", "我",     "，",     "。",        "！",
      "abc3.5%", "v1.2.3", "a1",      "+",        "ß",      "ǅ",      "日本",      "\r\n",
      "x=1;",    "return", "foo(bar)"};
  static const std::vector<std::string> seps = {" ", " ", " ", "", ".", ". ", "\n", "  ", ", "};
  U32 out;
  const int n = int(rng() % uint64_t(max_words + 1));
  for (int i = 0; i < n; ++i) out += u(pool[rng() % pool.size()]) + u(seps[rng() % seps.size()]);
  return out;
}

TEST(LongBenchMetrics, AgreeWithPlainReimplementationsOnGeneratedPairs) {
  std::mt19937_64 rng(2024);
  const std::vector<U32> class_pool = us({"cat", "Cat", "ca", "dog", "do", "Paris", "at"});
  int checked = 0;
  for (int t = 0; t < 600; ++t) {
    const U32 pred = random_text(rng, 12), gt = random_text(rng, 6);
    SCOPED_TRACE("case " + std::to_string(t) + ": " + utf8_encode(pred) + " | " + utf8_encode(gt));
    ASSERT_EQ(qa_f1_score(pred, gt),
              plain_f1(plain_words(plain_normalize(pred)), plain_words(plain_normalize(gt))));
    ASSERT_EQ(rouge_score(pred, gt), plain_rouge(pred, gt));
    std::vector<U32> classes;
    for (const auto& c : class_pool)
      if (rng() % 2) classes.push_back(c);
    std::shuffle(classes.begin(), classes.end(), rng);
    const U32 label = classes.empty() || rng() % 5 == 0 ? gt : classes[rng() % classes.size()];
    ASSERT_EQ(classification_score(pred, label, classes),
              plain_classification(pred, label, classes));
    const U32 id = u(std::to_string(rng() % 31));
    // The first "Paragraph N" of the gold answer is the id (later ones are ignored).
    ASSERT_EQ(retrieval_score(pred, U"Paragraph " + id + U" " + gt), plain_number_share(pred, id));
    ASSERT_EQ(count_score(pred, id), plain_number_share(pred, id));
    ASSERT_EQ(code_sim_score(pred, gt), plain_code_sim(pred, gt));
    checked += 6;
  }
  EXPECT_EQ(checked, 3600);
}

}  // namespace
}  // namespace accel::longbench
