// A client of OpenAI-compatible servers (our `serve`, llama-server, vLLM) for the endpoint
// backend and the serve tests: one completion or chat request, streamed as server-sent events
// and timed at the client (TTFT at the first chunk carrying content, gaps between content chunks,
// end to end), or whole; GET/POST of JSON for /v1/models and /tokenize. Owns no plans, no scoring
// and no store.
#pragma once
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace accel {

struct EndpointAddress {
  std::string scheme_host_port;  // "http://127.0.0.1:8080"
  std::string path_prefix;       // "/v1" (what base_url has after host:port, without a trailing /)
};
// Splits a base URL such as "http://host:8000/v1"; throws std::invalid_argument naming it when it
// is not http[s]://HOST[:PORT][/PATH].
EndpointAddress parse_base_url(const std::string& base_url);

struct CompletionResult {
  int status = 0;     // HTTP status (0: no answer: connection refused, time-out, ...)
  std::string error;  // "" when the request completed; else why (status, message, truncation)
  std::string text;   // the generated text (concatenated deltas)
  std::vector<int32_t> token_ids;  // when the server returns them (choices[].token_ids)
  bool have_token_ids = false;
  // The prompt as the server tokenized it (choices[].prompt_token_ids, vLLM's return_token_ids);
  // empty when the server sent none.
  std::vector<int32_t> prompt_token_ids;
  std::string finish_reason;
  nlohmann::json usage;       // null when the server sent none
  nlohmann::json accelbench;  // our server's report of the run (null elsewhere)
  double ttft_s = -1;         // request sent -> first chunk with content
  double e2e_s = -1;          // request sent -> end of the answer
  std::vector<double> itl_s;  // gaps between consecutive content chunks
  int content_chunks = 0;
  bool ok() const { return error.empty(); }
};

class OpenAIClient {
 public:
  // One client may be used from several threads: each call opens its own connection.
  OpenAIClient(const std::string& base_url, std::string api_key, double timeout_s);
  // POSTs `body` to /completions or /chat/completions under the base URL. With body["stream"]
  // true the answer is read as SSE; a stream that ends without `data: [DONE]` is an error
  // ("truncated stream"). `stop_after_chunks` > 0 closes the connection after that many chunks
  // (tests of client disconnects).
  CompletionResult complete(const nlohmann::json& body, bool chat, int stop_after_chunks = 0);
  // GET or POST JSON at a path under the base URL's host ("/v1/models", "/tokenize", ...);
  // nullopt when the server answers with a non-200 status or something that is not JSON.
  std::optional<nlohmann::json> get_json(const std::string& path, int* status = nullptr);
  std::optional<nlohmann::json> post_json(const std::string& path, const nlohmann::json& body,
                                          int* status = nullptr);
  // POSTs a body as given (tests send malformed ones); returns the status (0: no answer) and body.
  std::pair<int, std::string> post_raw(const std::string& path, const std::string& body);
  const EndpointAddress& address() const { return addr_; }

 private:
  EndpointAddress addr_;
  std::string api_key_;
  double timeout_s_;
};

}  // namespace accel
