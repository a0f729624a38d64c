// The OpenAI-compatible JSON that `accelbench serve` answers with: completion and chat bodies,
// their streamed chunks, usage, errors, and the incremental detokenizer that turns streamed token
// ids into text deltas without splitting a UTF-8 character. Pure functions over values; owns no
// HTTP and no engine.
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace accel {

class Tokenizer;

// The text of the tokens seen so far, emitted as deltas. A delta never ends inside a UTF-8
// sequence: trailing bytes of an unfinished character wait for the next token (or finish()).
class TextStream {
 public:
  explicit TextStream(const Tokenizer* t) : tok_(t) {}
  std::string push(int32_t token);
  std::string finish();  // whatever is still held back
  std::string text() const;

 private:
  const Tokenizer* tok_;  // null: no text, ids only
  std::vector<int32_t> ids_;
  size_t emitted_ = 0;
};

// Bytes at the end of `s` that begin a UTF-8 sequence the string does not complete.
size_t incomplete_utf8_tail(const std::string& s);

// What every body and chunk carries.
struct ResponseHead {
  std::string id;  // "cmpl-..." or "chatcmpl-..."
  int64_t created = 0;
  std::string model;
  bool chat = false;
};

nlohmann::json usage_json(int64_t prompt_tokens, int64_t completion_tokens);
nlohmann::json error_json(const std::string& message, const std::string& type);

// A non-streamed answer: the text, token ids, finish reason, usage and the `accelbench` report.
nlohmann::json completion_body(const ResponseHead& h, const std::string& text,
                               const std::vector<int32_t>& ids, const std::string& finish_reason,
                               const nlohmann::json& usage, const nlohmann::json& accelbench);
// A streamed chunk: a delta (text and the ids it came from), or with finish_reason the last one
// (then `accelbench`, when not null, rides along). Chat chunks carry role in the first delta.
nlohmann::json stream_chunk(const ResponseHead& h, const std::string& delta,
                            const std::vector<int32_t>& ids, bool first,
                            const std::string& finish_reason, const nlohmann::json& accelbench);
// The usage chunk of stream_options.include_usage: no choices, only usage.
nlohmann::json usage_chunk(const ResponseHead& h, const nlohmann::json& usage);
// "data: <json>\n\n"
std::string sse(const nlohmann::json& j);

}  // namespace accel
