// The LongBench v1 suite (THUDM/LongBench, LongBench/ folder): the 21 tasks' records read from
// the official JSONL files (longbench_data.h), prompted with each task's template, cut in the
// middle in the evaluated model's tokenizer as pred.py does, generated for the task's budget, and
// scored with metrics.py's metric under eval.py's rules (longbench_metrics.h). LongBench-E reads
// the `<task>_e.jsonl` files and also scores by length bucket. Chinese text is cut as metrics.py
// cuts it, by jieba 0.42.1 with its dictionary and HMM (jieba_segmenter.h), read from Debian's
// python3-jieba; segmenter=char selects a character-level approximation by name.
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "suites/longbench_tasks.h"
#include "suites/suite.h"

namespace accel {

// Params: data_dir (the folder of <task>.jsonl files; required), tasks ("all" or a
// comma-separated list, taken in order: sample i is the i-th record of their concatenation),
// longbench_e (read <task>_e.jsonl, LongBench-E's 13 tasks), chat_format (none | llama2: pred.py's
// "[INST]{prompt}[/INST]", not applied to trec, triviaqa, samsum, lsht, lcc, repobench-p),
// rouge_recursion_limit (see longbench::RougeOptions; 0 = off), fuzz (difflib | levenshtein: the
// fuzz.ratio backend of code_sim_score, see fuzz_ratio.h; difflib is the official setup),
// segmenter (jieba | char: how the jieba-using tasks multifieldqa_zh, dureader and vcsum cut
// Chinese; jieba, the reference, by default), jieba_dir (jieba's data folder; "" =
// $ACCELBENCH_JIEBA_DIR, else the python3-jieba package path). With segmenter=jieba those tasks
// are refused, naming the paths looked at, when jieba's data is missing.
// The case's context length is pred.py's max_length (model2maxlen.json: 3500 for a 4K model): a
// prompt longer than that many tokens keeps its first and last max_length/2 tokens.
// Metrics: "longbench.<task>" (per-sample score x 100; its mean is eval.py's task score before
// rounding to 2 decimals) and, for LongBench-E, "longbench.<task>.<0-4k|4-8k|8k+>".
class LongBenchSuite : public Suite {
 public:
  std::string name() const override { return "longbench"; }
  // 3: Chinese text is cut by jieba (1-zhchar cut Han runs per character) and the `fuzz`
  // parameter (code_sim_score's backend) joined the params.
  std::string version() const override { return "3"; }
  std::string summary() const override;
  std::vector<ParamSpec> params() const override;
  std::vector<MetricSpec> metrics() const override;
  // Task score = round(mean longbench.<task>, 2) as eval.py; the README's category means (and
  // per-language means) average task scores; the overall mean averages every task.
  std::optional<TaskSummary> task_summary() const override;
  Sample make_sample(int context_len, int index, uint64_t seed, const SuiteContext& ctx,
                     const nlohmann::json& params) const override;
  // Decodes the generation with the model's tokenizer (ctx.tokenizer) as prediction_text() says,
  // then scores it as score_prediction() does.
  Scores score(const Sample& s, const Generation& out, const Generation* reference,
               const SuiteContext& ctx, const nlohmann::json& params) const override;

  // What score() does once the generation is text: eval.py's per-sample score (x 100) under the
  // sample's task metric name, and its bucket metric for LongBench-E.
  Scores score_prediction(const Sample& s, std::string_view prediction,
                          const nlohmann::json& params) const;
  // The prediction text pred.py would have written for these generated tokens: cut before the
  // first EOS (and, for samsum, before a newline token other than the first token: pred.py stops
  // on "\n" there with min_length forbidding a stop at the first token), decoded without special
  // tokens, ill-formed UTF-8 replaced by U+FFFD.
  static std::string prediction_text(const Sample& s, const std::vector<int32_t>& tokens,
                                     const Tokenizer& tok);
};

namespace longbench {
// The tasks a `tasks` parameter names, in order; throws std::invalid_argument naming unknown
// tasks, or tasks outside LongBench-E when `e`.
std::vector<const TaskInfo*> parse_task_list(const std::string& tasks, bool e);
// pred.py's middle truncation: when `ids` (already encoded with BOS as the model adds it) has more
// than max_length tokens, the text of its first and last int(max_length / 2) tokens, each decoded
// without special tokens (ill-formed UTF-8 replaced), concatenated; otherwise nullopt.
std::optional<std::string> middle_truncate(const std::vector<int32_t>& ids, int max_length,
                                           const Tokenizer& tok);
}  // namespace longbench

}  // namespace accel
