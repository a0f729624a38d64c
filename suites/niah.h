// The NIAH grid: gkamradt's needle-in-a-haystack test (gkamradt/LLMTest_NeedleInAHaystack
// 7b90d28), the picture PFlash and CritiPrefill report: context lengths (the plan's) x needle
// depths, the Paul Graham essays as the haystack, scored by whether the generation contains the
// needle's value. What we follow, in that repository:
//  - needle, retrieval question: needlehaystack/run.py defaults ("The best thing to do in San
//    Francisco is eat a sandwich and sit in Dolores Park on a sunny day.", "What is the best
//    thing to do in San Francisco?");
//  - depths: llm_needle_haystack_tester.py, linear interval type, np.round(np.linspace(0, 100,
//    depths)) (niah_haystack.h);
//  - haystack and placement: read_context_files, encode_and_trim, insert_needle, on ids of the
//    evaluated model's tokenizer (niah_haystack.h);
//  - prompt: providers/Anthropic_prompt.txt, the only plain-text template there (the others are
//    chat messages), with BOS when the model has one.
// Where we differ: the tester's fixed 200-token buffer for the template and the answer is
// measured instead, so prompt + max_new_tokens is exactly the context length; scoring is exact
// containment of the needle's value (case-insensitive, Python's str.lower()), not a GPT judge's
// 1-10 (the tester's evaluators) or ROUGE-1 (CritiPrefill's experiments/needle script), following
// RULER's string_match; the generation budget is CritiPrefill's 50 tokens (the tester's API calls
// ask for up to 300).
#pragma once
#include "suites/suite.h"

namespace accel {

// Params: data (the essays, e.g. ../shared/data/niah; required), depths (grid size, default 11:
// 0, 10, ..., 100), max_new_tokens (default 50), needle, retrieval_question, answer (the value
// that must appear in the generation; it must occur in the needle).
// Sample i is depth grid[i % depths] of repetition i / depths: repetition 0 reads the essays from
// their start (the tester's haystack); repetition r >= 1 from a sentence start drawn from
// (seed, r). A plan with `samples` = depths covers one grid column per context length. Sample id
// "depth<D>-<r>". Metrics per sample: niah.score (100 when the answer is in the generation, else
// 0), niah.depth (the requested depth %, so reports group by it; the length is the trial's
// context length) and niah.depth_actual (where the needle landed, % of the haystack tokens).
class NiahSuite : public Suite {
 public:
  std::string name() const override { return "niah"; }
  std::string version() const override { return "1+gkamradt-7b90d28"; }
  std::string summary() const override;
  std::vector<ParamSpec> params() const override;
  std::vector<MetricSpec> metrics() const override;
  Sample make_sample(int context_len, int index, uint64_t seed, const SuiteContext& ctx,
                     const nlohmann::json& params) const override;
  Scores score(const Sample& s, const Generation& out, const Generation* reference,
               const SuiteContext& ctx, const nlohmann::json& params) const override;
};

namespace niah {
// The NIAH score of a prediction: 100 when str.lower() of `answer` is in str.lower() of
// `prediction`, else 0.
double contains_answer(const std::string& prediction, const std::string& answer);
}  // namespace niah

}  // namespace accel
