// LongBench's metrics and scoring rules (longbench_metrics.h). Each function names the
// metrics.py / eval.py / pltrdy rouge statements it reproduces.
#include "suites/longbench_metrics.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <stdexcept>

#include "suites/longbench_text.h"

namespace accel::longbench {

namespace {

// pltrdy rouge Rouge._get_avg_scores: [" ".join(_.split()) for _ in s.split(".") if len(_) > 0].
// A piece of only whitespace survives the filter and becomes "", whose one word is "".
std::vector<U32> rouge_sentences(std::u32string_view s) {
  std::vector<U32> out;
  for (const U32& piece : py_split(s, U".")) {
    if (piece.empty()) continue;
    U32 joined;
    for (const U32& w : py_split_whitespace(piece)) {
      if (!joined.empty()) joined.push_back(U' ');
      joined += w;
    }
    out.push_back(std::move(joined));
  }
  return out;
}

// Word ids shared by all sentences of one comparison (words compare as strings in Python).
struct Vocab {
  std::map<U32, int> ids;
  std::vector<int> words(std::u32string_view sentence) {  // _split_into_words: split(" ")
    std::vector<int> out;
    for (const U32& w : py_split(sentence, U" "))
      out.push_back(ids.emplace(w, int(ids.size())).first->second);
    return out;
  }
};

// _recon_lcs(x, y): the LCS that rouge_score.py's _recon backtrack yields (on a tie it moves
// left, j - 1), as word ids; nullopt when the backtrack would hit Python's recursion limit.
std::optional<std::vector<int>> recon_lcs(const std::vector<int>& x, const std::vector<int>& y,
                                          int recursion_limit, int base_frames) {
  const size_t n = x.size(), m = y.size(), w = m + 1;
  // Every step lowers i or j (or both) and the walk ends when either is 0, so it takes at least
  // min(n, m) steps: decide the RecursionError before building the table when that suffices.
  if (recursion_limit > 0 && double(base_frames) + double(std::min(n, m)) + 1 > recursion_limit)
    return std::nullopt;
  if (double(n + 1) * double(w) > 1e9)
    throw std::length_error("rouge_score: sentences of " + std::to_string(n) + " and " +
                            std::to_string(m) + " words are too long to score");
  std::vector<int> table((n + 1) * w, 0);  // _lcs: table[i, j], (n + 1) x (m + 1)
  for (size_t i = 1; i <= n; ++i)
    for (size_t j = 1; j <= m; ++j)
      table[i * w + j] = x[i - 1] == y[j - 1]
                             ? table[(i - 1) * w + j - 1] + 1
                             : std::max(table[(i - 1) * w + j], table[i * w + j - 1]);
  std::vector<int> rev;
  size_t i = n, j = m, steps = 0;
  while (i > 0 && j > 0) {
    ++steps;
    if (x[i - 1] == y[j - 1]) {
      rev.push_back(x[i - 1]);
      --i;
      --j;
    } else if (table[(i - 1) * w + j] > table[i * w + j - 1]) {
      --i;
    } else {
      --j;
    }
  }
  // Frames on the stack at the deepest call: base_frames below the first _recon, then one
  // _recon frame per step plus the final one that returns [].
  if (recursion_limit > 0 && double(base_frames) + double(steps) + 1 > recursion_limit)
    return std::nullopt;
  return std::vector<int>(rev.rbegin(), rev.rend());
}

// rouge_score.rouge_l_summary_level(hyp, ref)["f"] (exclusive=True: word sets), or nullopt
// where Python would raise.
std::optional<double> rouge_l_summary_level(const std::vector<U32>& hyp,
                                            const std::vector<U32>& ref, const RougeOptions& opt,
                                            int base_frames) {
  if (hyp.empty() || ref.empty()) return std::nullopt;  // "Collections must contain ..."
  Vocab v;
  std::vector<std::vector<int>> hw, rw;
  for (const U32& s : hyp) hw.push_back(v.words(s));
  for (const U32& s : ref) rw.push_back(v.words(s));
  std::vector<char> in_ref(v.ids.size(), 0), in_hyp(v.ids.size(), 0), in_union(v.ids.size(), 0);
  size_t m = 0, n = 0, llcs = 0;
  for (const auto& s : rw)
    for (int id : s) m += in_ref[size_t(id)] ? 0 : (in_ref[size_t(id)] = 1);
  for (const auto& s : hw)
    for (int id : s) n += in_hyp[size_t(id)] ? 0 : (in_hyp[size_t(id)] = 1);
  // The union over every (reference sentence, hypothesis sentence) pair of the LCS word sets;
  // its size is the sum of _union_lcs's new_lcs_count over the reference sentences.
  for (const auto& r : rw) {
    for (const auto& h : hw) {
      const auto lcs = recon_lcs(r, h, opt.recursion_limit, base_frames);
      if (!lcs) return std::nullopt;  // RecursionError
      for (int id : *lcs) llcs += in_union[size_t(id)] ? 0 : (in_union[size_t(id)] = 1);
    }
  }
  const double r_lcs = double(llcs) / double(m);
  const double p_lcs = double(llcs) / double(n);
  return 2.0 * ((p_lcs * r_lcs) / (p_lcs + r_lcs + 1e-8));
}

std::optional<U32> paragraph_id(std::u32string_view gt, std::u32string_view prefix) {
  // re.findall(prefix + r"(\d+)", gt)[0]: the leftmost occurrence followed by a digit.
  for (size_t p = gt.find(prefix); p != std::u32string_view::npos; p = gt.find(prefix, p + 1)) {
    size_t e = p + prefix.size();
    const size_t b = e;
    while (e < gt.size() && py_isdecimal(gt[e])) ++e;
    if (e > b) return U32(gt.substr(b, e - b));
  }
  return std::nullopt;
}

// The fraction of numbers in the prediction equal to `target` (count_score, retrieval_score).
double number_share(std::u32string_view prediction, std::u32string_view target) {
  const std::vector<U32> numbers = findall_digits(prediction);
  size_t right = 0;
  for (const U32& x : numbers) right += x == target ? 1 : 0;
  return numbers.empty() ? 0.0 : double(right) / double(numbers.size());
}

}  // namespace

double f1_tokens(const std::vector<U32>& prediction, const std::vector<U32>& ground_truth) {
  std::map<U32, long> pc, gc;
  for (const U32& t : prediction) ++pc[t];
  for (const U32& t : ground_truth) ++gc[t];
  long same = 0;  // sum((Counter(p) & Counter(g)).values())
  for (const auto& [tok, c] : pc)
    if (const auto it = gc.find(tok); it != gc.end()) same += std::min(c, it->second);
  if (same == 0) return 0;
  const double precision = 1.0 * double(same) / double(prediction.size());
  const double recall = 1.0 * double(same) / double(ground_truth.size());
  return (2 * precision * recall) / (precision + recall);
}

double qa_f1_score(std::u32string_view prediction, std::u32string_view ground_truth) {
  return f1_tokens(py_split_whitespace(normalize_answer(prediction)),
                   py_split_whitespace(normalize_answer(ground_truth)));
}

double qa_f1_zh_score(std::u32string_view prediction, std::u32string_view ground_truth,
                      const ZhSegmenter& zh) {
  const auto tokens = [&zh](std::u32string_view s) {
    std::vector<U32> out;
    for (const U32& t : zh.cut(s))
      if (U32 n = normalize_zh_answer(t); !n.empty()) out.push_back(std::move(n));
    return out;
  };
  return f1_tokens(tokens(prediction), tokens(ground_truth));
}

double rouge_score(std::u32string_view prediction, std::u32string_view ground_truth,
                   const RougeOptions& opt, int base_frames) {
  // get_scores also computes rouge-1 and rouge-2 first; they raise only where rouge-l does
  // (an empty sentence list), so the result is rouge-l's f or 0.0. avg over one pair: f / 1.
  const auto f = rouge_l_summary_level(rouge_sentences(prediction), rouge_sentences(ground_truth),
                                       opt, base_frames);
  return f ? *f : 0.0;
}

double rouge_zh_score(std::u32string_view prediction, std::u32string_view ground_truth,
                      const RougeOptions& opt, const ZhSegmenter& zh) {
  const auto joined = [&zh](std::u32string_view s) {
    U32 out;
    bool first = true;
    for (const U32& t : zh.cut(s)) {
      if (!first) out.push_back(U' ');
      out += t;
      first = false;
    }
    return out;
  };
  return rouge_score(joined(prediction), joined(ground_truth), opt, 10);
}

double classification_score(std::u32string_view prediction, std::u32string_view ground_truth,
                            const std::vector<U32>& all_classes) {
  std::vector<U32> em;
  for (const U32& c : all_classes)
    if (py_contains(prediction, c)) em.push_back(c);
  // for match_term in em_match_list: ... em_match_list.remove(match_term): the list iterator is
  // an index, so after a removal (of the first equal element, at or before it) the element that
  // slides into the current slot is not visited.
  for (size_t idx = 0; idx < em.size(); ++idx) {
    const U32 term = em[idx];
    if (py_contains(ground_truth, term) && term != ground_truth)
      em.erase(std::find(em.begin(), em.end(), term));
  }
  if (std::find(em.begin(), em.end(), ground_truth) == em.end()) return 0.0;
  return 1.0 / double(em.size());
}

std::optional<U32> gold_paragraph_id(std::u32string_view ground_truth, bool zh) {
  return paragraph_id(ground_truth, zh ? std::u32string_view(U"段落") : U"Paragraph ");
}

double retrieval_score(std::u32string_view prediction, std::u32string_view ground_truth) {
  const auto id = gold_paragraph_id(ground_truth, false);
  if (!id) throw std::invalid_argument("retrieval_score: no 'Paragraph N' in the gold answer");
  return number_share(prediction, *id);
}

double retrieval_zh_score(std::u32string_view prediction, std::u32string_view ground_truth) {
  const auto id = gold_paragraph_id(ground_truth, true);
  if (!id) throw std::invalid_argument("retrieval_zh_score: no '段落N' in the gold answer");
  return number_share(prediction, *id);
}

double count_score(std::u32string_view prediction, std::u32string_view ground_truth) {
  return number_share(prediction, ground_truth);
}

double code_sim_score(std::u32string_view prediction, std::u32string_view ground_truth,
                      FuzzBackend fuzz) {
  U32 line;
  for (const U32& l : py_split(py_lstrip(prediction, U'\n'), U"\n")) {
    if (!py_contains(l, U"`") && !py_contains(l, U"#") && !py_contains(l, U"//")) {
      line = l;
      break;
    }
  }
  return double(fuzz_ratio(line, ground_truth, fuzz)) / 100;
}

double metric_score(Metric m, std::u32string_view prediction, std::u32string_view ground_truth,
                    const std::vector<U32>& all_classes, const MetricOptions& opt,
                    const ZhSegmenter& zh) {
  switch (m) {
    case Metric::QaF1:
      return qa_f1_score(prediction, ground_truth);
    case Metric::QaF1Zh:
      return qa_f1_zh_score(prediction, ground_truth, zh);
    case Metric::Rouge:
      return rouge_score(prediction, ground_truth, opt.rouge);
    case Metric::RougeZh:
      return rouge_zh_score(prediction, ground_truth, opt.rouge, zh);
    case Metric::Classification:
      return classification_score(prediction, ground_truth, all_classes);
    case Metric::Retrieval:
      return retrieval_score(prediction, ground_truth);
    case Metric::RetrievalZh:
      return retrieval_zh_score(prediction, ground_truth);
    case Metric::Count:
      return count_score(prediction, ground_truth);
    case Metric::CodeSim:
      return code_sim_score(prediction, ground_truth, opt.fuzz);
  }
  throw std::logic_error("longbench: unknown metric");
}

double sample_score(const TaskInfo& task, std::u32string_view prediction,
                    const std::vector<U32>& answers, const std::vector<U32>& all_classes,
                    const MetricOptions& opt, const ZhSegmenter& zh) {
  const U32 pred = task.first_line ? first_line(prediction) : U32(prediction);
  double score = 0.0;
  for (const U32& gt : answers)
    score = std::max(score, metric_score(task.metric, pred, gt, all_classes, opt, zh));
  return score;
}

double numpy_pairwise_sum(const double* a, size_t n) {
  if (n < 8) {
    double res = 0.;
    for (size_t i = 0; i < n; ++i) res += a[i];
    return res;
  }
  if (n <= 128) {
    double r[8];
    for (size_t j = 0; j < 8; ++j) r[j] = a[j];
    size_t i = 8;
    for (; i < n - (n % 8); i += 8)
      for (size_t j = 0; j < 8; ++j) r[j] += a[i + j];
    double res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
    for (; i < n; ++i) res += a[i];
    return res;
  }
  size_t n2 = n / 2;
  n2 -= n2 % 8;
  return numpy_pairwise_sum(a, n2) + numpy_pairwise_sum(a + n2, n - n2);
}

double py_round2(double x) {
  if (!std::isfinite(x)) return x;
  // glibc prints the exact binary value rounded half-to-even, as CPython's round(x, 2) does
  // through its correctly rounded dtoa.
  char buf[512];
  std::snprintf(buf, sizeof buf, "%.2f", x);
  return std::strtod(buf, nullptr);
}

double task_score(const std::vector<double>& s) {
  if (s.empty()) return NAN;
  double total = 0.;
  for (double x : s) total += x;
  return py_round2(100 * total / double(s.size()));
}

double bucket_score(const std::vector<double>& s) {
  if (s.empty()) return NAN;
  return py_round2(100 * (numpy_pairwise_sum(s.data(), s.size()) / double(s.size())));
}

}  // namespace accel::longbench
