// The OpenAI-compatible request body of `accelbench serve`, parsed and bounded: which members are
// accepted, their types, the sampling values that mean greedy decoding (anything else is refused,
// never ignored), the `accelbench` method-control member, and the size limits. Owns no tokenizing,
// no model and no HTTP; every refusal is a ServeError naming the member or limit.
#pragma once
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "models/chat_template.h"

namespace accel {

// A refused request: the HTTP status to answer with and a message naming the problem.
class ServeError : public std::runtime_error {
 public:
  ServeError(int status, const std::string& type, const std::string& msg)
      : std::runtime_error(msg), status_(status), type_(type) {}
  int status() const { return status_; }
  const std::string& type() const {
    return type_;
  }  // OpenAI error type, e.g. invalid_request_error

 private:
  int status_;
  std::string type_;
};

struct ServeLimits {
  size_t max_body_bytes = size_t(1) << 20;  // enforced by the HTTP layer before parsing
  size_t max_prompt_tokens = 0;             // 0: the model's context length
  int max_tokens = 1024;                    // largest max_tokens a request may ask for
  int default_max_tokens = 16;              // when the request names none (OpenAI's default)
};

struct ServeRequest {
  bool chat = false;
  std::string model;                  // as sent ("" when absent)
  std::optional<std::string> text;    // completions: a text prompt
  std::vector<int32_t> prompt_ids;    // completions: a prompt of token ids
  std::vector<ChatMessage> messages;  // chat
  // Chat: continue the last (assistant) turn instead of closing it: vLLM's
  // `continue_final_message`, and llama-server's default when the last turn is the assistant's
  // (its prefill_assistant), so a final assistant turn is continued unless the member says false.
  bool continue_final = false;
  bool add_generation_prompt = true;  // chat: vLLM's `add_generation_prompt` (off when continuing)
  int max_tokens = 16;
  bool stream = false;
  bool include_usage = false;  // stream_options.include_usage
  bool ignore_eos = false;     // decode exactly max_tokens (llama-server / vLLM extension)
  // vLLM's `return_token_ids`: a non-streamed choice also carries the prompt's token ids as the
  // server built them (for chat: the rendered template), so a client can check them.
  bool return_token_ids = false;
  std::string method;                                // "" = the server's default
  nlohmann::json params = nlohmann::json::object();  // the request's method params (unresolved)
};

// Parses a body of /v1/completions (chat = false) or /v1/chat/completions. Throws ServeError 400
// with the parse position for malformed JSON, and naming the member for a wrong type, an unknown
// member, a sampling value other than greedy's, or a bound exceeded.
ServeRequest parse_serve_request(const std::string& body, bool chat, const ServeLimits& limits);

}  // namespace accel
