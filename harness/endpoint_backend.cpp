// EndpointMethod and EndpointBackend (see endpoint_backend.h). A request is the prompt's token ids
// (exactly the tokens the suite made, so no re-tokenizing on the server) or, with api "chat", its
// chat turns; greedy, streamed with usage; EOS is ignored when the case decodes a fixed length, as
// the in-process engine does.
#include "harness/endpoint_backend.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>

#include "harness/openai_client.h"
#include "models/tokenizer.h"
#include "reports/stats.h"

namespace accel {

namespace {

using nlohmann::json;

[[noreturn]] void bad(const std::string& where, const std::string& msg) {
  throw std::invalid_argument(where + ": " + msg);
}

std::string api_key(const EndpointSpec& s) {
  if (s.api_key_env.empty()) return {};
  const char* k = std::getenv(s.api_key_env.c_str());
  if (!k || !*k) throw std::runtime_error("backend.api_key_env: " + s.api_key_env + " is unset");
  return k;
}

// Transient failures are retried: no answer, a 5xx (503: queue full), a broken stream.
bool transient(const CompletionResult& r) {
  return r.status == 0 || r.status >= 500 || r.status == 200;
}

// A percentile of gaps (0 when there are none, e.g. a one-token answer).
double pct(const std::vector<double>& v, double q) {
  return v.empty() ? 0.0 : reports::percentile(v, q);
}

// The local tokenizer of the target's GGUF, made once per model.
const Tokenizer* local_tokenizer(const Model& m) {
  static std::mutex mu;
  static std::map<const Model*, std::unique_ptr<Tokenizer>> made;
  std::lock_guard lock(mu);
  auto it = made.find(&m);
  if (it == made.end()) {
    std::unique_ptr<Tokenizer> t;
    try {
      t = Tokenizer::create(TokenizerSpec::from_gguf(m.file()));
    } catch (const std::exception&) {
    }
    it = made.emplace(&m, std::move(t)).first;
  }
  return it->second.get();
}

// The chat form of the request: the sample's turns, a final assistant turn continued (vLLM's
// continue_final_message; llama-server continues it by default and also reads the member), and
// the server's prompt ids asked for so the run can say whether they are the suite's.
void add_chat_prompt(const std::string& config, const Request& r, json& body) {
  if (r.messages.empty())
    throw std::runtime_error(
        "configuration '" + config +
        "': backend.api is \"chat\" but this sample's prompt was not made from the model's chat "
        "template (give the suite model_template / chat_format \"gguf\", or use api "
        "\"completions\")");
  json turns = json::array();
  for (const ChatMessage& m : r.messages)
    turns.push_back({{"role", m.role}, {"content", m.content}});
  body["messages"] = std::move(turns);
  if (r.messages.back().role == "assistant") {
    body["continue_final_message"] = true;
    body["add_generation_prompt"] = false;
  }
  body["return_token_ids"] = true;
}

}  // namespace

EndpointMethod::EndpointMethod(std::shared_ptr<const EndpointSpec> spec, std::string name,
                               json extras)
    : spec_(std::move(spec)), name_(std::move(name)), extras_(std::move(extras)) {}

std::string EndpointMethod::summary() const {
  return "endpoint configuration at " + spec_->base_url + " with " + extras_.dump();
}

Outcome EndpointMethod::run(const Engine& e, const Request& r, const json& params) const {
  if (!r.forced_tokens.empty() || r.keep_logits > 0)
    throw std::runtime_error(
        "configuration '" + name_ +
        "': the endpoint backend cannot teacher-force or return logits (suites scored on logits, "
        "such as agreement and perplexity, run in-process only)");
  const bool chat = spec_->api == "chat";
  json body = params.is_object() ? params : json::object();
  body["model"] = spec_->model;
  if (chat)
    add_chat_prompt(name_, r, body);
  else
    body["prompt"] = r.prompt;
  body["max_tokens"] = r.max_new_tokens;
  body["temperature"] = 0;
  body["stream"] = true;
  body["stream_options"] = {{"include_usage", true}};
  if (r.eos < 0) body["ignore_eos"] = true;
  OpenAIClient client(spec_->base_url, api_key(*spec_), spec_->timeout_s);
  CompletionResult res;
  json errors = json::array();
  int attempts = 0;
  for (; attempts <= spec_->retries; ++attempts) {
    if (attempts > 0) std::this_thread::sleep_for(std::chrono::milliseconds(200 * attempts));
    res = client.complete(body, chat);
    if (res.ok()) break;
    errors.push_back(res.error);
    if (!transient(res)) break;
  }
  if (!res.ok())
    throw std::runtime_error("configuration '" + name_ + "' at " + spec_->base_url + ": " +
                             res.error + " (" + std::to_string(errors.size()) + " attempt" +
                             (errors.size() == 1 ? "" : "s") + ", backend.retries " +
                             std::to_string(spec_->retries) + ")");
  Outcome o;
  json stats = {{"backend", "openai"}, {"attempts", attempts + 1}, {"failed_attempts", errors}};
  if (res.have_token_ids) {
    o.tokens = res.token_ids;
    stats["tokens_from"] = "token_ids";
  } else {
    const Tokenizer* t = local_tokenizer(*e.target);
    if (!t)
      throw std::runtime_error("configuration '" + name_ +
                               "': the server returns text only and the target GGUF has no "
                               "usable tokenizer to turn it into tokens");
    o.tokens = t->encode(res.text, false, false);
    stats["tokens_from"] = "text (local GGUF tokenizer)";
  }
  if (res.usage.is_object() && res.have_token_ids &&
      res.usage.value("completion_tokens", int64_t(-1)) != int64_t(o.tokens.size()))
    throw std::runtime_error("configuration '" + name_ + "': usage says " + res.usage.dump() +
                             " but the stream carried " + std::to_string(o.tokens.size()) +
                             " tokens");
  o.ttft_s = res.ttft_s;
  o.decode_s = std::max(0.0, res.e2e_s - res.ttft_s);
  o.phases = {{"first_token", o.ttft_s}, {"decode", o.decode_s}};
  o.prompt_tokens =
      res.usage.is_object() ? res.usage.value("prompt_tokens", r.prompt.size()) : r.prompt.size();
  o.kept_tokens = res.accelbench.is_object()
                      ? res.accelbench.value("prefilled_tokens", o.prompt_tokens)
                      : o.prompt_tokens;
  stats["e2e_s"] = res.e2e_s;
  stats["tpot_s"] = o.tokens.size() > 1 ? o.decode_s / double(o.tokens.size() - 1) : 0.0;
  stats["itl_s"] = {{"p50", pct(res.itl_s, 0.5)},
                    {"p90", pct(res.itl_s, 0.9)},
                    {"p99", pct(res.itl_s, 0.99)},
                    {"n", res.itl_s.size()}};
  stats["usage"] = res.usage;
  stats["finish_reason"] = res.finish_reason;
  if (!res.accelbench.is_null()) stats["server"] = res.accelbench;
  if (chat) {
    // Whether the server's templating gave the suite's own prompt (its prompt_token_ids, where
    // it returns them): when it did, the answer is the one the engine gives in-process.
    stats["api"] = "chat";
    if (!res.prompt_token_ids.empty())
      stats["prompt_matches_sample"] = res.prompt_token_ids == r.prompt;
  }
  o.stats = std::move(stats);
  return o;
}

std::shared_ptr<const EndpointBackend> EndpointBackend::parse(const json& b, const json& configs) {
  auto spec = std::make_shared<EndpointSpec>();
  if (!b.is_object()) bad("backend", "must be an object");
  static const std::set<std::string> keys = {"kind",      "base_url", "model", "api_key_env",
                                             "timeout_s", "retries",  "api"};
  for (const auto& [k, v] : b.items())
    if (!keys.count(k)) bad("backend." + k, "unknown member");
  auto str = [&](const char* k, bool required) -> std::string {
    if (!b.contains(k)) {
      if (required) bad(std::string("backend.") + k, "required");
      return {};
    }
    if (!b[k].is_string()) bad(std::string("backend.") + k, "must be a string");
    return b[k].get<std::string>();
  };
  spec->kind = b.contains("kind") ? str("kind", true) : "openai";
  if (spec->kind != "openai") bad("backend.kind", "'" + spec->kind + "': only \"openai\" is known");
  spec->base_url = str("base_url", true);
  try {
    parse_base_url(spec->base_url);
  } catch (const std::invalid_argument& e) {
    bad("backend.base_url", e.what());
  }
  spec->model = str("model", true);
  if (b.contains("api")) {
    spec->api = str("api", true);
    if (spec->api != "completions" && spec->api != "chat")
      bad("backend.api", "'" + spec->api + "': expected \"completions\" or \"chat\"");
  }
  spec->api_key_env = str("api_key_env", false);
  if (b.contains("timeout_s")) {
    if (!b["timeout_s"].is_number() || b["timeout_s"].get<double>() <= 0 ||
        b["timeout_s"].get<double>() > 86400)
      bad("backend.timeout_s", "must be a number of seconds in (0, 86400]");
    spec->timeout_s = b["timeout_s"];
  }
  if (b.contains("retries")) {
    if (!b["retries"].is_number_integer() || b["retries"].get<int>() < 0 ||
        b["retries"].get<int>() > 10)
      bad("backend.retries", "must be an integer in [0, 10]");
    spec->retries = b["retries"];
  }
  auto out = std::make_shared<EndpointBackend>();
  out->spec_ = spec;
  if (!configs.is_array() || configs.empty())
    bad("configurations", "an endpoint plan needs a non-empty array of {name, request}");
  std::set<std::string> names;
  static const std::set<std::string> owned = {"model",
                                              "prompt",
                                              "messages",
                                              "max_tokens",
                                              "temperature",
                                              "stream",
                                              "stream_options",
                                              "ignore_eos",
                                              "continue_final_message",
                                              "add_generation_prompt"};
  for (size_t i = 0; i < configs.size(); ++i) {
    const std::string at = "configurations[" + std::to_string(i) + "]";
    const json& c = configs[i];
    if (!c.is_object()) bad(at, "must be an object");
    for (const auto& [k, v] : c.items())
      if (k != "name" && k != "request") bad(at + "." + k, "unknown member");
    if (!c.contains("name") || !c["name"].is_string() || c["name"].get<std::string>().empty())
      bad(at + ".name", "required non-empty string");
    const std::string name = c["name"].get<std::string>();
    if (!names.insert(name).second) bad(at + ".name", "duplicate configuration '" + name + "'");
    json extras = c.value("request", json::object());
    if (!extras.is_object()) bad(at + ".request", "must be an object of request members");
    for (const auto& [k, v] : extras.items())
      if (owned.count(k))
        bad(at + ".request." + k, "set by the harness from the case (prompt, length, greedy)");
    out->configs_.push_back(std::make_unique<EndpointMethod>(spec, name, extras));
  }
  return out;
}

const EndpointMethod* EndpointBackend::find(const std::string& name) const {
  for (const auto& c : configs_)
    if (c->name() == name) return c.get();
  return nullptr;
}

OpenAIClient EndpointBackend::client() const {
  return OpenAIClient(spec_->base_url, api_key(*spec_), spec_->timeout_s);
}

json EndpointBackend::provenance(const Tokenizer* local) const {
  OpenAIClient client(spec_->base_url, api_key(*spec_), spec_->timeout_s);
  const std::string& prefix = client.address().path_prefix;
  int status = 0;
  json out = {{"kind", spec_->kind},
              {"base_url", spec_->base_url},
              {"model", spec_->model},
              {"api", spec_->api}};
  const auto models = client.get_json(prefix + "/models", &status);
  if (!models)
    throw std::runtime_error("backend: GET " + spec_->base_url + "/models answered " +
                             (status ? "HTTP " + std::to_string(status) : "nothing") +
                             ": is the server up?");
  out["models"] = *models;
  if (const auto v = client.get_json("/version")) out["version"] = *v;  // vLLM
  if (const auto p = client.get_json("/props"))                         // llama-server
    if (p->contains("build_info")) out["version"] = (*p)["build_info"];
  // Prompts are the suite's token ids; the server's tokenizer must agree with the local one on
  // a probe for the ids to mean the same text there.
  const std::string probe = "The quick brown fox jumps over the lazy dog. 1234 ünïcödé";
  const auto tok = client.post_json("/tokenize", {{"content", probe}, {"add_special", false}});
  if (tok && tok->contains("tokens") && local) {
    std::vector<int32_t> theirs;
    for (const auto& t : (*tok)["tokens"])
      theirs.push_back(t.is_object() ? t.value("id", -1) : t.get<int32_t>());
    const std::vector<int32_t> ours = local->encode(probe, false, false);
    if (theirs != ours)
      throw std::runtime_error(
          "backend: the server's /tokenize disagrees with the local GGUF "
          "tokenizer on a probe text; name the served model's GGUF as the "
          "target");
    out["prompt_sizing"] = "server /tokenize (agrees with the local GGUF tokenizer)";
  } else {
    out["prompt_sizing"] = local ? "local GGUF tokenizer (the server has no /tokenize)"
                                 : "token ids only (no tokenizer)";
  }
  return out;
}

}  // namespace accel
