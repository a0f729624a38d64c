// Chat templates from GGUF metadata (`tokenizer.chat_template`) by recognition, not by a Jinja
// engine: the Jinja source is matched against distinctive substrings of the templates the common
// families ship, and each recognised family is rendered by a small hand-written renderer that
// reproduces that template's output for plain text messages (no tools, images or reasoning
// fields). An unrecognised template is refused with an error naming the file. Owns prompt text
// only; tokenizing the result is the caller's (see render_chat_prompt's note).
#pragma once
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace accel {

class GgufFile;

class ChatTemplateError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct ChatMessage {
  std::string role;  // "system", "user" or "assistant"
  std::string content;
};

// The families recognised, with what identifies them in the Jinja source:
//  Llama3   `<|start_header_id|>` and `<|end_header_id|>` (Llama 3 / 3.1 / 3.2 / 3.3 Instruct);
//           `Cutting Knowledge Date` marks the 3.1+ variant with its fixed system header;
//  ChatML   `<|im_start|>` (Qwen2, Qwen2.5, Qwen3 and other ChatML models); the Qwen default
//           system prompts and Qwen3's `</think>` stripping are recognised from their text;
//  Gemma    `<start_of_turn>` (Gemma 2 refuses a system turn; Gemma 3's `first_user_prefix` folds
//           it into the first user turn);
//  Llama2   `[INST]` and `<<SYS>>` (Llama 2 Chat);
//  Gemma4   `<|turn>` and `<turn|>` (Gemma 4's turn markers; system turn first, `model` role);
//  Harmony  `<|start|>` and `<|channel|>` (GPT-OSS), rendered as llama.cpp's llama-chat.cpp
//           built-in `gpt-oss` template does: no default system/developer header, no channels.
enum class ChatFamily { Llama3, Llama31, ChatML, Gemma, Llama2, Gemma4, Harmony };

const char* chat_family_name(ChatFamily f);

class ChatTemplate {
 public:
  // Recognises `source`; throws ChatTemplateError naming `origin` (e.g. the GGUF path and key)
  // when no family matches. bos/eos are the texts of the tokenizer's BOS and EOS tokens (what
  // the Jinja variables bos_token and eos_token hold).
  static ChatTemplate recognise(const std::string& source, const std::string& origin,
                                std::string bos_text, std::string eos_text);
  // The file's `tokenizer.chat_template`, recognised; nullopt when the key is absent. bos/eos
  // texts come from the file's tokenizer.ggml.tokens at the bos/eos ids (empty when unset).
  static std::optional<ChatTemplate> from_gguf(const GgufFile& f);

  ChatFamily family() const { return family_; }
  // The text that ends an assistant turn (`<|eot_id|>`, `<|im_end|>`, `<end_of_turn>`, `<turn|>`,
  // `<|return|>`, or the EOS text for Llama 2): generation with this template stops at that token.
  std::string end_of_turn() const;

  // The prompt the template renders for `messages` (roles system/user/assistant; anything else,
  // or an order the template rejects, throws ChatTemplateError), followed by the assistant
  // header when add_generation_prompt is set. The text includes BOS where the template writes
  // bos_token: tokenize it with special-token parsing and without adding BOS again.
  std::string apply(std::span<const ChatMessage> messages, bool add_generation_prompt) const;

 private:
  ChatTemplate() = default;
  ChatFamily family_ = ChatFamily::ChatML;
  std::string origin_, bos_, eos_;
  std::string default_system_;   // ChatML: the system turn written when none is given ("" = none)
  bool strip_thinking_ = false;  // ChatML (Qwen3): drop `...</think>` from earlier assistant turns
  bool system_in_first_user_ = false;  // Gemma 3
};

}  // namespace accel
