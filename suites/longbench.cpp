// The LongBench v1 suite (longbench.h): sample = one record of a task file, prompted and
// truncated as pred.py does; score = eval.py's per-sample score of the decoded generation.
#include "suites/longbench.h"

#include <algorithm>
#include <sstream>
#include <stdexcept>

#include "suites/jieba_data.h"
#include "suites/longbench_data.h"
#include "suites/longbench_metrics.h"
#include "suites/longbench_unicode.h"

namespace accel {

using longbench::TaskInfo;

namespace longbench {

std::vector<const TaskInfo*> parse_task_list(const std::string& tasks, bool e) {
  std::vector<const TaskInfo*> out;
  if (tasks == "all") {
    for (const TaskInfo& t : all_tasks())
      if (!e || t.in_e) out.push_back(&t);
    return out;
  }
  std::stringstream ss(tasks);
  for (std::string name; std::getline(ss, name, ',');) {
    name.erase(0, name.find_first_not_of(" \t"));
    name.erase(name.find_last_not_of(" \t") + 1);
    const TaskInfo* t = find_task(name);
    if (!t) {
      std::string known;
      for (const TaskInfo& k : all_tasks())
        known += (known.empty() ? "" : ", ") + std::string(k.name);
      throw std::invalid_argument("suite 'longbench': unknown task '" + name +
                                  "' (known: " + known + ")");
    }
    if (e && !t->in_e)
      throw std::invalid_argument("suite 'longbench': task '" + name +
                                  "' is not part of LongBench-E (longbench_e is set)");
    if (std::find(out.begin(), out.end(), t) != out.end())
      throw std::invalid_argument("suite 'longbench': task '" + name + "' named twice");
    out.push_back(t);
  }
  if (out.empty())
    throw std::invalid_argument("suite 'longbench': parameter 'tasks' names no task");
  return out;
}

std::optional<std::string> middle_truncate(const std::vector<int32_t>& ids, int max_length,
                                           const Tokenizer& tok) {
  if (ids.size() <= size_t(std::max(max_length, 0))) return std::nullopt;
  const size_t half = size_t(max_length / 2);  // int(max_length/2)
  const std::span<const int32_t> all(ids);
  return utf8_sanitize(tok.decode(all.first(half), false)) +
         utf8_sanitize(tok.decode(all.last(half), false));
}

}  // namespace longbench

namespace {

// Where sample `index` lives: the task and the record number in its file.
struct Located {
  const TaskInfo* task = nullptr;
  std::shared_ptr<const longbench::DataFile> file;
  size_t record = 0;
};

Located locate(const nlohmann::json& params, int index) {
  const std::string dir = params.at("data_dir").get<std::string>();
  if (dir.empty())
    throw std::invalid_argument(
        "suite 'longbench': parameter 'data_dir' is required: the folder of LongBench's "
        "<task>.jsonl files (THUDM/LongBench data.zip, extracted)");
  const bool e = params.at("longbench_e").get<bool>();
  if (index < 0) throw std::invalid_argument("suite 'longbench': negative sample index");
  size_t left = size_t(index), total = 0;
  for (const TaskInfo* t : longbench::parse_task_list(params.at("tasks").get<std::string>(), e)) {
    auto f = longbench::cached_index(longbench::task_file(dir, *t, e), *t);
    if (left < f->records.size()) return {t, std::move(f), left};
    left -= f->records.size();
    total += f->records.size();
  }
  throw std::invalid_argument("suite 'longbench': sample " + std::to_string(index) +
                              " is out of range: the selected tasks have " + std::to_string(total) +
                              " records");
}

bool uses_jieba(const TaskInfo& t) {  // metrics.py calls jieba.cut in these two metrics only
  return t.metric == longbench::Metric::QaF1Zh || t.metric == longbench::Metric::RougeZh;
}

longbench::ZhSegmenter zh_segmenter(const nlohmann::json& params) {
  longbench::ZhSegmenter zh;
  zh.kind = longbench::ZhSegmenter::parse_kind(params.at("segmenter").get<std::string>());
  zh.jieba_dir = params.at("jieba_dir").get<std::string>();
  return zh;
}

// Loads jieba's data (once per process) before a task that needs it is generated for, so a
// missing dictionary stops the run at its first such sample rather than at scoring time.
void require_segmenter(const TaskInfo& t, const nlohmann::json& params) {
  const longbench::ZhSegmenter zh = zh_segmenter(params);
  if (!uses_jieba(t) || zh.kind != longbench::ZhSegmenter::Kind::Jieba) return;
  try {
    jieba::shared_segmenter(zh.jieba_dir);
  } catch (const jieba::DataError& e) {
    throw std::invalid_argument(
        "suite 'longbench': task '" + std::string(t.name) +
        "' is scored with jieba's word segmentation, as metrics.py does: " + e.what() +
        ". The parameter jieba_dir also names the folder; segmenter=char scores without jieba "
        "(a character-level approximation, not the official score)");
  }
}

std::vector<longbench::U32> u32_list(const nlohmann::json& v) {
  std::vector<longbench::U32> out;
  if (v.is_array())
    for (const auto& x : v) out.push_back(longbench::utf8_decode_lossy(x.get<std::string>()));
  return out;
}

}  // namespace

std::string LongBenchSuite::summary() const {
  return "LongBench v1 (21 tasks, LongBench-E buckets) from the official JSONL files: official "
         "templates, generation budgets, middle truncation and metrics.py scoring (x100), "
         "Chinese cut by jieba 0.42.1 (segmenter=char: per character, an approximation)";
}

std::vector<ParamSpec> LongBenchSuite::params() const {
  return {
      {"data_dir",
       ParamSpec::Kind::Text,
       "",
       0,
       0,
       false,
       {},
       "folder of LongBench's <task>.jsonl (and <task>_e.jsonl) files; required"},
      {"tasks",
       ParamSpec::Kind::Text,
       "all",
       0,
       0,
       false,
       {},
       "all, or task names separated by commas (narrativeqa, qasper, ..., repobench-p); sample i "
       "is the i-th record of the tasks' files in that order"},
      {"longbench_e",
       ParamSpec::Kind::Bool,
       false,
       0,
       0,
       false,
       {},
       "LongBench-E: read <task>_e.jsonl (13 tasks) and add per-length-bucket metrics"},
      {"chat_format",
       ParamSpec::Kind::Choice,
       "none",
       0,
       0,
       false,
       {"none", "llama2", "gguf"},
       "none: the raw prompt; llama2: pred.py's [INST]prompt[/INST]; gguf: the model's own "
       "tokenizer.chat_template, the prompt as one user turn with the generation prompt "
       "(build_chat's role for a chat model; recognised families only); neither for trec, "
       "triviaqa, samsum, lsht, lcc, repobench-p"},
      {"rouge_recursion_limit",
       ParamSpec::Kind::Int,
       1000,
       0,
       1000000,
       false,
       {},
       "score 0 where pltrdy rouge's recursive LCS backtrack would exceed Python's recursion "
       "limit (CPython 3.11 frame accounting, as the reference scores); 0 = off"},
      {"fuzz",
       ParamSpec::Kind::Choice,
       "difflib",
       0,
       0,
       false,
       {"difflib", "levenshtein"},
       "fuzz.ratio backend of code_sim_score (lcc, repobench-p): difflib = fuzzywuzzy without "
       "python-Levenshtein, LongBench's requirements; levenshtein = python-Levenshtein 0.12.2's "
       "ratio, what fuzzywuzzy uses when that package is installed"},
      {"segmenter",
       ParamSpec::Kind::Choice,
       "jieba",
       0,
       0,
       false,
       {"jieba", "char"},
       "how the tasks whose metric calls jieba (multifieldqa_zh, dureader, vcsum) cut Chinese "
       "text: jieba (0.42.1's dictionary and "
       "HMM, as metrics.py; the official scores) or char (one token per Han character, an "
       "approximation whose scores are not the official ones)"},
      {"jieba_dir",
       ParamSpec::Kind::Text,
       "",
       0,
       0,
       false,
       {},
       "folder of jieba's dict.txt and finalseg/prob_*.py; empty: $ACCELBENCH_JIEBA_DIR, else "
       "python3-jieba's /usr/lib/python3/dist-packages/jieba"},
  };
}

std::vector<MetricSpec> LongBenchSuite::metrics() const {
  std::vector<MetricSpec> out;
  for (const TaskInfo& t : longbench::all_tasks())
    out.push_back({"longbench." + std::string(t.name), true, Aggregation::Mean,
                   std::string(t.category) + ", " + longbench::metric_function_name(t.metric) +
                       " x 100; the mean is eval.py's task score (which rounds it to 2 decimals)"});
  for (const TaskInfo& t : longbench::all_tasks()) {
    if (!t.in_e) continue;
    for (const char* b : {"0-4k", "4-8k", "8k+"})
      out.push_back({"longbench." + std::string(t.name) + "." + b, true, Aggregation::Mean,
                     std::string("LongBench-E ") + std::string(t.name) + ", records of length " +
                         b + " (eval.py scorer_e bucket)"});
  }
  return out;
}

std::optional<TaskSummary> LongBenchSuite::task_summary() const {
  TaskSummary t;
  t.task_metric = "longbench.{task}";
  t.overall = "LongBench average over tasks";
  auto add_to = [&t](const std::string& label, const std::string& task) {
    auto it = std::find_if(t.groups.begin(), t.groups.end(),
                           [&](const auto& g) { return g.first == label; });
    if (it == t.groups.end()) it = t.groups.insert(t.groups.end(), {label, {}});
    it->second.push_back(task);
  };
  for (const TaskInfo& task : longbench::all_tasks()) {
    t.tasks.emplace_back(task.name);
    add_to(std::string(task.category), std::string(task.name));
  }
  for (const TaskInfo& task : longbench::all_tasks())
    add_to("language " + std::string(task.language), std::string(task.name));
  return t;
}

Sample LongBenchSuite::make_sample(int context_len, int index, uint64_t /*seed*/,
                                   const SuiteContext& ctx, const nlohmann::json& params) const {
  if (!ctx.tokenizer)
    throw std::invalid_argument(
        "suite 'longbench': the model has no tokenizer (LongBench prompts "
        "are text)");
  if (context_len < 2)
    throw std::invalid_argument("suite 'longbench': context length " + std::to_string(context_len) +
                                " must be at least 2");
  const Tokenizer& tok = *ctx.tokenizer;
  const Located at = locate(params, index);
  const TaskInfo& task = *at.task;
  const bool e = params.at("longbench_e").get<bool>();
  const longbench::Record r = longbench::read_record(*at.file, at.record, task);
  require_segmenter(task, params);

  // pred.py: prompt_format.format(**json_obj); tokenizer(prompt) with the model's special tokens;
  // middle truncation to max_length; build_chat unless exempt; tokenizer(prompt) again.
  std::string prompt = longbench::format_prompt(task, r.context, r.input);
  const std::vector<int32_t> full = tok.encode(prompt, true, true);
  const auto cut = longbench::middle_truncate(full, context_len, tok);
  if (cut) prompt = *cut;
  const std::string chat = params.at("chat_format").get<std::string>();
  const bool wrap = chat != "none" && !task.no_chat;
  std::string chat_used = chat;
  std::vector<ChatMessage> messages;  // the gguf chat form of the prompt
  if (wrap && chat == "llama2") prompt = "[INST]" + prompt + "[/INST]";
  if (wrap && chat == "gguf") {
    if (!ctx.chat_template)
      throw std::invalid_argument(
          "suite 'longbench': chat_format 'gguf' needs the model's chat "
          "template (" +
          ctx.chat_template_note + ")");
    messages = {{"user", prompt}};
    prompt = ctx.chat_template->apply(messages, true);
    chat_used += std::string(":") + chat_family_name(ctx.chat_template->family());
  }

  Sample s;
  s.id = std::string(task.name) + (e ? "_e/" : "/") + std::to_string(at.record);
  s.prompt = tok.encode(prompt, true, true);
  s.messages = std::move(messages);
  // A template that writes bos_token itself: keep one BOS, not the tokenizer's second.
  if (s.prompt.size() >= 2 && ctx.bos >= 0 && s.prompt[0] == ctx.bos && s.prompt[1] == ctx.bos)
    s.prompt.erase(s.prompt.begin());
  s.max_new_tokens = task.max_gen;
  s.reference = {
      {"answers", r.answers}, {"all_classes", at.file->last_all_classes}, {"length", r.length}};
  std::vector<int32_t> stops;
  if (ctx.eos >= 0) stops.push_back(ctx.eos);
  nlohmann::json meta = {{"task", task.name},
                         {"category", task.category},
                         {"language", task.language},
                         {"record", at.record},
                         {"line", at.file->records[at.record].line_no},
                         {"_id", r.id},
                         {"length", r.length},
                         {"prompt_tokens_before_truncation", full.size()},
                         {"truncated", cut.has_value()},
                         {"chat_format", wrap ? chat_used : "none"},
                         {"stop_tokens", stops}};
  if (task.name == "samsum") {
    // eos_token_id=[eos, tokenizer.encode("\n", add_special_tokens=False)[-1]]
    const std::vector<int32_t> nl = tok.encode("\n", false, false);
    if (!nl.empty()) meta["newline_token"] = nl.back();
  }
  if (e) meta["bucket"] = longbench::length_bucket(r.length);
  s.meta = std::move(meta);
  return s;
}

std::string LongBenchSuite::prediction_text(const Sample& s, const std::vector<int32_t>& tokens,
                                            const Tokenizer& tok) {
  std::vector<int32_t> stops;
  for (const auto& t : s.meta.value("stop_tokens", nlohmann::json::array()))
    stops.push_back(t.get<int32_t>());
  const int32_t newline = s.meta.value("newline_token", int32_t(-1));
  size_t end = 0;
  for (; end < tokens.size(); ++end) {
    const int32_t t = tokens[end];
    if (std::find(stops.begin(), stops.end(), t) != stops.end()) break;
    if (newline >= 0 && t == newline && end > 0) break;  // min_length: not at the first token
  }
  const std::span<const int32_t> kept(tokens.data(), end);
  return longbench::utf8_sanitize(tok.decode(kept, false));
}

Scores LongBenchSuite::score_prediction(const Sample& s, std::string_view prediction,
                                        const nlohmann::json& params) const {
  const std::string name = s.meta.at("task").get<std::string>();
  const TaskInfo* task = longbench::find_task(name);
  if (!task)
    throw std::invalid_argument("suite 'longbench': sample of unknown task '" + name + "'");
  longbench::MetricOptions opt;
  opt.rouge.recursion_limit = params.at("rouge_recursion_limit").get<int>();
  opt.fuzz = parse_fuzz_backend(params.at("fuzz").get<std::string>());
  const double v = longbench::sample_score(
      *task, longbench::utf8_decode_lossy(prediction), u32_list(s.reference.at("answers")),
      u32_list(s.reference.at("all_classes")), opt, zh_segmenter(params));
  Scores out = {{"longbench." + name, 100 * v}};
  if (s.meta.contains("bucket"))
    out["longbench." + name + "." + s.meta.at("bucket").get<std::string>()] = 100 * v;
  return out;
}

Scores LongBenchSuite::score(const Sample& s, const Generation& out, const Generation*,
                             const SuiteContext& ctx, const nlohmann::json& params) const {
  if (!ctx.tokenizer)
    throw std::invalid_argument("suite 'longbench': sample '" + s.id +
                                "': the model has no tokenizer to decode the generation with");
  return score_prediction(s, prediction_text(s, out.tokens, *ctx.tokenizer), params);
}

}  // namespace accel
