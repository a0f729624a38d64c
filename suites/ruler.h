// The RULER suite (NVIDIA/RULER c3f5e3b, spec suites.md §B): its 13 tasks, generated as RULER's
// scripts generate them in the evaluated model's tokenizer, scored with string_match_all /
// string_match_part. Owns the mapping from (task, sample index, seed, model) to one RULER run:
// sample i of seed S is chunk i of `prepare.py --random_seed S --chunk_amount <samples>`, i.e.
// the generator run with --num_samples 1 --random_seed S+i (--pre_samples i for qa), with
// --model_template_token 1 when the model prepends a BOS (so the BOS, too, fits the length).
// Generators: ruler_niah, ruler_other (vt, cwe, fwe), ruler_qa; metrics: ruler_metrics.
//
// Substitutions for what is not available offline (also in version(), summary() and the params):
// word lists from the essays instead of `wonderwords` (ruler_corpus.h), a rule-based sentence
// splitter instead of nltk's Punkt (ruler_sentences.h). Keys and values never collide with other
// needles' (ruler_niah.h).
#pragma once
#include "suites/suite.h"

namespace accel {

// Params: task (one of the 13, or "all": sample i takes task i % 13 and RULER index i / 13, or
// "synthetic": the 11 without qa likewise), data (the essays), squad, hotpotqa (dataset files),
// model_template (RULER's template.py names). Sample ids "<task>-<RULER index>". Metrics:
// ruler.score (the task's own metric), ruler.string_match_all, ruler.string_match_part (each per
// sample ×100, so their mean is RULER's task score before rounding) and ruler.null (empty
// prediction; summed, RULER's "Nulls").
class RulerSuite : public Suite {
 public:
  std::string name() const override { return "ruler"; }
  std::string version() const override;
  std::string summary() const override;
  std::vector<ParamSpec> params() const override;
  std::vector<MetricSpec> metrics() const override;
  // RULER's summary: task score = round(mean ruler.score, 2); the paper's per-length score is the
  // mean of the 13 task scores; Avg and wAvg (inc/dec) over lengths as RULER's README.
  std::optional<TaskSummary> task_summary() const override;
  Sample make_sample(int context_len, int index, uint64_t seed, const SuiteContext& ctx,
                     const nlohmann::json& params) const override;
  // Decodes the generation with the model's tokenizer (ctx.tokenizer, the one the sample was made
  // with), post-processes it as RULER does and matches the references.
  Scores score(const Sample& s, const Generation& out, const Generation* reference,
               const SuiteContext& ctx, const nlohmann::json& params) const override;
};

// Scores of one prediction text against a sample's references (what score() does after decoding).
Scores ruler_scores(const std::string& task, const std::string& prediction,
                    const std::vector<std::string>& references);

}  // namespace accel
