// parse_serve_request (see serve_request.h). Greedy decoding is the only sampler: a sampling member
// is accepted only with the value that leaves argmax unchanged (temperature 0, top_p 1, top_k 0/1,
// penalties 0, n 1); any other value is a 400 that names it.
#include "harness/serve_request.h"

#include <set>

namespace accel {

namespace {

using nlohmann::json;

[[noreturn]] void bad(const std::string& msg) {
  throw ServeError(400, "invalid_request_error", msg);
}

const json& member(const json& body, const char* key) {
  static const json null_value;
  const auto it = body.find(key);
  return it == body.end() ? null_value : *it;
}

std::string string_member(const json& v, const std::string& name) {
  if (!v.is_string()) bad("'" + name + "' must be a string, got " + std::string(v.type_name()));
  return v.get<std::string>();
}

bool bool_member(const json& v, const std::string& name) {
  if (!v.is_boolean()) bad("'" + name + "' must be a boolean, got " + std::string(v.type_name()));
  return v.get<bool>();
}

double number_member(const json& v, const std::string& name) {
  if (!v.is_number()) bad("'" + name + "' must be a number, got " + std::string(v.type_name()));
  return v.get<double>();
}

// Sampling members: present only with the value that keeps decoding greedy.
void check_greedy(const json& body) {
  auto require = [&](const char* key, auto ok, const char* want) {
    const json& v = member(body, key);
    if (v.is_null()) return;
    const double x = number_member(v, key);
    if (!ok(x))
      bad(std::string("'") + key + "' = " + v.dump() +
          " is not supported: this server decodes greedily (" + want + ")");
  };
  require(
      "temperature", [](double x) { return x == 0; }, "temperature 0");
  require(
      "top_p", [](double x) { return x == 1; }, "top_p 1");
  require(
      "top_k", [](double x) { return x == 0 || x == 1 || x == -1; }, "top_k 0, 1 or -1");
  require(
      "min_p", [](double x) { return x == 0; }, "min_p 0");
  require(
      "presence_penalty", [](double x) { return x == 0; }, "presence_penalty 0");
  require(
      "frequency_penalty", [](double x) { return x == 0; }, "frequency_penalty 0");
  require(
      "repetition_penalty", [](double x) { return x == 1; }, "repetition_penalty 1");
  require(
      "n", [](double x) { return x == 1; }, "n 1");
  // seed: greedy decoding has no randomness to seed, so any integer gives the same answer.
  if (const json& s = member(body, "seed"); !s.is_null() && !s.is_number_integer())
    bad("'seed' must be an integer, got " + std::string(s.type_name()));
  for (const char* key : {"logprobs", "echo"})
    if (const json& v = member(body, key); !v.is_null() && !(v.is_boolean() && !v.get<bool>()))
      bad(std::string("'") + key + "' is not supported");
  for (const char* key : {"top_logprobs", "logit_bias", "best_of", "suffix", "tools", "tool_choice",
                          "response_format", "functions"})
    if (!member(body, key).is_null()) bad(std::string("'") + key + "' is not supported");
  if (const json& v = member(body, "stop"); !v.is_null() && !(v.is_array() && v.empty()))
    bad("'stop' is not supported (generation stops at the model's end token or max_tokens)");
}

std::vector<int32_t> parse_id_prompt(const json& p) {
  std::vector<int32_t> ids;
  ids.reserve(p.size());
  for (size_t i = 0; i < p.size(); ++i) {
    const json& t = p[i];
    if (!t.is_number_integer() || t.get<int64_t>() < 0 || t.get<int64_t>() > INT32_MAX)
      bad("'prompt[" + std::to_string(i) + "]' must be a non-negative token id, got " + t.dump());
    ids.push_back(int32_t(t.get<int64_t>()));
  }
  if (ids.empty()) bad("'prompt' is an empty list of token ids");
  return ids;
}

void parse_prompt(const json& body, ServeRequest& r) {
  const json& p = member(body, "prompt");
  if (p.is_null()) bad("'prompt' is required");
  if (p.is_string()) {
    r.text = p.get<std::string>();
  } else if (p.is_array() && p.size() == 1 && p[0].is_string()) {
    r.text = p[0].get<std::string>();  // a batch of one prompt
  } else if (p.is_array() && (p.empty() || p[0].is_number())) {
    r.prompt_ids = parse_id_prompt(p);
  } else if (p.is_array()) {
    bad("'prompt': a batch of several prompts is not supported (send one request each)");
  } else {
    bad("'prompt' must be a string or a list of token ids, got " + std::string(p.type_name()));
  }
}

void parse_messages(const json& body, ServeRequest& r) {
  const json& m = member(body, "messages");
  if (!m.is_array() || m.empty()) bad("'messages' must be a non-empty list");
  for (size_t i = 0; i < m.size(); ++i) {
    const std::string at = "messages[" + std::to_string(i) + "]";
    if (!m[i].is_object()) bad("'" + at + "' must be an object");
    for (const auto& [k, v] : m[i].items())
      if (k != "role" && k != "content" && k != "name")
        bad("'" + at + "." + k + "' is not supported");
    const std::string role = string_member(member(m[i], "role"), at + ".role");
    if (role != "system" && role != "user" && role != "assistant")
      bad("'" + at + ".role' = '" + role + "': expected system, user or assistant");
    r.messages.push_back({role, string_member(member(m[i], "content"), at + ".content")});
  }
}

// continue_final_message / add_generation_prompt over the parsed messages (see ServeRequest).
void parse_continuation(const json& body, ServeRequest& r) {
  const json& c = member(body, "continue_final_message");
  const json& g = member(body, "add_generation_prompt");
  const bool last_is_assistant = r.messages.back().role == "assistant";
  r.continue_final = c.is_null() ? last_is_assistant : bool_member(c, "continue_final_message");
  if (r.continue_final && !last_is_assistant)
    bad("'continue_final_message' needs the last message to be the assistant's (got '" +
        r.messages.back().role + "')");
  r.add_generation_prompt =
      g.is_null() ? !r.continue_final : bool_member(g, "add_generation_prompt");
  if (r.continue_final && r.add_generation_prompt)
    bad("'add_generation_prompt' and 'continue_final_message' cannot both be true");
}

void parse_accelbench(const json& a, ServeRequest& r) {
  if (a.is_null()) return;
  if (!a.is_object()) bad("'accelbench' must be an object");
  for (const auto& [k, v] : a.items())
    if (k != "method" && k != "params") bad("'accelbench." + k + "' is not a known member");
  if (const json& m = member(a, "method"); !m.is_null())
    r.method = string_member(m, "accelbench.method");
  if (const json& p = member(a, "params"); !p.is_null()) {
    if (!p.is_object()) bad("'accelbench.params' must be an object");
    r.params = p;
  }
}

int parse_max_tokens(const json& body, bool chat, const ServeLimits& limits) {
  const char* key = "max_tokens";
  json v = member(body, key);
  if (chat && v.is_null() && !member(body, "max_completion_tokens").is_null()) {
    key = "max_completion_tokens";
    v = member(body, key);
  }
  if (v.is_null()) return limits.default_max_tokens;
  if (!v.is_number_integer()) bad(std::string("'") + key + "' must be an integer, got " + v.dump());
  const int64_t n = v.get<int64_t>();
  if (n < 1) bad(std::string("'") + key + "' = " + std::to_string(n) + " must be >= 1");
  if (n > limits.max_tokens)
    bad(std::string("'") + key + "' = " + std::to_string(n) + " exceeds the server's limit of " +
        std::to_string(limits.max_tokens) + " (--max-tokens-limit)");
  return int(n);
}

const std::set<std::string>& known_members(bool chat) {
  static const std::set<std::string> common = {"model",
                                               "max_tokens",
                                               "stream",
                                               "stream_options",
                                               "ignore_eos",
                                               "return_token_ids",
                                               "accelbench",
                                               "user",
                                               "temperature",
                                               "top_p",
                                               "top_k",
                                               "min_p",
                                               "presence_penalty",
                                               "frequency_penalty",
                                               "repetition_penalty",
                                               "n",
                                               "seed",
                                               "logprobs",
                                               "echo",
                                               "top_logprobs",
                                               "logit_bias",
                                               "best_of",
                                               "suffix",
                                               "tools",
                                               "tool_choice",
                                               "response_format",
                                               "functions",
                                               "stop"};
  static const std::set<std::string> completion = [] {
    auto s = common;
    s.insert("prompt");
    return s;
  }();
  static const std::set<std::string> chat_members = [] {
    auto s = common;
    s.insert(
        {"messages", "max_completion_tokens", "continue_final_message", "add_generation_prompt"});
    return s;
  }();
  return chat ? chat_members : completion;
}

}  // namespace

ServeRequest parse_serve_request(const std::string& body_text, bool chat,
                                 const ServeLimits& limits) {
  json body;
  try {
    body = json::parse(body_text);
  } catch (const json::parse_error& e) {
    bad("malformed JSON at byte " + std::to_string(e.byte) + ": " + e.what());
  }
  if (!body.is_object()) bad("the request body must be a JSON object");
  for (const auto& [k, v] : body.items())
    if (!known_members(chat).count(k)) bad("'" + k + "' is not a known member of this request");
  ServeRequest r;
  r.chat = chat;
  if (const json& m = member(body, "model"); !m.is_null()) r.model = string_member(m, "model");
  check_greedy(body);
  if (chat) {
    parse_messages(body, r);
    parse_continuation(body, r);
  } else
    parse_prompt(body, r);
  r.max_tokens = parse_max_tokens(body, chat, limits);
  if (const json& s = member(body, "stream"); !s.is_null()) r.stream = bool_member(s, "stream");
  if (const json& e = member(body, "ignore_eos"); !e.is_null())
    r.ignore_eos = bool_member(e, "ignore_eos");
  if (const json& e = member(body, "return_token_ids"); !e.is_null())
    r.return_token_ids = bool_member(e, "return_token_ids");
  if (const json& so = member(body, "stream_options"); !so.is_null()) {
    if (!so.is_object()) bad("'stream_options' must be an object");
    for (const auto& [k, v] : so.items())
      if (k != "include_usage") bad("'stream_options." + k + "' is not supported");
    if (const json& u = member(so, "include_usage"); !u.is_null())
      r.include_usage = bool_member(u, "stream_options.include_usage");
    if (!r.stream) bad("'stream_options' is only allowed with \"stream\": true");
  }
  if (const json& u = member(body, "user"); !u.is_null()) string_member(u, "user");
  parse_accelbench(member(body, "accelbench"), r);
  return r;
}

}  // namespace accel
