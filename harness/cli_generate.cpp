// `accelbench generate`: greedy generation from one prompt (text, file or seeded random ids), with
// prefill/decode timings, optional raw logits output and JSON. The one-request entry point.
#include <chrono>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "harness/cli.h"
#include "harness/model_session.h"
#include "kernels/threading.h"
#include "models/generation.h"

namespace accel {

namespace {

struct GenerateArgs {
  std::string model, prompt, prompt_file, logits_out;
  bool has_prompt = false;
  size_t random_prompt = 0;
  uint64_t seed = 0;
  int max_tokens = 32;
  size_t prefill_chunk = 512;
  int threads = 0;
  bool json = false;
};

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read --prompt-file '" + path + "'");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

int run_generate(const GenerateArgs& a) {
  if (a.threads > 0) set_num_threads(a.threads);
  if (a.max_tokens < 1) throw std::invalid_argument("--max-tokens must be >= 1");
  if (a.prefill_chunk < 1) throw std::invalid_argument("--prefill-chunk must be >= 1");
  ModelSession s = ModelSession::open(a.model);
  const Model& m = *s.model;
  std::vector<int32_t> prompt;
  if (a.random_prompt > 0)
    prompt = random_prompt(m.config().n_vocab, a.random_prompt, a.seed);
  else
    prompt = s.encode_prompt(a.prompt_file.empty() ? a.prompt : read_file(a.prompt_file));
  if (prompt.size() + size_t(a.max_tokens) > size_t(m.config().n_ctx))
    throw std::invalid_argument("prompt (" + std::to_string(prompt.size()) +
                                " tokens) + --max-tokens (" + std::to_string(a.max_tokens) +
                                ") exceeds the context length of " + m.path() + " (" +
                                std::to_string(m.config().n_ctx) + ")");

  std::ofstream logits_out;
  if (!a.logits_out.empty()) {
    logits_out.open(a.logits_out, std::ios::binary | std::ios::trunc);
    if (!logits_out) throw std::runtime_error("cannot write --logits-out '" + a.logits_out + "'");
  }
  using clock = std::chrono::steady_clock;
  KVCache cache = m.make_cache();
  const auto t0 = clock::now();
  const auto positions = iota_positions(0, prompt.size());
  std::vector<float> logits = prefill(m, prompt, positions, cache, a.prefill_chunk);
  const auto t1 = clock::now();
  clock::time_point t_first;
  DecodeOptions opt;
  opt.max_tokens = a.max_tokens;
  opt.eos = s.tokenizer ? s.tokenizer->eos() : -1;
  bool first = true;
  opt.on_token = [&](int32_t, std::span<const float> lg) {
    if (first) t_first = clock::now(), first = false;
    if (logits_out)
      logits_out.write(reinterpret_cast<const char*>(lg.data()), std::streamsize(lg.size() * 4));
  };
  std::vector<int32_t> output =
      greedy_decode(m, cache, std::move(logits), int32_t(prompt.size()), opt);
  const auto t2 = clock::now();
  if (logits_out) {
    logits_out.close();
    if (!logits_out) throw std::runtime_error("failed writing --logits-out '" + a.logits_out + "'");
  }

  const double prefill_s = std::chrono::duration<double>(t1 - t0).count();
  const double ttft_s = std::chrono::duration<double>(t_first - t0).count();
  const double decode_s = std::chrono::duration<double>(t2 - t_first).count();
  const size_t decode_steps = output.size() - 1;  // forwards after the first token
  std::string text;
  if (s.tokenizer) text = s.tokenizer->decode(output);
  nlohmann::json timings = {
      {"prefill_s", prefill_s},
      {"ttft_s", ttft_s},
      {"decode_s", decode_s},
      {"prefill_tokens_per_s", double(prompt.size()) / prefill_s},
      {"decode_tokens_per_s", decode_steps ? double(decode_steps) / decode_s : 0.0},
  };
  if (a.json) {
    nlohmann::json j = {{"model", m.path()},
                        {"prompt_tokens", prompt},
                        {"output_tokens", output},
                        {"text", s.tokenizer ? nlohmann::json(text) : nlohmann::json(nullptr)},
                        {"threads", num_threads()},
                        {"prefill_chunk", a.prefill_chunk},
                        {"timings", timings}};
    std::printf("%s\n", j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
    return 0;
  }
  if (s.tokenizer) std::printf("%s\n", text.c_str());
  std::printf("[tokens] prompt %zu, output %zu:", prompt.size(), output.size());
  for (int32_t t : output) std::printf(" %d", t);
  std::printf(
      "\n[timing] prefill %zu tokens in %.4f s (%.1f tok/s); decode %zu steps in %.4f s "
      "(%.1f tok/s); threads %d\n",
      prompt.size(), prefill_s, double(prompt.size()) / prefill_s, decode_steps, decode_s,
      decode_steps ? double(decode_steps) / decode_s : 0.0, num_threads());
  return 0;
}

}  // namespace

void register_generate_command(CLI::App& app, CliCommands& out) {
  auto a = std::make_shared<GenerateArgs>();
  CLI::App* sub = app.add_subcommand("generate", "Greedy generation from one prompt");
  sub->add_option("--model", a->model, "GGUF model file")->required();
  auto* p = sub->add_option("--prompt", a->prompt, "Prompt text (\"\" = BOS only)");
  auto* pf = sub->add_option("--prompt-file", a->prompt_file, "Read the prompt text from a file");
  auto* rp = sub->add_option("--random-prompt", a->random_prompt,
                             "Use N seeded random token ids as the prompt (any tokenizer)");
  p->excludes(pf)->excludes(rp);
  pf->excludes(rp);
  sub->add_option("--seed", a->seed, "Seed of --random-prompt");
  sub->add_option("--max-tokens", a->max_tokens, "Tokens to generate (default 32)");
  sub->add_option("--prefill-chunk", a->prefill_chunk,
                  "Prefill chunk size in tokens (default 512)");
  sub->add_option("--threads", a->threads, "Threads (default: all cores)");
  sub->add_option("--logits-out", a->logits_out,
                  "Write raw little-endian float32 logits of every generated position");
  sub->add_flag("--json", a->json, "Print one JSON object");
  out.push_back({sub, [a, p, pf, rp] {
                   if (p->count() + pf->count() + rp->count() == 0)
                     throw std::invalid_argument(
                         "generate: give one of --prompt, --prompt-file or --random-prompt");
                   return run_generate(*a);
                 }});
}

}  // namespace accel
