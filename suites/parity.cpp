// The parity suite (parity.h). Samples come from prompt_classes.cpp with the seed mix of the
// synthetic suite, so a sample is fixed by (seed, index, context length, class).
#include "suites/parity.h"

#include <algorithm>

#include "suites/prompt_classes.h"

namespace accel {

ParityResult compare_tokens(std::span<const int32_t> ref, std::span<const int32_t> got) {
  const size_t common = std::min(ref.size(), got.size());
  size_t i = 0;
  while (i < common && ref[i] == got[i]) ++i;
  ParityResult r;
  r.exact = i == ref.size() && i == got.size();
  r.first_divergence = int(i);
  const size_t longest = std::max(ref.size(), got.size());
  r.matching_prefix_frac = longest == 0 ? 1.0 : double(i) / double(longest);
  if (!r.exact) {
    r.ref_token = i < ref.size() ? ref[i] : -1;
    r.method_token = i < got.size() ? got[i] : -1;
  }
  return r;
}

namespace {

// The class of sample `index`: the prompt_class parameter, or for "mixed" the text classes in
// turn, so one plan (whose suite params are not swept) covers every class.
std::string class_of(const nlohmann::json& params, int index) {
  const std::string cls = params.at("prompt_class").get<std::string>();
  if (cls != "mixed") return cls;
  std::vector<std::string> turn = {"passage", "json_rag", "code"};
  if (!params.at("data").get<std::string>().empty()) turn.push_back("essay");
  return turn[size_t(index) % turn.size()];
}

}  // namespace

std::vector<ParamSpec> ParitySuite::params() const {
  std::vector<std::string> classes = prompt_class_names();
  classes.push_back("mixed");
  return {{"prompt_class", ParamSpec::Kind::Choice, "passage", 0, 0, false, classes,
           "prompt class of the seed study (essay needs data); mixed: sample i takes passage, "
           "json_rag, code (then essay when data is set) in turn"},
          {"data",
           ParamSpec::Kind::Text,
           "",
           0,
           0,
           false,
           {},
           "essay text: a file or a directory of .txt files (e.g. ../shared/data/niah)"}};
}

std::vector<MetricSpec> ParitySuite::metrics() const {
  return {{"parity.exact", true, Aggregation::Mean, "1 when the tokens equal the reference's"},
          {"parity.first_divergence", true, Aggregation::Min,
           "index of the first differing token (the token count when equal)"},
          {"parity.matching_prefix_frac", true, Aggregation::Mean,
           "matching prefix / the longer output's length"},
          {"parity.ref_token_at_divergence", true, Aggregation::Max,
           "reference token at the first divergence, -1 when equal (per sample; the max only "
           "tells whether any diverged)"},
          {"parity.method_token_at_divergence", true, Aggregation::Max,
           "method token at the first divergence, -1 when equal or ended (per sample)"}};
}

Sample ParitySuite::make_sample(int context_len, int index, uint64_t seed, const SuiteContext& ctx,
                                const nlohmann::json& params) const {
  const std::string cls = class_of(params, index);
  ClassPrompt p = make_class_prompt(
      cls, context_len, seed * 1000003ull + uint64_t(index) * 7919ull + uint64_t(context_len), ctx,
      params.at("data").get<std::string>(), "suite 'parity'");
  Sample s;
  s.id = cls + "-" + std::to_string(index);
  s.prompt = std::move(p.tokens);
  s.meta = std::move(p.meta);
  return s;
}

Scores ParitySuite::score(const Sample&, const Generation& out, const Generation* reference,
                          const SuiteContext&, const nlohmann::json&) const {
  if (!reference) return {};  // the reference method itself
  const ParityResult r = compare_tokens(reference->tokens, out.tokens);
  return {{"parity.exact", r.exact ? 1.0 : 0.0},
          {"parity.first_divergence", double(r.first_divergence)},
          {"parity.matching_prefix_frac", r.matching_prefix_frac},
          {"parity.ref_token_at_divergence", double(r.ref_token)},
          {"parity.method_token_at_divergence", double(r.method_token)}};
}

}  // namespace accel
