// The Suite interface (in the style of lm-evaluation-harness tasks): a named, versioned workload
// that makes samples for a context length and seed, and scores a generation into named metrics
// that declare their direction and aggregation. Suites never see methods, runs or the store; the
// harness feeds them generations and stores what they return.
#pragma once
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "models/chat_template.h"
#include "models/param_spec.h"
#include "models/tokenizer.h"

namespace accel {

enum class Aggregation { Mean, Sum, Min, Max };
std::string aggregation_name(Aggregation a);  // "mean", "sum", "min", "max"

struct MetricSpec {
  std::string name;  // stored as-is in the trial's scores, e.g. "agreement.kl_mean"
  bool higher_is_better = true;
  Aggregation aggregation = Aggregation::Mean;
  std::string help;
};

// How a multi-task suite's reference combines per-sample scores into its headline numbers, stored
// with the run so reports apply it without the suite's code. A task's score is the mean of
// `task_metric` over the task's samples (the trial's sample_task), rounded to `round_decimals` as
// the reference rounds it; `overall` is the mean of the task scores; each group is the mean of
// its member tasks' scores; with `length_weighted`, the overall score is also averaged over
// context lengths plainly and with linearly increasing and decreasing weights (RULER's Avg,
// wAvg (inc), wAvg (dec)).
struct TaskSummary {
  std::string task_metric;  // "{task}" is replaced by the task's name, e.g. "longbench.{task}"
  int round_decimals = 2;   // -1: no rounding
  std::vector<std::string> tasks;  // every task of the full suite, in the reference's order
  std::string overall;             // label of the mean over tasks, e.g. "RULER average"
  std::vector<std::pair<std::string, std::vector<std::string>>> groups;  // label, member tasks
  bool length_weighted = false;
};
nlohmann::json to_json(const TaskSummary& t);

// What a suite may know of the evaluated model.
struct SuiteContext {
  int n_vocab = 0;
  int32_t bos = -1, eos = -1;
  const Tokenizer* tokenizer = nullptr;  // null when the model has no usable tokenizer
  // The model's recognised `tokenizer.chat_template` (null when it has none or it was not
  // recognised; chat_template_note then says which, for a suite that asks for it).
  const ChatTemplate* chat_template = nullptr;
  std::string chat_template_note;
};

struct Sample {
  std::string id;  // unique among the samples of one (context length, seed)
  std::vector<int32_t> prompt;
  // Set when `prompt` is these turns rendered with the model's chat template (a final assistant
  // turn is its opening, continued by the model) and tokenized whole: what a server that applies
  // the template itself is sent instead (Request::messages).
  std::vector<ChatMessage> messages;
  nlohmann::json reference = nullptr;  // expected answer(s); suite-defined
  nlohmann::json meta = nlohmann::json::object();
  int max_new_tokens = 0;  // 0: the plan's decode_tokens
  // ForcedContinuation only: the tokens both the method and the reference are teacher-forced on
  // (one logit row per token; row t predicts continuation[t]).
  std::vector<int32_t> continuation;
};

// What the reference method must provide before scoring: nothing; its greedy tokens over the same
// request; or its logits over `steps` decode steps, with the scored method teacher-forced on the
// reference's tokens so both distributions condition on the same prefix; or both runs'
// logits teacher-forced on the sample's own `continuation` (the scored method's run is scored
// even when it is the reference, e.g. for its perplexity).
struct ReferenceNeed {
  enum class Kind { None, Tokens, ForcedLogits, ForcedContinuation };
  Kind kind = Kind::None;
  int steps = 0;  // ForcedLogits and ForcedContinuation
};

// What scoring sees of one run.
struct Generation {
  std::vector<int32_t> tokens;
  std::vector<std::vector<float>> logits;  // per decode step (ForcedLogits only)
};

using Scores = std::map<std::string, double>;

class Suite {
 public:
  virtual ~Suite() = default;
  virtual std::string name() const = 0;
  // Bumped whenever the samples or the scoring change (stored with every trial).
  virtual std::string version() const = 0;
  virtual std::string summary() const = 0;
  virtual std::vector<ParamSpec> params() const { return {}; }
  virtual std::vector<MetricSpec> metrics() const = 0;
  // Sample `index` for `context_len` tokens; the same arguments give the same sample.
  virtual Sample make_sample(int context_len, int index, uint64_t seed, const SuiteContext& ctx,
                             const nlohmann::json& params) const = 0;
  virtual ReferenceNeed reference_need(const nlohmann::json& /*params*/) const { return {}; }
  // The official summary over tasks; null for suites without one.
  virtual std::optional<TaskSummary> task_summary() const { return std::nullopt; }
  // Scores one generation; `reference` is non-null exactly when reference_need() is not None and
  // the scored method is not the reference itself. With the Forced* kinds, `out` holds the
  // method's teacher-forced logits. `ctx` is the context make_sample() was given
  // for `s` (the evaluated model's), so a suite that scores text decodes `out` with
  // ctx.tokenizer. Returns only declared metric names.
  virtual Scores score(const Sample& s, const Generation& out, const Generation* reference,
                       const SuiteContext& ctx, const nlohmann::json& params) const = 0;
};

nlohmann::json resolve_suite_params(const Suite& s, const nlohmann::json& given);
const Suite& find_suite(const std::string& name);  // throws naming the known suites
std::vector<const Suite*> all_suites();

}  // namespace accel
