// The 21 tasks of LongBench v1 as THUDM/LongBench's LongBench/ folder defines them: prompt
// template (config/dataset2prompt.json), generation budget (config/dataset2maxlen.json), metric
// (eval.py dataset2metric), category and language (task.md), whether the task is in LongBench-E
// (pred.py --e), eval.py's first-line rule and pred.py's chat-template exemption.
#pragma once
#include <span>
#include <string>
#include <string_view>

namespace accel::longbench {

enum class Metric {
  QaF1,            // qa_f1_score
  QaF1Zh,          // qa_f1_zh_score
  Rouge,           // rouge_score
  RougeZh,         // rouge_zh_score
  Classification,  // classification_score
  Retrieval,       // retrieval_score
  RetrievalZh,     // retrieval_zh_score
  Count,           // count_score
  CodeSim,         // code_sim_score
};
const char* metric_function_name(Metric m);  // "qa_f1_score", ...

struct TaskInfo {
  std::string_view name;      // the file stem and eval.py's key, e.g. "multifieldqa_en"
  std::string_view category;  // README/task.md category, e.g. "Single-Document QA"
  std::string_view language;  // "en", "zh" or "code"
  std::string_view prompt;    // dataset2prompt.json: a Python format string over {context}, {input}
  int max_gen = 0;            // dataset2maxlen.json
  Metric metric = Metric::QaF1;
  bool in_e = false;        // one of LongBench-E's 13 tasks (files <task>_e.jsonl)
  bool first_line = false;  // eval.py keeps prediction.lstrip('\n').split('\n')[0]
  bool no_chat = false;     // pred.py does not apply the chat template (completion-style)
};

// The 21 tasks in pred.py's order.
std::span<const TaskInfo> all_tasks();
// The task named `name`, or nullptr.
const TaskInfo* find_task(std::string_view name);
// pred.py's `prompt_format.format(**json_obj)` for templates whose only fields are {context}
// and {input}: each placeholder replaced by the record's text, which is not re-scanned.
std::string format_prompt(const TaskInfo& t, std::string_view context, std::string_view input);

// eval.py scorer_e's buckets of the record's `length`: "0-4k" (< 4000), "4-8k" (< 8000), "8k+".
std::string_view length_bucket(long long length);

}  // namespace accel::longbench
