// `accelbench serve`: the engine behind an OpenAI-compatible HTTP API (cpp-httplib). Routes
// /v1/completions, /v1/chat/completions (the GGUF chat template, models/chat_template.h),
// /v1/models, /tokenize, /health and /metrics; per-request method control through the
// `accelbench` member; the API key, size bounds and the bounded queue (503 when full). Model
// inputs by role are the server's, fixed at start-up: no request names a file.
#pragma once
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "harness/serve_metrics.h"
#include "harness/serve_request.h"
#include "methods/method.h"

namespace accel {

class Tokenizer;

struct ServeConfig {
  std::string host = "127.0.0.1";
  int port = 8080;      // 0: any free port (ServeServer::port() says which)
  std::string api_key;  // "" = no key; otherwise `Authorization: Bearer KEY` on every route
  std::string model_id = "accelbench";  // the id /v1/models lists
  std::string default_method = "baseline";
  std::map<std::string, nlohmann::json> method_defaults;  // method -> params (unresolved)
  std::map<std::string, std::string> input_paths;         // role -> file, for /v1/models
  ServeLimits limits;
  size_t queue_depth = 16;
  bool access_log = true;  // one line per request on stderr
};

class ServeServer {
 public:
  // `engine` holds the target and every input by role; `tokenizer` may be null (then only
  // token-id prompts are served and no text is returned).
  ServeServer(ServeConfig config, Engine engine, const Tokenizer* tokenizer);
  ~ServeServer();
  // Binds (throws naming host and port when it cannot) and returns the port.
  int bind();
  void listen();  // serves until stop()
  void stop();
  int port() const;
  const ServeMetrics& metrics() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Checks every method default against the method's declaration (unknown methods and parameters
// are refused naming the flag); the map is what ServeConfig::method_defaults takes.
void check_method_defaults(const std::map<std::string, nlohmann::json>& defaults);

}  // namespace accel
