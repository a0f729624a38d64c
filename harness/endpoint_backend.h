// The endpoint backend: a plan's `backend` section names an OpenAI-compatible server (our `serve`,
// llama-server, vLLM) and its `configurations` list named request extras (e.g. our `accelbench`
// member, or vLLM's per-request options). Each configuration is a Method to the runner, so cases,
// keys, the store, tables and the cost model treat it like one; its run sends the case's prompt
// token ids as one streamed completion (or, with `api` "chat", the sample's chat turns for the
// server to template) and times it at the client. Owns no store and no scoring.
#pragma once
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "harness/openai_client.h"
#include "methods/method.h"

namespace accel {

class Tokenizer;

struct EndpointSpec {
  std::string kind = "openai";
  std::string base_url;     // "http://127.0.0.1:8080/v1"
  std::string model;        // the request's "model"
  std::string api_key_env;  // "" = no key; else the key is this environment variable's value
  double timeout_s = 600;   // per request (connect 10 s)
  int retries = 1;          // extra attempts after a failed request (not after a 4xx)
  // "completions": the prompt's token ids to /v1/completions (exactly the suite's tokens).
  // "chat": the sample's chat turns (Request::messages) to /v1/chat/completions, templated and
  // tokenized by the server, for servers that only template themselves; a final assistant turn
  // is sent to be continued (continue_final_message, llama-server's assistant prefill).
  std::string api = "completions";
};

// One named configuration: the request extras merged into every request it sends.
class EndpointMethod : public Method {
 public:
  EndpointMethod(std::shared_ptr<const EndpointSpec> spec, std::string name, nlohmann::json extras);
  std::string name() const override { return name_; }
  std::string summary() const override;
  // The target role is the local GGUF that sizes prompts and turns returned text into tokens.
  std::vector<InputSpec> inputs() const override {
    return {{"target", InputSpec::Kind::Model, "a GGUF with the served model's tokenizer"}};
  }
  // `params` are the configuration's request extras (Case::params of an endpoint plan).
  Outcome run(const Engine& e, const Request& r, const nlohmann::json& params) const override;
  const nlohmann::json& extras() const { return extras_; }

 private:
  std::shared_ptr<const EndpointSpec> spec_;
  std::string name_;
  nlohmann::json extras_;
};

class EndpointBackend {
 public:
  // Parses plan members `backend` and `configurations`; throws std::invalid_argument naming the
  // member ("backend.base_url: ...", "configurations[1].name: ...").
  static std::shared_ptr<const EndpointBackend> parse(const nlohmann::json& backend,
                                                      const nlohmann::json& configurations);
  const EndpointSpec& spec() const { return *spec_; }
  const std::vector<std::unique_ptr<EndpointMethod>>& configurations() const { return configs_; }
  const EndpointMethod* find(const std::string& name) const;  // null when not listed
  // What the run stores about the server: base URL, model, its /v1/models answer, its version
  // where it says one (/version, /props), and how prompts are sized: the server's /tokenize when
  // it has one and it agrees with `local` on a probe text (else an exception naming the
  // disagreement), or the local GGUF tokenizer alone. `local` may be null (ids only).
  nlohmann::json provenance(const Tokenizer* local) const;
  // A client of the server with the spec's key and time-out (load sweeps send through it).
  OpenAIClient client() const;

 private:
  std::shared_ptr<const EndpointSpec> spec_;
  std::vector<std::unique_ptr<EndpointMethod>> configs_;
};

}  // namespace accel
