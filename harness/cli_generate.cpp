// `accelbench generate`: one request through any registered method (default baseline: full
// prefill, greedy decode) from a text, file or seeded random-id prompt, with the method's phase
// timings, TTFT and stats, optional raw logits output and JSON. The one-request entry point.
#include <chrono>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "harness/cli.h"
#include "harness/cli_args.h"
#include "harness/model_session.h"
#include "kernels/threading.h"
#include "methods/method.h"
#include "models/chat_template.h"
#include "models/generation.h"

namespace accel {

namespace {

struct GenerateArgs {
  std::string model, prompt, prompt_file, logits_out;
  std::string method = "baseline", draft, kv_dtype = "f32";
  std::vector<std::string> params, inputs;
  bool has_prompt = false;
  size_t random_prompt = 0;
  uint64_t seed = 0;
  int max_tokens = 32;
  size_t prefill_chunk = 512;
  int threads = 0;
  bool json = false;
  bool chat = false;
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
  const Method& method = find_method(a.method);
  const nlohmann::json params = resolve_params(method, parse_param_items(a.params, "--param"));
  const auto kv_dtype = kv_dtype_from_name(a.kv_dtype);
  if (!kv_dtype)
    throw std::invalid_argument("--kv-dtype '" + a.kv_dtype + "' is not one of " +
                                join_list(kv_dtype_names(), ", "));
  ModelSession s = ModelSession::open(a.model);
  const Model& m = *s.model;
  std::map<std::string, std::string> given = parse_input_items(a.inputs);
  if (!a.draft.empty()) given["draft"] = a.draft;
  std::map<std::string, std::unique_ptr<Model>> loaded;
  Engine engine{.target = &m, .prefill_chunk = a.prefill_chunk, .kv_dtype = *kv_dtype};
  for (const InputSpec& in : method.inputs()) {
    if (in.role == "target") continue;
    const auto it = given.find(in.role);
    if (it == given.end())
      throw std::invalid_argument("method '" + a.method + "' needs its '" + in.role + "' input (" +
                                  in.help + "): give --input " + in.role + "=FILE" +
                                  (in.role == "draft" ? " or --draft FILE" : ""));
    if (in.kind == InputSpec::Kind::File) {
      engine.files[in.role] = it->second;
      continue;
    }
    loaded[in.role] = Model::load(it->second);
    engine.models[in.role] = loaded[in.role].get();
  }
  for (const auto& [role, path] : given)
    if (!engine.models.count(role) && !engine.files.count(role))
      throw std::invalid_argument("--input " + role + "=" + path + ": method '" + a.method +
                                  "' has no input of that role");
  Request req;
  if (a.random_prompt > 0)
    req.prompt = random_prompt(m.config().n_vocab, a.random_prompt, a.seed);
  else if (!a.chat)
    req.prompt = s.encode_prompt(a.prompt_file.empty() ? a.prompt : read_file(a.prompt_file));
  int32_t end_of_turn = -1;
  if (a.chat) {
    // The prompt as one user turn of the model's chat template, tokenized with its special
    // tokens parsed and no second BOS (the template writes bos_token where it wants one).
    const auto tmpl = ChatTemplate::from_gguf(m.file());
    if (!tmpl)
      throw std::invalid_argument("--chat: " + m.path() + " has no tokenizer.chat_template");
    const ChatMessage turn{"user", a.prompt_file.empty() ? a.prompt : read_file(a.prompt_file)};
    const Tokenizer& t = s.require_tokenizer("a --chat prompt");
    req.prompt = t.encode(tmpl->apply({&turn, 1}, true), false, true);
    if (t.spec().add_bos && (req.prompt.empty() || req.prompt[0] != t.bos()))
      req.prompt.insert(req.prompt.begin(), t.bos());
    // Generation stops at the template's end-of-turn token when the vocabulary has it as one.
    const std::vector<int32_t> eot = t.encode(tmpl->end_of_turn(), false, true);
    if (eot.size() == 1) end_of_turn = eot[0];
  }
  const std::vector<int32_t>& prompt = req.prompt;
  if (prompt.size() + size_t(a.max_tokens) > size_t(m.config().n_ctx))
    throw std::invalid_argument("prompt (" + std::to_string(prompt.size()) +
                                " tokens) + --max-tokens (" + std::to_string(a.max_tokens) +
                                ") exceeds the context length of " + m.path() + " (" +
                                std::to_string(m.config().n_ctx) + ")");
  req.max_new_tokens = a.max_tokens;
  req.eos = end_of_turn >= 0 ? end_of_turn : s.tokenizer ? s.tokenizer->eos() : -1;
  req.keep_logits = a.logits_out.empty() ? 0 : a.max_tokens;

  std::ofstream logits_out;
  if (!a.logits_out.empty()) {
    logits_out.open(a.logits_out, std::ios::binary | std::ios::trunc);
    if (!logits_out) throw std::runtime_error("cannot write --logits-out '" + a.logits_out + "'");
  }
  const Outcome o = method.run(engine, req, params);
  if (logits_out.is_open()) {
    for (const auto& lg : o.logits)
      logits_out.write(reinterpret_cast<const char*>(lg.data()), std::streamsize(lg.size() * 4));
    logits_out.close();
    if (!logits_out) throw std::runtime_error("failed writing --logits-out '" + a.logits_out + "'");
  }

  // Prompt processing = every phase before the first token is chosen.
  double prefill_s = 0;
  nlohmann::json phases = nlohmann::json::object();
  for (const auto& [name, sec] : o.phases) {
    phases[name] = sec;
    if (name != "first_token" && name != "decode") prefill_s += sec;
  }
  const std::vector<int32_t>& output = o.tokens;
  const size_t decode_steps = output.size() - 1;  // forwards after the first token
  std::string text;
  if (s.tokenizer) text = s.tokenizer->decode(output);
  nlohmann::json timings = {
      {"prefill_s", prefill_s},
      {"ttft_s", o.ttft_s},
      {"decode_s", o.decode_s},
      {"prefill_tokens_per_s", double(prompt.size()) / prefill_s},
      {"decode_tokens_per_s", decode_steps ? double(decode_steps) / o.decode_s : 0.0},
  };
  if (a.json) {
    nlohmann::json j = {{"model", m.path()},
                        {"method", a.method},
                        {"params", params},
                        {"inputs", given},
                        {"kv_dtype", a.kv_dtype},
                        {"prompt_tokens", prompt},
                        {"output_tokens", output},
                        {"text", s.tokenizer ? nlohmann::json(text) : nlohmann::json(nullptr)},
                        {"threads", num_threads()},
                        {"prefill_chunk", a.prefill_chunk},
                        {"kept_tokens", o.kept_tokens},
                        {"kv_bytes", o.kv_bytes},
                        {"phases", phases},
                        {"stats", o.stats},
                        {"timings", timings}};
    std::printf("%s\n", j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
    return 0;
  }
  if (s.tokenizer) std::printf("%s\n", text.c_str());
  std::printf("[tokens] prompt %zu, output %zu:", prompt.size(), output.size());
  for (int32_t t : output) std::printf(" %d", t);
  std::printf(
      "\n[timing] %s: prompt %zu tokens (%zu prefilled) in %.4f s (%.1f tok/s), TTFT %.4f s; "
      "decode %zu steps in %.4f s (%.1f tok/s); threads %d\n",
      a.method.c_str(), prompt.size(), o.kept_tokens, prefill_s, double(prompt.size()) / prefill_s,
      o.ttft_s, decode_steps, o.decode_s, decode_steps ? double(decode_steps) / o.decode_s : 0.0,
      num_threads());
  std::printf("[phases]");
  for (const auto& [name, sec] : o.phases) std::printf(" %s %.4f s;", name.c_str(), sec);
  std::printf("\n");
  if (!o.stats.empty()) std::printf("[stats] %s\n", o.stats.dump().c_str());
  return 0;
}

}  // namespace

void register_generate_command(CLI::App& app, CliCommands& out) {
  auto a = std::make_shared<GenerateArgs>();
  CLI::App* sub =
      app.add_subcommand("generate", "Greedy generation from one prompt through one method");
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
  sub->add_option("--method", a->method,
                  "Registered method to run (default baseline; see `accelbench methods`)");
  sub->add_option("--param", a->params, "Method parameter key=value (repeat)");
  sub->add_option("--draft", a->draft, "Draft GGUF model (same as --input draft=FILE)");
  sub->add_option("--input", a->inputs,
                  "A method input by role, ROLE=FILE (repeat; see `accelbench methods`)");
  sub->add_option("--kv-dtype", a->kv_dtype,
                  "Storage type of the target's KV cache: " + join_list(kv_dtype_names(), ", ") +
                      " (default f32)");
  auto* chat = sub->add_flag(
      "--chat", a->chat,
      "Apply the model's chat template (tokenizer.chat_template: Llama 3, ChatML/Qwen, Gemma, "
      "Gemma 4, GPT-OSS harmony as llama.cpp's built-in, Llama 2) to the prompt as one user "
      "turn; stop at the template's end-of-turn token");
  chat->excludes(rp);
  sub->add_flag("--json", a->json,
                "Print one JSON object (tokens, text, method phases, TTFT, stats, timings)");
  out.push_back({sub, [a, p, pf, rp] {
                   if (p->count() + pf->count() + rp->count() == 0)
                     throw std::invalid_argument(
                         "generate: give one of --prompt, --prompt-file or --random-prompt");
                   return run_generate(*a);
                 }});
}

}  // namespace accel
