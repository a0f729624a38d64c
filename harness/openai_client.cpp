// OpenAIClient (see openai_client.h). Streams are parsed as they arrive: events split at blank
// lines, `data:` payloads as JSON, `[DONE]` ends the answer.
#include "harness/openai_client.h"

// At -O1 (the sanitizer build) GCC 12 reports a maybe-uninitialized std::function inside
// libstdc++'s std::regex compiler, which httplib.h includes too; a false positive, silenced for
// this file only.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <httplib.h>

#include <chrono>
#include <regex>
#include <stdexcept>

namespace accel {

namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

double since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

httplib::Headers headers_for(const std::string& api_key) {
  httplib::Headers h;
  if (!api_key.empty()) h.emplace("Authorization", "Bearer " + api_key);
  return h;
}

// What one parsed chunk (or whole body) adds to the result; returns its content was non-empty.
bool absorb(const json& j, bool chat, CompletionResult& r) {
  if (const auto u = j.find("usage"); u != j.end() && !u->is_null()) r.usage = *u;
  if (const auto a = j.find("accelbench"); a != j.end()) r.accelbench = *a;
  const auto ch = j.find("choices");
  if (ch == j.end() || !ch->is_array() || ch->empty()) return false;
  const json& c = (*ch)[0];
  std::string piece;
  if (chat) {
    const json* d = c.contains("delta")     ? &c["delta"]
                    : c.contains("message") ? &c["message"]
                                            : nullptr;
    if (d && d->contains("content") && (*d)["content"].is_string())
      piece = (*d)["content"].get<std::string>();
  } else if (c.contains("text") && c["text"].is_string()) {
    piece = c["text"].get<std::string>();
  }
  r.text += piece;
  bool ids = false;
  if (const auto t = c.find("token_ids"); t != c.end() && t->is_array()) {
    r.have_token_ids = true;
    for (const auto& id : *t) r.token_ids.push_back(id.get<int32_t>());
    ids = !t->empty();
  }
  if (const auto p = c.find("prompt_token_ids"); p != c.end() && p->is_array()) {
    r.prompt_token_ids.clear();
    for (const auto& id : *p)
      if (id.is_number_integer()) r.prompt_token_ids.push_back(id.get<int32_t>());
  }
  if (const auto f = c.find("finish_reason"); f != c.end() && f->is_string())
    r.finish_reason = f->get<std::string>();
  // A chunk with token ids is content when it carries one (a held-back UTF-8 tail flushed by the
  // last chunk is text of tokens already counted); without ids, when it carries text.
  return c.contains("token_ids") ? ids : !piece.empty();
}

std::string error_message(const std::string& body) {
  const json j = json::parse(body, nullptr, false);
  if (!j.is_discarded() && j.contains("error")) {
    const json& e = j["error"];
    if (e.is_object() && e.contains("message") && e["message"].is_string())
      return e["message"].get<std::string>();
    if (e.is_string()) return e.get<std::string>();
  }
  return body.substr(0, 300);
}

}  // namespace

EndpointAddress parse_base_url(const std::string& base_url) {
  static const std::regex re(
      R"(^(https?://[A-Za-z0-9.\-]+(:[0-9]{1,5})?|https?://\[[0-9a-fA-F:]+\](:[0-9]{1,5})?)(/.*)?$)");
  std::smatch m;
  if (!std::regex_match(base_url, m, re))
    throw std::invalid_argument("base_url '" + base_url +
                                "': expected http[s]://HOST[:PORT][/PATH]");
  EndpointAddress a{m[1].str(), m[4].str()};
  while (!a.path_prefix.empty() && a.path_prefix.back() == '/') a.path_prefix.pop_back();
  return a;
}

OpenAIClient::OpenAIClient(const std::string& base_url, std::string api_key, double timeout_s)
    : addr_(parse_base_url(base_url)), api_key_(std::move(api_key)), timeout_s_(timeout_s) {}

CompletionResult OpenAIClient::complete(const json& body, bool chat, int stop_after_chunks) {
  httplib::Client cli(addr_.scheme_host_port);
  const auto secs = std::chrono::duration<double>(timeout_s_);
  cli.set_read_timeout(std::chrono::duration_cast<std::chrono::microseconds>(secs));
  cli.set_write_timeout(std::chrono::duration_cast<std::chrono::microseconds>(secs));
  cli.set_connection_timeout(std::chrono::seconds(10));
  cli.set_tcp_nodelay(true);
  const bool streaming = body.value("stream", false);
  CompletionResult r;
  httplib::Request req;
  req.method = "POST";
  req.path = addr_.path_prefix + (chat ? "/chat/completions" : "/completions");
  req.headers = headers_for(api_key_);
  req.body = body.dump();
  req.set_header("Content-Type", "application/json");
  std::string buffer, raw;
  bool done = false, bad_chunk = false;
  int chunks = 0;
  Clock::time_point last_content;
  const auto t0 = Clock::now();
  if (streaming) {
    req.content_receiver = [&](const char* data, size_t n, uint64_t, uint64_t) {
      if (r.status == 0) r.status = 200;
      buffer.append(data, n);
      if (raw.size() < 4096) raw.append(data, std::min(n, size_t(4096)));
      for (size_t end; (end = buffer.find("\n\n")) != std::string::npos;) {
        const std::string event = buffer.substr(0, end);
        buffer.erase(0, end + 2);
        if (event.rfind("data: ", 0) != 0) continue;  // comments, other fields
        const std::string payload = event.substr(6);
        if (payload == "[DONE]") {
          done = true;
          continue;
        }
        const json j = json::parse(payload, nullptr, false);
        if (j.is_discarded() || !j.is_object()) {
          bad_chunk = true;
          continue;
        }
        if (j.contains("error")) {
          r.error = "error in stream: " + error_message(payload);
          continue;
        }
        if (absorb(j, chat, r)) {
          const auto now = Clock::now();
          if (r.content_chunks == 0)
            r.ttft_s = std::chrono::duration<double>(now - t0).count();
          else
            r.itl_s.push_back(std::chrono::duration<double>(now - last_content).count());
          last_content = now;
          ++r.content_chunks;
        }
        if (stop_after_chunks > 0 && ++chunks >= stop_after_chunks) return false;
      }
      return true;
    };
  }
  httplib::Response res;
  httplib::Error err = httplib::Error::Success;
  const bool sent = cli.send(req, res, err);
  r.e2e_s = since(t0);
  if (!sent && !(stop_after_chunks > 0 && err == httplib::Error::Canceled)) {
    if (res.status > 0) r.status = res.status;
    if (r.error.empty())
      r.error = r.status == 200 ? "truncated stream (" + httplib::to_string(err) + ")"
                                : "no answer: " + httplib::to_string(err);
    return r;
  }
  r.status = res.status > 0 ? res.status : r.status;
  if (r.status != 200) {
    r.error = "HTTP " + std::to_string(r.status) + ": " + error_message(streaming ? raw : res.body);
    return r;
  }
  if (streaming) {
    if (bad_chunk && r.error.empty()) r.error = "a chunk that is not JSON";
    if (!done && r.error.empty() && stop_after_chunks == 0)
      r.error = "truncated stream (no [DONE])";
    return r;
  }
  const json j = json::parse(res.body, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    r.error = "the answer is not a JSON object";
    return r;
  }
  absorb(j, chat, r);
  r.ttft_s = r.e2e_s;  // whole answers: the first token arrives with the last
  return r;
}

std::optional<json> OpenAIClient::get_json(const std::string& path, int* status) {
  httplib::Client cli(addr_.scheme_host_port);
  cli.set_connection_timeout(std::chrono::seconds(10));
  const auto res = cli.Get(path.c_str(), headers_for(api_key_));
  if (status) *status = res ? res->status : 0;
  if (!res || res->status != 200) return std::nullopt;
  json j = json::parse(res->body, nullptr, false);
  if (j.is_discarded()) return std::nullopt;
  return j;
}

std::optional<json> OpenAIClient::post_json(const std::string& path, const json& body,
                                            int* status) {
  httplib::Client cli(addr_.scheme_host_port);
  cli.set_connection_timeout(std::chrono::seconds(10));
  const auto res = cli.Post(path.c_str(), headers_for(api_key_), body.dump(), "application/json");
  if (status) *status = res ? res->status : 0;
  if (!res || res->status != 200) return std::nullopt;
  json j = json::parse(res->body, nullptr, false);
  if (j.is_discarded()) return std::nullopt;
  return j;
}

std::pair<int, std::string> OpenAIClient::post_raw(const std::string& path,
                                                   const std::string& body) {
  httplib::Client cli(addr_.scheme_host_port);
  cli.set_connection_timeout(std::chrono::seconds(10));
  const auto res = cli.Post(path.c_str(), headers_for(api_key_), body, "application/json");
  if (!res) return {0, httplib::to_string(res.error())};
  return {res->status, res->body};
}

}  // namespace accel
