// The perplexity suite (perplexity.h). A sample is one window of the essay text in the model's
// tokenizer: BOS and the first context_len - continuation tokens are the prompt (what the method
// prefills), the next `continuation` tokens are scored. Sample i reads from a sentence start drawn
// from (seed, i), as the NIAH repetitions do, so samples cover the text rather than its opening.
#include "suites/perplexity.h"

#include <cmath>
#include <stdexcept>

#include "kernels/elementwise.h"
#include "suites/agreement.h"
#include "suites/niah_haystack.h"
#include "suites/ruler_corpus.h"

namespace accel {

namespace {

const std::string kWho = "suite 'perplexity'";

// Bytes of text the continuation stands for (0 when the model has no tokenizer).
double continuation_bytes(const std::vector<int32_t>& ids, const SuiteContext& ctx) {
  return ctx.tokenizer ? double(ctx.tokenizer->decode(ids).size()) : 0.0;
}

}  // namespace

double token_nll(std::span<const float> logits, int32_t target) {
  if (target < 0 || size_t(target) >= logits.size())
    throw std::out_of_range("token_nll: token " + std::to_string(target) + " outside a row of " +
                            std::to_string(logits.size()) + " logits");
  return log_sum_exp(logits.data(), logits.size()) - double(logits[size_t(target)]);
}

std::string PerplexitySuite::summary() const {
  return "perplexity of a text continuation after the method's prefill of the text before it "
         "(method and reference teacher-forced on the text), with per-token KL and top-1 "
         "agreement against the reference method";
}

std::vector<ParamSpec> PerplexitySuite::params() const {
  return {{"data",
           ParamSpec::Kind::Text,
           "",
           0,
           0,
           false,
           {},
           "the text (a file, or a directory of .txt files joined in name order, e.g. "
           "../shared/data/niah for the Paul Graham essays)"},
          {"continuation",
           ParamSpec::Kind::Int,
           128,
           1,
           8192,
           false,
           {},
           "tokens scored after the prompt; prompt + continuation = context length"}};
}

std::vector<MetricSpec> PerplexitySuite::metrics() const {
  return {{"ppl.nll_mean", false, Aggregation::Mean, "mean NLL of the continuation's tokens, nats"},
          {"ppl.perplexity", false, Aggregation::Mean,
           "exp(ppl.nll_mean) of the sample (aggregated as a mean over samples)"},
          {"ppl.bits_per_byte", false, Aggregation::Mean,
           "summed NLL / ln 2 / bytes of the continuation's text"},
          {"ppl.ref_nll_mean", false, Aggregation::Mean,
           "the reference method's ppl.nll_mean on the same tokens (other methods only)"},
          {"ppl.delta_nll", false, Aggregation::Mean, "ppl.nll_mean - ppl.ref_nll_mean, nats"},
          {"ppl.kl_mean", false, Aggregation::Mean, "mean per-token KL(reference || method), nats"},
          {"ppl.top1", true, Aggregation::Mean, "fraction of tokens where the argmaxes agree"}};
}

Sample PerplexitySuite::make_sample(int context_len, int index, uint64_t seed,
                                    const SuiteContext& ctx, const nlohmann::json& params) const {
  if (index < 0) throw std::invalid_argument(kWho + ": negative sample index");
  if (!ctx.tokenizer)
    throw std::invalid_argument(kWho + ": the model has no tokenizer (the samples are text)");
  const int cont = params.at("continuation").get<int>();
  const int n_bos = ctx.bos >= 0 ? 1 : 0;
  const int prompt_text = context_len - cont - n_bos;
  if (prompt_text < 1)
    throw std::invalid_argument(kWho + ": context length " + std::to_string(context_len) +
                                " leaves no prompt before a continuation of " +
                                std::to_string(cont) + " tokens");
  const auto text = ruler::load_essays(params.at("data").get<std::string>(), kWho);
  const size_t start = niah::haystack_start(text->text, seed, index);
  const std::vector<int32_t> ids =
      niah::essay_tokens(text->text, start, size_t(prompt_text + cont), *ctx.tokenizer, kWho);

  Sample s;
  s.id = "window" + std::to_string(index);
  if (n_bos) s.prompt.push_back(ctx.bos);
  s.prompt.insert(s.prompt.end(), ids.begin(), ids.begin() + prompt_text);
  s.continuation.assign(ids.begin() + prompt_text, ids.end());
  s.max_new_tokens = cont;
  s.reference = s.continuation;
  s.meta = {{"start_byte", start}, {"prompt_tokens", s.prompt.size()}};
  return s;
}

ReferenceNeed PerplexitySuite::reference_need(const nlohmann::json& params) const {
  return {ReferenceNeed::Kind::ForcedContinuation, params.at("continuation").get<int>()};
}

Scores PerplexitySuite::score(const Sample& s, const Generation& out, const Generation* reference,
                              const SuiteContext& ctx, const nlohmann::json&) const {
  const size_t n = s.continuation.size();
  if (out.logits.size() != n)
    throw std::logic_error(kWho + ": sample '" + s.id + "' has " + std::to_string(n) +
                           " continuation tokens but " + std::to_string(out.logits.size()) +
                           " logit rows");
  double nll = 0;
  for (size_t t = 0; t < n; ++t) nll += token_nll(out.logits[t], s.continuation[t]);
  Scores sc{{"ppl.nll_mean", nll / double(n)}, {"ppl.perplexity", std::exp(nll / double(n))}};
  if (const double bytes = continuation_bytes(s.continuation, ctx); bytes > 0)
    sc["ppl.bits_per_byte"] = nll / std::log(2.0) / bytes;
  if (!reference) return sc;  // the reference method itself
  double ref_nll = 0;
  for (size_t t = 0; t < n; ++t) ref_nll += token_nll(reference->logits.at(t), s.continuation[t]);
  const Agreement a = agreement(reference->logits, out.logits);
  sc["ppl.ref_nll_mean"] = ref_nll / double(n);
  sc["ppl.delta_nll"] = (nll - ref_nll) / double(n);
  sc["ppl.kl_mean"] = a.kl_mean;
  sc["ppl.top1"] = a.top1;
  return sc;
}

}  // namespace accel
