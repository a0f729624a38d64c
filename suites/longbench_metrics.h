// Every metric of THUDM/LongBench's LongBench/metrics.py and the per-sample and per-task rules of
// its eval.py, over code points (Python str semantics, longbench_text.h). Exact ports, bit for
// bit; where metrics.py calls jieba (qa_f1_zh_score, rouge_zh_score) the text is cut by a
// ZhSegmenter (longbench_segmenter.h): jieba 0.42.1's own cut unless segmenter=char is asked for.
#pragma once
#include <optional>
#include <string_view>
#include <vector>

#include "suites/fuzz_ratio.h"
#include "suites/longbench_segmenter.h"
#include "suites/longbench_tasks.h"
#include "suites/longbench_unicode.h"

namespace accel::longbench {

// How rouge_score treats the reference's Python recursion. pltrdy `rouge` rebuilds each
// longest common subsequence with a recursive function, one Python frame per step of the
// backtrack; when the frames on the stack reach sys.getrecursionlimit() (1000 by default) it
// raises RecursionError, which rouge_score's bare `except:` turns into a score of 0.0. That
// happens for long sentences (there is no "." in Chinese text, so a whole vcsum summary is one
// sentence). With `recursion_limit` > 0 we return 0.0 exactly when CPython, running eval.py as
// a script, would: when base_frames + backtrack steps + 1 > recursion_limit, where base_frames is
// the number of frames below the first recursive call, <module> included (9 for rouge_score
// called by eval.py's scorer, 10 through rouge_zh_score). Checked against CPython 3.11 at the
// boundary (990 backtrack steps score, 991 give 0.0). 0 turns the emulation off (the
// mathematically intended ROUGE-L).
struct RougeOptions {
  int recursion_limit = 1000;
};

// The scoring choices the suite exposes as parameters: the ROUGE recursion emulation and the
// backend of fuzz.ratio (code_sim_score): difflib, LongBench's official setup, or
// python-Levenshtein, what fuzzywuzzy uses wherever that package is installed.
struct MetricOptions {
  RougeOptions rouge;
  FuzzBackend fuzz = FuzzBackend::Difflib;
};

// f1_score over token lists (multiset overlap); 0 when nothing overlaps. The _zh metrics cut with
// `zh`; its default is jieba's cut with the data jieba::locate_data() finds (never the character
// cut unless asked for).
double f1_tokens(const std::vector<U32>& prediction, const std::vector<U32>& ground_truth);
double qa_f1_score(std::u32string_view prediction, std::u32string_view ground_truth);
double qa_f1_zh_score(std::u32string_view prediction, std::u32string_view ground_truth,
                      const ZhSegmenter& zh = {});
// Rouge().get_scores([prediction], [ground_truth], avg=True)["rouge-l"]["f"], 0.0 on any
// exception (an empty hypothesis or reference after splitting on "."); see RougeOptions.
double rouge_score(std::u32string_view prediction, std::u32string_view ground_truth,
                   const RougeOptions& opt = {}, int base_frames = 9);
// " ".join(jieba.cut(...)) on both, then rouge_score (one frame deeper).
double rouge_zh_score(std::u32string_view prediction, std::u32string_view ground_truth,
                      const RougeOptions& opt = {}, const ZhSegmenter& zh = {});
// Class names of `all_classes` found in the prediction, less those that are substrings of (but
// not equal to) the gold label, removed from the list while iterating over it as metrics.py does
// (an element right after a removed one is skipped); 1/len(list) if the gold label is left in it.
double classification_score(std::u32string_view prediction, std::u32string_view ground_truth,
                            const std::vector<U32>& all_classes);
// Share of the numbers (\d+) in the prediction equal to the gold paragraph id, the first
// "Paragraph (\d+)" ("段落(\d+)" for _zh) of the gold answer. Throws std::invalid_argument when
// the gold answer has none (metrics.py raises IndexError there).
double retrieval_score(std::u32string_view prediction, std::u32string_view ground_truth);
double retrieval_zh_score(std::u32string_view prediction, std::u32string_view ground_truth);
// Share of the numbers (\d+) in the prediction equal, as strings, to the gold count.
double count_score(std::u32string_view prediction, std::u32string_view ground_truth);
// fuzz.ratio(first line containing none of ` # //, gold) / 100 (fuzz_ratio.h); "" when no line
// qualifies.
double code_sim_score(std::u32string_view prediction, std::u32string_view ground_truth,
                      FuzzBackend fuzz = FuzzBackend::Difflib);

// The gold paragraph id retrieval_score compares against, or nullopt (the reference would crash).
std::optional<U32> gold_paragraph_id(std::u32string_view ground_truth, bool zh);

// dataset2metric[task](prediction, ground_truth, all_classes=...); `zh` cuts for the _zh metrics.
double metric_score(Metric m, std::u32string_view prediction, std::u32string_view ground_truth,
                    const std::vector<U32>& all_classes, const MetricOptions& opt = {},
                    const ZhSegmenter& zh = {});

// eval.py's per-sample score: the first-line rule for trec/triviaqa/samsum/lsht, then the max of
// the metric over the gold answers (0.0 when there are none).
double sample_score(const TaskInfo& task, std::u32string_view prediction,
                    const std::vector<U32>& answers, const std::vector<U32>& all_classes,
                    const MetricOptions& opt = {}, const ZhSegmenter& zh = {});

// eval.py scorer: round(100 * sum / n, 2) with the sum taken in order. NaN when empty.
double task_score(const std::vector<double>& sample_scores);
// eval.py scorer_e per bucket: round(100 * np.mean(scores), 2), np.mean being numpy's pairwise
// sum (blocks of 8 accumulators up to 128 elements, halves above) divided by n. NaN when empty
// (numpy returns NaN for an empty mean).
double bucket_score(const std::vector<double>& sample_scores);
// numpy's pairwise summation of float64 (np.add.reduce on a contiguous 1-D array).
double numpy_pairwise_sum(const double* a, size_t n);
// Python's round(x, 2): the nearest multiple of 0.01 to the exact binary value, ties to even.
double py_round2(double x);

}  // namespace accel::longbench
