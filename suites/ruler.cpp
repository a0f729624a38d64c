// The RULER suite (ruler.h): parameters, the sample of (task, index, seed, model) and scoring.
#include "suites/ruler.h"

#include <memory>
#include <stdexcept>

#include "suites/ruler_corpus.h"
#include "suites/ruler_metrics.h"
#include "suites/ruler_niah.h"
#include "suites/ruler_other.h"
#include "suites/ruler_qa.h"
#include "suites/ruler_tasks.h"
#include "suites/ruler_text.h"

namespace accel {

using namespace ruler;

namespace {

constexpr const char* kGgufTemplate = "gguf";

// The chat template's rendering of one user turn with the generation prompt, split at the turn's
// content: what comes before it and after it.
std::pair<std::string, std::string> user_turn_frame(const ChatTemplate& t) {
  const ChatMessage user{"user", "\x01"};
  const std::string rendered = t.apply({&user, 1}, true);
  const size_t at = rendered.find('\x01');
  return {rendered.substr(0, at), rendered.substr(at + 1)};
}

// The model's chat template as a RULER model template: the task as one user turn with the
// generation prompt, "{task_template}" where the task goes and every other brace doubled, since
// py_format reads the result as a Python format string.
std::string gguf_model_template(const ChatTemplate& t) {
  const auto [head, tail] = user_turn_frame(t);
  std::string out;
  for (const std::string* part : {&head, &tail}) {
    if (part == &tail) out += "{task_template}";
    for (const char c : *part) out += c == '{' || c == '}' ? std::string(2, c) : std::string(1, c);
  }
  return out;
}

// The chat turns a gguf-templated sample's text renders from: the task inside the frame as the
// user turn, and the answer prefix (after the generation prompt) as the opening of the assistant
// turn. Empty when `input` is not framed so (the sample then has no chat form).
std::vector<ChatMessage> chat_turns(const ChatTemplate& t, const RulerRecord& r) {
  const auto [head, tail] = user_turn_frame(t);
  const std::string& in = r.input;
  if (in.size() < head.size() + tail.size() || in.compare(0, head.size(), head) != 0 ||
      in.compare(in.size() - tail.size(), tail.size(), tail) != 0)
    return {};
  std::vector<ChatMessage> turns = {
      {"user", in.substr(head.size(), in.size() - head.size() - tail.size())}};
  if (!r.answer_prefix.empty()) turns.push_back({"assistant", r.answer_prefix});
  return turns;
}

constexpr int kNumQaFree = 11;  // the tasks before qa_1 in ruler_tasks()

// The task and RULER index of sample `index`.
std::pair<const TaskConfig*, int> task_of(const std::string& choice, int index) {
  if (choice == "all" || choice == "synthetic") {
    const int n = choice == "all" ? int(ruler_tasks().size()) : kNumQaFree;
    return {&ruler_tasks()[size_t(index % n)], index / n};
  }
  return {find_ruler_task(choice), index};
}

bool metric_is_part(const TaskConfig& t) {
  return t.generator == Generator::Qa;
}

}  // namespace

std::string RulerSuite::version() const {
  return "1+ruler-c3f5e3b.essay-words.rule-sentences";
}

std::string RulerSuite::summary() const {
  return "RULER (NVIDIA/RULER c3f5e3b), 13 tasks generated as its scripts do, sized in the model's "
         "tokenizer so that input + generation fits the context; string_match_all / "
         "string_match_part. Offline substitutes: words from the essays (not wonderwords), "
         "rule-based sentence splitting (not nltk punkt)";
}

std::vector<ParamSpec> RulerSuite::params() const {
  std::vector<std::string> tasks;
  for (const auto& t : ruler_tasks()) tasks.emplace_back(t.name);
  tasks.push_back("all");
  tasks.push_back("synthetic");
  std::vector<std::string> templates;
  for (const auto& [name, text] : model_templates()) templates.emplace_back(name);
  templates.emplace_back(kGgufTemplate);
  const auto text = [](const char* name, const char* help) {
    return ParamSpec{name, ParamSpec::Kind::Text, "", 0, 0, false, {}, help};
  };
  return {
      {"task", ParamSpec::Kind::Choice, "niah_single_1", 0, 0, false, tasks,
       "RULER task; all: sample i takes task i % 13 (RULER index i / 13); synthetic: the 11 "
       "without qa likewise"},
      text("data",
           "Paul Graham essays (file or directory of .txt files, e.g. ../shared/data/niah; a "
           "suffix #bytes=START:END keeps that byte range, e.g. a model's held-out essays): the "
           "essay haystack and, in place of wonderwords, the word lists of every task with "
           "word keys and cwe"),
      text("squad", "SQuAD v2.0 dev JSON (dev-v2.0.json) for qa_1"),
      text("hotpotqa", "HotpotQA dev distractor JSON (hotpot_dev_distractor_v1.json) for qa_2"),
      {"model_template", ParamSpec::Kind::Choice, "base", 0, 0, false, templates,
       "RULER model template around the task (template.py); the answer prefix follows it. "
       "gguf: the evaluated model's own tokenizer.chat_template (recognised families only, see "
       "models/chat_template.h), the task as one user turn and the answer prefix inside the "
       "assistant turn; the family is recorded in the sample's model_template"}};
}

std::vector<MetricSpec> RulerSuite::metrics() const {
  return {{"ruler.score", true, Aggregation::Mean,
           "the task's RULER metric (string_match_all; qa: string_match_part), 0-100 per sample; "
           "the mean is RULER's task score"},
          {"ruler.string_match_all", true, Aggregation::Mean,
           "share of references found in the prediction (case-insensitive), 0-100"},
          {"ruler.string_match_part", true, Aggregation::Mean,
           "100 when any reference is found in the prediction (case-insensitive), else 0"},
          {"ruler.null", false, Aggregation::Sum,
           "1 when the post-processed prediction is empty (RULER's Nulls)"}};
}

std::optional<TaskSummary> RulerSuite::task_summary() const {
  TaskSummary t;
  t.task_metric = "ruler.score";
  for (const auto& task : ruler::ruler_tasks()) t.tasks.emplace_back(task.name);
  t.overall = "RULER average over tasks";
  t.length_weighted = true;
  return t;
}

Sample RulerSuite::make_sample(int context_len, int index, uint64_t seed, const SuiteContext& ctx,
                               const nlohmann::json& params) const {
  if (index < 0) throw std::invalid_argument("suite 'ruler': negative sample index");
  const auto [task, ruler_index] = task_of(params.at("task").get<std::string>(), index);
  if (!task) throw std::invalid_argument("suite 'ruler': unknown task");
  const std::string who = "suite 'ruler': " + std::string(task->name);
  if (!ctx.tokenizer)
    throw std::invalid_argument(who + ": the model has no tokenizer (RULER is text)");
  const uint64_t ruler_seed = seed + uint64_t(ruler_index);
  if (ruler_seed < seed || ruler_seed > 0xffffffffull)
    throw std::invalid_argument(who +
                                ": seed + sample index must be below 2^32 (RULER seeds "
                                "numpy with it); got " +
                                std::to_string(seed) + " + " + std::to_string(ruler_index));
  const Tokenizer& tok = *ctx.tokenizer;

  std::string mt_name = params.at("model_template").get<std::string>();
  std::string mt;
  if (mt_name == kGgufTemplate) {
    if (!ctx.chat_template)
      throw std::invalid_argument(who +
                                  ": model_template 'gguf' needs the model's chat template (" +
                                  ctx.chat_template_note + ")");
    mt = gguf_model_template(*ctx.chat_template);
    mt_name += std::string(":") + chat_family_name(ctx.chat_template->family());
  }
  for (const auto& [name, text] : model_templates())
    if (name == mt_name) mt = text;
  const GeneratorTemplate& gt = generator_template(task->generator);

  RulerArgs a;
  a.who = who;
  a.max_seq_length = context_len;
  a.tokens_to_generate = gt.tokens_to_generate;
  a.random_seed = ruler_seed;
  a.model_template_name = mt_name;
  a.template_text = py_format(mt, {{"task_template", std::string(gt.task_template)}}) +
                    std::string(gt.answer_prefix);
  a.count_tokens = [&tok](const std::string& s) { return tok.encode(s, false, true).size(); };
  // The BOS we prepend counts against the length, unless the model template spells it.
  const std::string mt_head(mt.substr(0, mt.find("{task_template}")));
  const std::vector<int32_t> head_ids =
      mt_head.empty() ? std::vector<int32_t>{} : tok.encode(mt_head, false, true);
  const bool template_has_bos = ctx.bos >= 0 && !head_ids.empty() && head_ids.front() == ctx.bos;
  const int n_bos = ctx.bos >= 0 && !template_has_bos ? 1 : 0;
  a.model_template_token = n_bos;

  RulerRecord r;
  std::shared_ptr<const EssayCorpus> essays;
  if (needs_essays(*task)) essays = load_essays(params.at("data").get<std::string>(), who);
  switch (task->generator) {
    case Generator::Niah: {
      NiahInputs in;
      if (essays) in.essay = &essays->haystack, in.words = &essays->words;
      r = generate_niah(*task, a, in);
      break;
    }
    case Generator::VariableTracking:
      r = generate_vt(*task, a);
      break;
    case Generator::CommonWords:
      r = generate_cwe(*task, a, essays->words);
      break;
    case Generator::FreqWords:
      r = generate_fwe(*task, a);
      break;
    case Generator::Qa: {
      const std::string param = std::string(task->dataset);
      const std::string path = params.at(param).get<std::string>();
      if (path.empty())
        throw std::invalid_argument(who + ": needs the suite parameter '" + param + "' (" +
                                    (param == "squad" ? "SQuAD v2.0 dev-v2.0.json"
                                                      : "HotpotQA hotpot_dev_distractor_v1.json") +
                                    ")");
      r = generate_qa(a, *load_qa(param, path, who), size_t(ruler_index));
      break;
    }
  }

  Sample s;
  s.id = std::string(task->name) + "-" + std::to_string(ruler_index);
  if (n_bos) s.prompt.push_back(ctx.bos);
  const std::vector<int32_t> body = tok.encode(r.input + r.answer_prefix, false, true);
  s.prompt.insert(s.prompt.end(), body.begin(), body.end());
  if (mt_name.rfind(kGgufTemplate, 0) == 0) s.messages = chat_turns(*ctx.chat_template, r);
  s.max_new_tokens = a.tokens_to_generate;
  if (s.prompt.size() + size_t(s.max_new_tokens) > size_t(context_len))
    throw std::logic_error(who + ": sample exceeds the length budget");
  s.reference = r.outputs;
  s.meta = std::move(r.meta);
  s.meta["task"] = task->name;
  s.meta["ruler_seed"] = ruler_seed;
  s.meta["model_template"] = mt_name;
  s.meta["input"] = r.input;
  s.meta["answer_prefix"] = r.answer_prefix;
  s.meta["length"] = r.length;
  s.meta["length_w_model_temp"] = r.length + n_bos;
  s.meta["metric"] = metric_is_part(*task) ? "string_match_part" : "string_match_all";
  return s;
}

Scores ruler_scores(const std::string& task, const std::string& prediction,
                    const std::vector<std::string>& references) {
  const TaskConfig* t = find_ruler_task(task);
  if (!t) throw std::invalid_argument("suite 'ruler': unknown task '" + task + "'");
  const std::string pred = postprocess_pred(prediction);
  const double all = 100 * match_all(pred, references);
  const double part = 100 * match_part(pred, references);
  return {{"ruler.score", metric_is_part(*t) ? part : all},
          {"ruler.string_match_all", all},
          {"ruler.string_match_part", part},
          {"ruler.null", pred.empty() ? 1.0 : 0.0}};
}

Scores RulerSuite::score(const Sample& s, const Generation& out, const Generation*,
                         const SuiteContext& ctx, const nlohmann::json&) const {
  if (!ctx.tokenizer)
    throw std::invalid_argument("suite 'ruler': sample '" + s.id +
                                "': the model has no tokenizer to decode the generation with");
  const std::string text = ctx.tokenizer->decode(out.tokens);
  return ruler_scores(s.meta.at("task").get<std::string>(), text,
                      s.reference.get<std::vector<std::string>>());
}

}  // namespace accel
