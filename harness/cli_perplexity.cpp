// `accelbench perplexity`: mean NLL and perplexity of a text file under teacher forcing.
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "harness/cli.h"
#include "harness/model_session.h"
#include "kernels/threading.h"
#include "models/perplexity.h"

namespace accel {

void register_perplexity_command(CLI::App& app, CliCommands& out) {
  struct Args {
    std::string model, text_file;
    size_t context = 0, stride = 0, chunk = 512;
    std::string kv_dtype = "f32";
    int threads = 0;
    bool json = false;
  };
  auto a = std::make_shared<Args>();
  CLI::App* sub = app.add_subcommand("perplexity", "Perplexity of a text file (teacher forcing)");
  sub->add_option("--model", a->model, "GGUF model file")->required();
  sub->add_option("--text-file", a->text_file, "UTF-8 text file")->required();
  sub->add_option("--context", a->context, "Window length in tokens (default: min(n_ctx, 512))");
  sub->add_option("--stride", a->stride, "Window start stride (default: context / 2)");
  sub->add_option("--prefill-chunk", a->chunk,
                  "Tokens per forward inside a window (default 512; 1 = token by token)");
  std::string kv_help = "KV cache storage type:";
  for (const auto& n : kv_dtype_names()) kv_help += " " + n;
  kv_help +=
      " (default f32). int4 and q8_0 quantize only what earlier chunks stored (the seed's "
      "placement): use their -uniform variants, or --prefill-chunk 1, to score every token "
      "through the quantized cache";
  sub->add_option("--kv-dtype", a->kv_dtype, kv_help);
  sub->add_option("--threads", a->threads, "Threads (default: all cores)");
  sub->add_flag("--json", a->json, "Print one JSON object");
  out.push_back(
      {sub, [a] {
         if (a->threads > 0) set_num_threads(a->threads);
         const auto kv = kv_dtype_from_name(a->kv_dtype);
         if (!kv) throw std::invalid_argument("--kv-dtype '" + a->kv_dtype + "' is not a KV type");
         if (a->chunk == 0) throw std::invalid_argument("--prefill-chunk must be at least 1");
         ModelSession s = ModelSession::open(a->model);
         std::ifstream in(a->text_file, std::ios::binary);
         if (!in) throw std::runtime_error("cannot read --text-file '" + a->text_file + "'");
         std::stringstream ss;
         ss << in.rdbuf();
         const auto tokens = s.require_tokenizer("perplexity").encode(ss.str(), true, false);
         const size_t ctx =
             a->context ? a->context : std::min<size_t>(512, size_t(s.model->config().n_ctx));
         const size_t stride = a->stride ? a->stride : std::max<size_t>(1, ctx / 2);
         const PerplexityResult r = perplexity(*s.model, tokens, ctx, stride, a->chunk, *kv);
         if (a->json) {
           nlohmann::json j = {
               {"model", s.model->path()}, {"text_file", a->text_file}, {"tokens", tokens.size()},
               {"context", ctx},           {"stride", stride},          {"scored", r.n_scored},
               {"kv_dtype", a->kv_dtype},  {"prefill_chunk", a->chunk}, {"windows", r.n_windows},
               {"mean_nll", r.mean_nll},   {"perplexity", r.perplexity}};
           std::printf("%s\n", j.dump(2).c_str());
         } else {
           std::printf(
               "tokens %zu, scored %zu in %zu windows (context %zu, stride %zu)\n"
               "mean NLL %.4f nats/token, perplexity %.3f\n",
               tokens.size(), r.n_scored, r.n_windows, ctx, stride, r.mean_nll, r.perplexity);
         }
         return 0;
       }});
}

}  // namespace accel
