// `accelbench serve`: loads the target and every input named by role, then serves them through
// an OpenAI-compatible HTTP API (serve_server.h) until SIGINT/SIGTERM. Owns flags and start-up
// checks only: inputs are fixed here, never chosen by a request.
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <thread>

#include "harness/cli.h"
#include "harness/cli_args.h"
#include "harness/model_session.h"
#include "harness/serve_server.h"
#include "kernels/threading.h"

namespace accel {

namespace {

struct ServeArgs {
  std::string model, model_id, host = "127.0.0.1", api_key_env, method = "baseline", draft;
  std::string kv_dtype = "f32";
  std::vector<std::string> params, inputs;
  int port = 8080, threads = 0;
  size_t prefill_chunk = 512, queue_depth = 16;
  ServeLimits limits;
  bool quiet = false;
};

// Whether any registered method takes `role` as a plain file (else it is a model).
bool file_role(const std::string& role) {
  for (const Method* m : all_methods())
    for (const InputSpec& in : m->inputs())
      if (in.role == role && in.kind == InputSpec::Kind::File) return true;
  return false;
}

// "--param METHOD.KEY=VALUE" items grouped by method.
std::map<std::string, nlohmann::json> method_defaults(const std::vector<std::string>& items) {
  std::map<std::string, std::vector<std::string>> by_method;
  for (const auto& item : items) {
    const size_t dot = item.find('.'), eq = item.find('=');
    if (dot == std::string::npos || dot == 0 || eq == std::string::npos || dot > eq)
      throw std::invalid_argument("--param '" + item + "': expected METHOD.KEY=VALUE");
    by_method[item.substr(0, dot)].push_back(item.substr(dot + 1));
  }
  std::map<std::string, nlohmann::json> out;
  for (const auto& [m, kv] : by_method) out[m] = parse_param_items(kv, "--param " + m + ".");
  check_method_defaults(out);
  return out;
}

int run_serve(const ServeArgs& a) {
  if (a.threads > 0) set_num_threads(a.threads);
  if (a.prefill_chunk < 1) throw std::invalid_argument("--prefill-chunk must be >= 1");
  if (a.queue_depth < 1) throw std::invalid_argument("--queue-depth must be >= 1");
  ServeConfig cfg;
  cfg.host = a.host;
  cfg.port = a.port;
  cfg.default_method = find_method(a.method).name();
  cfg.method_defaults = method_defaults(a.params);
  cfg.limits = a.limits;
  cfg.queue_depth = a.queue_depth;
  cfg.access_log = !a.quiet;
  if (!a.api_key_env.empty()) {
    const char* key = std::getenv(a.api_key_env.c_str());
    if (!key || !*key)
      throw std::invalid_argument("--api-key-env " + a.api_key_env +
                                  ": the variable is unset or empty");
    cfg.api_key = key;
  }
  const auto kv = kv_dtype_from_name(a.kv_dtype);
  if (!kv)
    throw std::invalid_argument("--kv-dtype '" + a.kv_dtype + "' is not one of " +
                                join_list(kv_dtype_names(), ", "));
  ModelSession s = ModelSession::open(a.model);
  cfg.model_id = a.model_id.empty() ? std::filesystem::path(a.model).stem().string() : a.model_id;
  std::map<std::string, std::string> given = parse_input_items(a.inputs);
  if (!a.draft.empty() && !given.emplace("draft", a.draft).second)
    throw std::invalid_argument("--draft and --input draft=FILE both given");
  Engine engine{.target = s.model.get(), .prefill_chunk = a.prefill_chunk, .kv_dtype = *kv};
  std::map<std::string, std::unique_ptr<Model>> loaded;
  for (const auto& [role, path] : given) {
    if (role == "target") throw std::invalid_argument("--input target=...: the target is --model");
    if (file_role(role)) {
      if (!std::filesystem::is_regular_file(path))
        throw std::invalid_argument("--input " + role + "=" + path + ": not a readable file");
      engine.files[role] = path;
    } else {
      loaded[role] = Model::load(path);
      engine.models[role] = loaded[role].get();
    }
  }
  cfg.input_paths = given;
  cfg.input_paths["target"] = a.model;
  const std::string host = cfg.host;

  // SIGINT/SIGTERM are taken by one thread (blocked in every other) that stops the server.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  std::signal(SIGPIPE, SIG_IGN);
  ServeServer server(std::move(cfg), std::move(engine), s.tokenizer.get());
  const int port = server.bind();
  std::printf("accelbench serve: listening on http://%s:%d (model %s, %d threads)\n", host.c_str(),
              port, a.model.c_str(), num_threads());
  std::fflush(stdout);
  std::thread stopper([&] {
    int sig = 0;
    sigwait(&stop_signals, &sig);
    server.stop();
  });
  server.listen();
  // listen() returned: stopped by a signal, or failed; wake the stopper if it still waits.
  pthread_kill(stopper.native_handle(), SIGTERM);
  stopper.join();
  return 0;
}

}  // namespace

void register_serve_command(CLI::App& app, CliCommands& out) {
  auto a = std::make_shared<ServeArgs>();
  CLI::App* sub = app.add_subcommand(
      "serve",
      "Serve a model through an OpenAI-compatible HTTP API (/v1/completions, "
      "/v1/chat/completions, /v1/models, /tokenize, /health, /metrics) with per-request method "
      "control: a request member \"accelbench\": {\"method\": NAME, \"params\": {...}}. Greedy "
      "decoding only; one request runs at a time (no batching)");
  sub->add_option("--model", a->model, "GGUF model file (the target)")->required();
  sub->add_option("--model-id", a->model_id, "Model id in /v1/models (default: the file's stem)");
  sub->add_option("--host", a->host, "Address to listen on (default 127.0.0.1: this machine only)");
  sub->add_option("--port", a->port, "Port (default 8080; 0 = any free port, printed at start)");
  sub->add_option("--api-key-env", a->api_key_env,
                  "Require `Authorization: Bearer KEY` where KEY is this environment variable's "
                  "value (401 otherwise; /health stays open)");
  sub->add_option("--method", a->method, "Default method when a request names none (baseline)");
  sub->add_option("--param", a->params,
                  "A method's default parameter, METHOD.KEY=VALUE (repeat); requests override");
  sub->add_option("--draft", a->draft, "Draft GGUF model (same as --input draft=FILE)");
  sub->add_option("--input", a->inputs, "A method input by role, ROLE=FILE (repeat)");
  sub->add_option("--kv-dtype", a->kv_dtype, "Target KV cache storage type (default f32)");
  sub->add_option("--prefill-chunk", a->prefill_chunk, "Prefill chunk in tokens (default 512)");
  sub->add_option("--threads", a->threads, "Engine threads (default: all cores)");
  sub->add_option("--queue-depth", a->queue_depth,
                  "Requests admitted at once, running included (default 16; 503 beyond)");
  sub->add_option("--max-body-bytes", a->limits.max_body_bytes,
                  "Largest request body (default 1048576)");
  sub->add_option("--max-prompt-tokens", a->limits.max_prompt_tokens,
                  "Longest prompt in tokens (default: the model's context length)");
  sub->add_option("--max-tokens-limit", a->limits.max_tokens,
                  "Largest max_tokens a request may ask for (default 1024)");
  sub->add_option("--default-max-tokens", a->limits.default_max_tokens,
                  "max_tokens when a request names none (default 16)");
  sub->add_flag("--quiet", a->quiet, "No access log on stderr");
  out.push_back({sub, [a] { return run_serve(*a); }});
}

}  // namespace accel
