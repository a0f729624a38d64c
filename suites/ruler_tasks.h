// RULER's 13 task configurations (scripts/synthetic.yaml), its five generator templates with their
// answer prefixes and generation budgets (scripts/data/synthetic/constants.py), its model templates
// (scripts/data/template.py), and what every generator shares: the arguments of one run, the record
// it returns, and the haystack sizing (binary search, then per-sample retries). Pinned to
// NVIDIA/RULER commit c3f5e3b.
#pragma once
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace accel::ruler {

enum class Generator { Niah, VariableTracking, CommonWords, FreqWords, Qa };
enum class Haystack { Noise, Essay, Needle };
enum class NeedleType { Words, Numbers, Uuids };

struct TaskConfig {
  std::string_view name;
  Generator generator = Generator::Niah;
  // niah
  Haystack haystack = Haystack::Essay;
  NeedleType key_type = NeedleType::Words, value_type = NeedleType::Numbers;
  int num_needle_k = 1, num_needle_v = 1, num_needle_q = 1;
  // variable_tracking
  int num_chains = 1, num_hops = 4;
  // common_words_extraction
  int freq_cw = 30, freq_ucw = 3, num_cw = 10;
  // freq_words_extraction
  double alpha = 2.0;
  // qa
  std::string_view dataset;  // "squad" or "hotpotqa"
};

const std::vector<TaskConfig>& ruler_tasks();              // the 13, in RULER's order
const TaskConfig* find_ruler_task(std::string_view name);  // null when unknown
bool needs_essays(const TaskConfig& t);                    // essay haystack or word keys

struct GeneratorTemplate {
  int tokens_to_generate;
  std::string_view task_template, answer_prefix;
};
const GeneratorTemplate& generator_template(Generator g);

// scripts/data/template.py: name -> text around "{task_template}".
const std::vector<std::pair<std::string_view, std::string_view>>& model_templates();

// The arguments of one RULER generator run that makes one sample: prepare.py with
// --chunk_amount = number of samples, so chunk i makes sample i alone with
// --random_seed = seed + i (and --pre_samples i for qa).
struct RulerArgs {
  int max_seq_length = 0;        // the context length
  int model_template_token = 0;  // tokens the model adds outside the text (our BOS)
  int tokens_to_generate = 0;
  uint64_t random_seed = 0;
  std::string template_text;  // model template around the task template, then the answer prefix
  std::string model_template_name = "base";
  // len(TOKENIZER.text_to_tokens(text)) in the evaluated model's tokenizer.
  std::function<size_t(const std::string&)> count_tokens;
  std::string who;  // prefix of error messages, e.g. "suite 'ruler': niah_single_2"
};

// One record of RULER's jsonl: `input` ends where the answer prefix starts (found with rfind of
// the prefix's first 10 characters), `length` counts input + answer prefix + generation.
struct RulerRecord {
  std::string input, answer_prefix;
  std::vector<std::string> outputs;
  int length = 0;
  nlohmann::json meta = nlohmann::json::object();
};

// Splits `full` (input text with its answer prefix) as the generators do.
void cut_answer_prefix(RulerRecord& r, const std::string& full, Generator g);

// The haystack search of niah/vt/cwe/qa: binary search over [lower, upper] for the largest size
// whose probe fits (probes run in order and draw from the generator's random state). RULER falls
// back to `lower` when nothing fits and then retries forever; we search [min_size, lower - 1]
// instead, and return nullopt when even min_size does not fit.
std::optional<int> search_size(int lower, int upper, int min_size,
                               const std::function<bool(int)>& fits);

// The per-sample loop: attempt(size) returns the record, or nullopt when it does not fit (or the
// generator fails, which RULER's bare `except` also retries). RULER lowers the size by
// `incremental` while it is above `incremental`; below that it would loop forever, and we lower
// it by one down to min_size, then throw std::invalid_argument naming the context length.
RulerRecord fit_sample(int size, int incremental, int min_size,
                       const std::function<std::optional<RulerRecord>(int)>& attempt,
                       const RulerArgs& args);

// "context N is too short for <task>" as thrown by the generators.
std::invalid_argument too_short(const RulerArgs& args, const std::string& detail);

// Python's float floor division (float_floor_div), for RULER's `int(a // b)`.
double py_floordiv(double a, double b);

// The sizes niah's essay/noise/needle haystacks, vt's noise and qa's documents step by.
bool is_short_context(const RulerArgs& a);  // args.max_seq_length < 4096

}  // namespace accel::ruler
