// The response shapes of `accelbench serve` (see serve_response.h). Field names follow OpenAI's
// completions and chat completions objects; `token_ids` (as vLLM's return_token_ids names them)
// and `accelbench` are this server's additions.
#include "harness/serve_response.h"

#include "models/tokenizer.h"

namespace accel {

using nlohmann::json;

size_t incomplete_utf8_tail(const std::string& s) {
  // Look back at most 3 bytes for the lead byte of the last sequence.
  for (size_t back = 1; back <= 3 && back <= s.size(); ++back) {
    const auto c = static_cast<unsigned char>(s[s.size() - back]);
    if ((c & 0xC0) == 0x80) continue;  // continuation byte: keep looking for the lead
    const size_t need = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
    return need > back ? back : 0;
  }
  return 0;
}

std::string TextStream::text() const {
  return tok_ ? tok_->decode(ids_) : std::string();
}

std::string TextStream::push(int32_t token) {
  ids_.push_back(token);
  if (!tok_) return {};
  const std::string t = text();
  const size_t stable = t.size() - incomplete_utf8_tail(t);
  if (stable <= emitted_) return {};
  std::string delta = t.substr(emitted_, stable - emitted_);
  emitted_ = stable;
  return delta;
}

std::string TextStream::finish() {
  if (!tok_) return {};
  const std::string t = text();
  if (t.size() <= emitted_) return {};
  std::string delta = t.substr(emitted_);
  emitted_ = t.size();
  return delta;
}

json usage_json(int64_t prompt_tokens, int64_t completion_tokens) {
  return {{"prompt_tokens", prompt_tokens},
          {"completion_tokens", completion_tokens},
          {"total_tokens", prompt_tokens + completion_tokens}};
}

json error_json(const std::string& message, const std::string& type) {
  return {{"error", {{"message", message}, {"type", type}}}};
}

namespace {
json head_json(const ResponseHead& h, const char* object) {
  return {{"id", h.id}, {"object", object}, {"created", h.created}, {"model", h.model}};
}
json reason(const std::string& r) {
  return r.empty() ? json(nullptr) : json(r);
}
}  // namespace

json completion_body(const ResponseHead& h, const std::string& text,
                     const std::vector<int32_t>& ids, const std::string& finish_reason,
                     const json& usage, const json& accelbench) {
  json j = head_json(h, h.chat ? "chat.completion" : "text_completion");
  json choice = {{"index", 0}, {"finish_reason", reason(finish_reason)}, {"token_ids", ids}};
  if (h.chat)
    choice["message"] = {{"role", "assistant"}, {"content", text}};
  else {
    choice["text"] = text;
    choice["logprobs"] = nullptr;
  }
  j["choices"] = json::array({choice});
  j["usage"] = usage;
  j["accelbench"] = accelbench;
  return j;
}

json stream_chunk(const ResponseHead& h, const std::string& delta, const std::vector<int32_t>& ids,
                  bool first, const std::string& finish_reason, const json& accelbench) {
  json j = head_json(h, h.chat ? "chat.completion.chunk" : "text_completion");
  json choice = {{"index", 0}, {"finish_reason", reason(finish_reason)}, {"token_ids", ids}};
  if (h.chat) {
    json d = json::object();
    if (first) d["role"] = "assistant";
    if (finish_reason.empty() || !delta.empty()) d["content"] = delta;
    choice["delta"] = d;
  } else {
    choice["text"] = delta;
    choice["logprobs"] = nullptr;
  }
  j["choices"] = json::array({choice});
  if (!accelbench.is_null()) j["accelbench"] = accelbench;
  return j;
}

json usage_chunk(const ResponseHead& h, const json& usage) {
  json j = head_json(h, h.chat ? "chat.completion.chunk" : "text_completion");
  j["choices"] = json::array();
  j["usage"] = usage;
  return j;
}

std::string sse(const json& j) {
  return "data: " + j.dump(-1, ' ', false, json::error_handler_t::replace) + "\n\n";
}

}  // namespace accel
