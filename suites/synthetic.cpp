// SyntheticSuite (see synthetic.h). The seed mix is the one the runner used before suites existed,
// so version 1 samples are the prompts earlier stores were measured on.
#include "suites/synthetic.h"

#include "suites/synthetic_prompt.h"

namespace accel {

Sample SyntheticSuite::make_sample(int context_len, int index, uint64_t seed,
                                   const SuiteContext& ctx, const nlohmann::json&) const {
  Sample s;
  s.id = std::to_string(index);
  const std::vector<int32_t> exclude =
      ctx.eos >= 0 ? std::vector<int32_t>{ctx.eos} : std::vector<int32_t>{};
  s.prompt =
      synthetic_prompt(ctx.n_vocab, ctx.bos, exclude, size_t(context_len),
                       seed * 1000003ull + uint64_t(index) * 7919ull + uint64_t(context_len));
  return s;
}

}  // namespace accel
