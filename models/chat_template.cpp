// Chat template recognition and the per-family renderers (see chat_template.h). Each renderer is
// the family's Jinja template transcribed for string contents; comments quote the Jinja
// constructs they reproduce so a reader can check them against the source.
#include "models/chat_template.h"

#include <cstdint>

#include "models/gguf.h"

namespace accel {

namespace {

bool contains(const std::string& s, const char* sub) {
  return s.find(sub) != std::string::npos;
}

// Jinja's `trim` / Python's str.strip(): ASCII whitespace at both ends.
std::string trim(const std::string& s) {
  const char* ws = " \t\n\r\f\v";
  const size_t b = s.find_first_not_of(ws);
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(ws) - b + 1);
}

// Gemma 4's strip_thinking macro: split at '<channel|>'; a part holding '<|channel>' keeps only
// what precedes it; the parts joined, then trimmed.
std::string strip_thinking(const std::string& s) {
  std::string out;
  size_t b = 0;
  while (true) {
    const size_t e = s.find("<channel|>", b);
    std::string part = s.substr(b, e == std::string::npos ? std::string::npos : e - b);
    if (const size_t c = part.find("<|channel>"); c != std::string::npos) part.resize(c);
    out += part;
    if (e == std::string::npos) break;
    b = e + 10;
  }
  return trim(out);
}

std::string lstrip_newlines(const std::string& s) {
  const size_t b = s.find_first_not_of('\n');
  return b == std::string::npos ? "" : s.substr(b);
}

}  // namespace

const char* chat_family_name(ChatFamily f) {
  switch (f) {
    case ChatFamily::Llama3:
      return "llama3";
    case ChatFamily::Llama31:
      return "llama3.1";
    case ChatFamily::ChatML:
      return "chatml";
    case ChatFamily::Gemma:
      return "gemma";
    case ChatFamily::Llama2:
      return "llama2";
    case ChatFamily::Gemma4:
      return "gemma4";
    case ChatFamily::Harmony:
      return "gpt-oss";
  }
  return "?";
}

ChatTemplate ChatTemplate::recognise(const std::string& source, const std::string& origin,
                                     std::string bos_text, std::string eos_text) {
  ChatTemplate t;
  t.origin_ = origin;
  t.bos_ = std::move(bos_text);
  t.eos_ = std::move(eos_text);
  if (contains(source, "<|start_header_id|>") && contains(source, "<|end_header_id|>")) {
    t.family_ =
        contains(source, "Cutting Knowledge Date") ? ChatFamily::Llama31 : ChatFamily::Llama3;
  } else if (contains(source, "<|im_start|>")) {
    t.family_ = ChatFamily::ChatML;
    // Qwen2.5 and Qwen2 write a default system turn when the conversation has none.
    if (contains(source, "You are Qwen, created by Alibaba Cloud. You are a helpful assistant."))
      t.default_system_ = "You are Qwen, created by Alibaba Cloud. You are a helpful assistant.";
    else if (contains(source, "You are a helpful assistant."))
      t.default_system_ = "You are a helpful assistant.";
    t.strip_thinking_ = contains(source, "</think>");  // Qwen3
  } else if (contains(source, "<|start|>") && contains(source, "<|channel|>")) {
    t.family_ = ChatFamily::Harmony;  // llama-chat.cpp's test for LLM_CHAT_TEMPLATE_OPENAI_MOE
  } else if (contains(source, "<|turn>") && contains(source, "<turn|>")) {
    t.family_ = ChatFamily::Gemma4;
  } else if (contains(source, "<start_of_turn>")) {
    t.family_ = ChatFamily::Gemma;
    t.system_in_first_user_ = contains(source, "first_user_prefix");  // Gemma 3
  } else if (contains(source, "[INST]") && contains(source, "<<SYS>>")) {
    t.family_ = ChatFamily::Llama2;
  } else {
    throw ChatTemplateError(
        "[chat_template] " + origin +
        ": not a recognised chat template (templates are recognised by their distinctive text, "
        "not run by a Jinja engine; known: Llama 3 / 3.1, ChatML (Qwen), Gemma 2 / 3, Gemma 4, "
        "GPT-OSS (harmony), Llama 2)");
  }
  return t;
}

std::optional<ChatTemplate> ChatTemplate::from_gguf(const GgufFile& f) {
  const auto source = f.get_string_opt("tokenizer.chat_template");
  if (!source) return std::nullopt;
  std::string bos, eos;
  if (const GgufValue* toks = f.find("tokenizer.ggml.tokens");
      toks && toks->type == GgufType::ARRAY && toks->elem == GgufType::STRING) {
    auto text = [&](const char* key) -> std::string {
      const GgufValue* v = f.find(key);
      // Unsigned ids only; a signed -1 or an out-of-range id means "none" here (the tokenizer
      // loader is the one that validates them).
      if (!v || v->type == GgufType::INT32 || v->type == GgufType::INT64) return "";
      const auto id = f.get_uint_opt(key);
      return id && *id < toks->arr_s.size() ? toks->arr_s[size_t(*id)] : "";
    };
    bos = text("tokenizer.ggml.bos_token_id");
    eos = text("tokenizer.ggml.eos_token_id");
  }
  return recognise(*source, f.path() + ": tokenizer.chat_template", bos, eos);
}

std::string ChatTemplate::end_of_turn() const {
  switch (family_) {
    case ChatFamily::Llama3:
    case ChatFamily::Llama31:
      return "<|eot_id|>";
    case ChatFamily::ChatML:
      return "<|im_end|>";
    case ChatFamily::Gemma:
      return "<end_of_turn>";
    case ChatFamily::Llama2:
      return eos_;
    case ChatFamily::Gemma4:
      return "<turn|>";
    case ChatFamily::Harmony:
      return "<|return|>";
  }
  return eos_;
}

std::string ChatTemplate::apply(std::span<const ChatMessage> messages,
                                bool add_generation_prompt) const {
  auto fail = [&](const std::string& what) -> ChatTemplateError {
    return ChatTemplateError("[chat_template] " + origin_ + " (" + chat_family_name(family_) +
                             "): " + what);
  };
  for (const ChatMessage& m : messages)
    if (m.role != "system" && m.role != "user" && m.role != "assistant")
      throw fail("role '" + m.role + "' is not supported (system, user, assistant)");
  if (messages.empty()) throw fail("no messages");
  const bool has_system = messages[0].role == "system";
  const std::span<const ChatMessage> rest = has_system ? messages.subspan(1) : messages;
  for (size_t i = 1; i < messages.size(); ++i)
    if (messages[i].role == "system" && family_ != ChatFamily::ChatML &&
        family_ != ChatFamily::Harmony)
      throw fail("a system message is only supported first");
  // Gemma and Llama 2: raise_exception unless roles alternate user/assistant from the first
  // non-system message.
  auto check_alternation = [&] {
    for (size_t i = 0; i < rest.size(); ++i)
      if ((rest[i].role == "user") != (i % 2 == 0))
        throw fail("Conversation roles must alternate user/assistant/user/assistant/...");
  };

  std::string out;
  switch (family_) {
    case ChatFamily::Llama3:
      // bos_token before the first message; each: '<|start_header_id|>' + role +
      // '<|end_header_id|>\n\n' + content | trim + '<|eot_id|>'.
      out = bos_;
      for (const ChatMessage& m : messages)
        out += "<|start_header_id|>" + m.role + "<|end_header_id|>\n\n" + trim(m.content) +
               "<|eot_id|>";
      if (add_generation_prompt) out += "<|start_header_id|>assistant<|end_header_id|>\n\n";
      return out;
    case ChatFamily::Llama31:
      // bos_token; a system header always, with the knowledge and date lines and the (trimmed)
      // system message; then the other messages as Llama 3. date_string is the template's
      // fallback "26 Jul 2024" (Llama 3.2's template asks strftime_now first, which llama.cpp
      // answers with today's date; the fallback keeps prompts reproducible).
      out = bos_ + "<|start_header_id|>system<|end_header_id|>\n\n" +
            "Cutting Knowledge Date: December 2023\nToday Date: 26 Jul 2024\n\n" +
            (has_system ? trim(messages[0].content) : "") + "<|eot_id|>";
      for (const ChatMessage& m : rest)
        out += "<|start_header_id|>" + m.role + "<|end_header_id|>\n\n" + trim(m.content) +
               "<|eot_id|>";
      if (add_generation_prompt) out += "<|start_header_id|>assistant<|end_header_id|>\n\n";
      return out;
    case ChatFamily::ChatML: {
      // '<|im_start|>' + role + '\n' + content + '<|im_end|>\n' per message (no trim), after the
      // default system turn when the template has one and the conversation does not.
      if (!has_system && !default_system_.empty())
        out += "<|im_start|>system\n" + default_system_ + "<|im_end|>\n";
      size_t last_user = 0;
      for (size_t i = 0; i < messages.size(); ++i)
        if (messages[i].role == "user") last_user = i;
      for (size_t i = 0; i < messages.size(); ++i) {
        std::string content = messages[i].content;
        if (strip_thinking_ && messages[i].role == "assistant") {
          // Qwen3: earlier assistant turns keep only the text after '</think>' (lstrip '\n');
          // a turn after the last user message would get a rendered <think> block, which this
          // renderer does not reproduce.
          if (i > last_user) throw fail("an assistant turn after the last user turn (Qwen3)");
          const size_t e = content.rfind("</think>");
          if (e != std::string::npos) content = lstrip_newlines(content.substr(e + 8));
        }
        out += "<|im_start|>" + messages[i].role + "\n" + content + "<|im_end|>\n";
      }
      if (add_generation_prompt) out += "<|im_start|>assistant\n";
      return out;
    }
    case ChatFamily::Gemma: {
      // bos_token; Gemma 2 raises on a system message, Gemma 3 puts its content + '\n\n' before
      // the first turn's text; each turn: '<start_of_turn>' + (assistant -> 'model') + '\n' +
      // content | trim + '<end_of_turn>\n'.
      if (has_system && !system_in_first_user_) throw fail("System role not supported");
      check_alternation();
      out = bos_;
      for (size_t i = 0; i < rest.size(); ++i) {
        const std::string role = rest[i].role == "assistant" ? "model" : rest[i].role;
        out += "<start_of_turn>" + role + "\n";
        if (i == 0 && has_system) out += messages[0].content + "\n\n";
        out += trim(rest[i].content) + "<end_of_turn>\n";
      }
      if (add_generation_prompt) out += "<start_of_turn>model\n";
      return out;
    }
    case ChatFamily::Gemma4: {
      // bos_token; a first system message as '<|turn>system\n' + content | trim + '<turn|>\n';
      // each other message: '<|turn>' + (assistant -> 'model') + '\n' (left out when an assistant
      // message follows an assistant one: the same model turn continues) + content + '<turn|>\n',
      // the content trimmed, and for the model with its '<|channel>...<channel|>' thinking parts
      // removed first (strip_thinking); generation prompt '<|turn>model\n'. (The template's
      // tools, thinking switch and media are not rendered.)
      out = bos_;
      if (has_system) out += "<|turn>system\n" + trim(messages[0].content) + "<turn|>\n";
      for (size_t i = 0; i < rest.size(); ++i) {
        const bool model = rest[i].role == "assistant";
        if (!(model && i > 0 && rest[i - 1].role == "assistant"))
          out += "<|turn>" + std::string(model ? "model" : rest[i].role) + "\n";
        out += (model ? strip_thinking(rest[i].content) : trim(rest[i].content)) + "<turn|>\n";
      }
      if (add_generation_prompt) out += "<|turn>model\n";
      return out;
    }
    case ChatFamily::Harmony:
      // llama-chat.cpp (LLM_CHAT_TEMPLATE_OPENAI_MOE): per message '<|start|>' + role +
      // '<|message|>' + content + ('<|return|>' for the assistant, else '<|end|>'); generation
      // prompt '<|start|>assistant'. Contents are not trimmed.
      for (const ChatMessage& m : messages)
        out += "<|start|>" + m.role + "<|message|>" + m.content +
               (m.role == "assistant" ? "<|return|>" : "<|end|>");
      if (add_generation_prompt) out += "<|start|>assistant";
      return out;
    case ChatFamily::Llama2:
      // user: bos_token + '[INST] ' + content.strip() + ' [/INST]', the first one's content
      // prefixed with '<<SYS>>\n' + system + '\n<</SYS>>\n\n'; assistant: ' ' + content.strip()
      // + ' ' + eos_token. The template has no generation prompt (the [/INST] is the cue).
      check_alternation();
      for (size_t i = 0; i < rest.size(); ++i) {
        std::string content = rest[i].content;
        if (i == 0 && has_system)
          content = "<<SYS>>\n" + messages[0].content + "\n<</SYS>>\n\n" + content;
        if (rest[i].role == "user")
          out += bos_ + "[INST] " + trim(content) + " [/INST]";
        else
          out += " " + trim(content) + " " + eos_;
      }
      return out;
  }
  return out;
}

}  // namespace accel
