// The Method interface every acceleration method implements, its parameter declarations, and the
// registry by name. Methods run over the model API and report tokens, phase timings and stats;
// they never touch SQLite, plans or suites (ARCHITECTURE.md layering).
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "models/chat_template.h"
#include "models/model.h"
#include "models/param_spec.h"

namespace accel {

// An input a method needs, by role: a model (target, draft, aux, ...) or a plain file such as
// fitted predictor weights. Plans name inputs by role; every input's digest is in the case key.
struct InputSpec {
  enum class Kind { Model, File };
  std::string role;
  Kind kind = Kind::Model;
  std::string help;
};

// What a method runs on: the target, further models and files by role, and engine settings that
// apply to every method (prefill chunking, the target's KV cache storage type).
struct Engine {
  const Model* target = nullptr;
  std::map<std::string, const Model*> models;  // roles other than "target"
  std::map<std::string, std::string> files;    // File inputs: role -> path
  // SHA-256 of each input's file by role ("target" included), when the caller has them (the
  // harness does, for case keys); methods may key caches of per-file work on them.
  std::map<std::string, std::string> digests;
  size_t prefill_chunk = 512;
  KVDType kv_dtype = KVDType::F32;

  // The model of a role ("target" included); throws naming the role when it is missing.
  const Model& model(const std::string& role) const;
  const std::string& file(const std::string& role) const;
  std::string digest(const std::string& role) const;  // "" when unknown
  // max_rollback: the most entries a method trims after one batch (PLD: its draft length), which
  // the rings of sliding-window layers must keep beyond their window.
  KVCache make_target_cache(size_t max_rollback = Model::kDefaultMaxRollback) const {
    return target->make_cache(kv_dtype, max_rollback);
  }
};

struct Request {
  std::vector<int32_t> prompt;  // token ids, BOS included when the workload wants it
  // The prompt as chat turns, when the workload made it by rendering them with the model's chat
  // template (a final assistant turn is continued, not closed); empty otherwise. In-process
  // methods run `prompt`; an endpoint sent to a chat API sends these for the server to render.
  std::vector<ChatMessage> messages;
  int max_new_tokens = 16;  // decode length (>= 1)
  int32_t eos = -1;         // stop token (-1: none)
  int keep_logits = 0;      // keep the logits of the first n generated positions
  // Teacher forcing (untimed agreement scoring): when non-empty, decode step t feeds
  // forced_tokens[t] instead of the method's own choice, so the logits of every step can be
  // compared with a reference run over the same prefix. Outcome::tokens still holds the argmaxes.
  std::vector<int32_t> forced_tokens;
  // Streaming (accelbench serve): when set, called with each generated token as it is committed
  // (the first right after TTFT ends), outside no timed phase of its own. It may throw to cancel
  // the request (a client that went away); the method lets the exception through. Not called in
  // teacher forcing.
  std::function<void(int32_t)> on_token;
};

struct Outcome {
  std::vector<int32_t> tokens;                         // generated tokens
  std::vector<std::pair<std::string, double>> phases;  // in order, seconds
  double ttft_s = 0;                                   // prompt in hand -> first token
  double decode_s = 0;                                 // after the first token
  size_t prompt_tokens = 0;
  size_t kept_tokens = 0;                           // prompt tokens the target prefilled
  size_t kv_bytes = 0;                              // target KV cache at the end
  nlohmann::json stats = nlohmann::json::object();  // method-specific
  std::vector<std::vector<float>> logits;           // Request::keep_logits rows
};

class Method {
 public:
  virtual ~Method() = default;
  virtual std::string name() const = 0;
  virtual std::string summary() const = 0;
  virtual std::vector<ParamSpec> params() const { return {}; }
  // Inputs by role; the default is the target alone. Every role listed is required.
  virtual std::vector<InputSpec> inputs() const {
    return {{"target", InputSpec::Kind::Model, "the model being accelerated"}};
  }
  // Reasons this method may fall back to its baseline path (recorded as stats["fallback"]). Any
  // other exception fails the trial.
  virtual std::vector<std::string> fallback_reasons() const { return {}; }
  // Runs one request. `params` is already resolved (see resolve_params).
  virtual Outcome run(const Engine& e, const Request& r, const nlohmann::json& params) const = 0;
};

// Fills defaults and checks every value against its declaration; throws std::invalid_argument
// naming the method and the parameter (unknown names included).
nlohmann::json resolve_params(const Method& m, const nlohmann::json& given);

const Method& find_method(const std::string& name);  // throws naming the known methods
std::vector<const Method*> all_methods();

}  // namespace accel
