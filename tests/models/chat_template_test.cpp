// Chat templates (models/chat_template): recognition of each family's Jinja source, the rendered
// prompt against strings worked out by hand from the Jinja (system + user, multi-turn, with and
// without the generation prompt), the errors for unknown templates and rejected conversations,
// reading from GGUF metadata, and `generate --chat`. Tests only.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "models/chat_template.h"
#include "models/gguf.h"
#include "models/synthetic.h"
#include "tests/support/test_support.h"

namespace {

using accel::ChatFamily;
using accel::ChatMessage;
using accel::ChatTemplate;
using accel::ChatTemplateError;

// Meta-Llama-3-8B-Instruct's template, verbatim.
const char* kLlama3 =
    "{% set loop_messages = messages %}{% for message in loop_messages %}{% set content = "
    "'<|start_header_id|>' + message['role'] + '<|end_header_id|>\\n\\n'+ message['content'] | "
    "trim + '<|eot_id|>' %}{% if loop.index0 == 0 %}{% set content = bos_token + content %}{% "
    "endif %}{{ content }}{% endfor %}{% if add_generation_prompt %}{{ "
    "'<|start_header_id|>assistant<|end_header_id|>\\n\\n' }}{% endif %}";
// The lines of Llama 3.1's template that identify it (the full one also handles tools).
const char* kLlama31 =
    "{{- bos_token }}\n{%- if not date_string is defined %}\n    {%- set date_string = \"26 Jul "
    "2024\" %}\n{%- endif %}\n{{- \"<|start_header_id|>system<|end_header_id|>\\n\\n\" }}\n{{- "
    "\"Cutting Knowledge Date: December 2023\\n\" }}\n{{- \"Today Date: \" + date_string + "
    "\"\\n\\n\" }}\n{{- system_message }}\n{{- \"<|eot_id|>\" }}";
// Qwen2.5-Instruct's default-system branch (no tools).
const char* kQwen25 =
    "{%- if messages[0]['role'] == 'system' %}\n        {{- '<|im_start|>system\\n' + "
    "messages[0]['content'] + '<|im_end|>\\n' }}\n    {%- else %}\n        {{- "
    "'<|im_start|>system\\nYou are Qwen, created by Alibaba Cloud. You are a helpful "
    "assistant.<|im_end|>\\n' }}\n    {%- endif %}";
// Qwen3's assistant branch (reasoning is split off at '</think>').
const char* kQwen3 =
    "{%- for message in messages %}{{- '<|im_start|>' + message.role + '\\n' + content }}{%- if "
    "'</think>' in content %}{%- set content = content.split('</think>')[-1].lstrip('\\n') "
    "%}{%- endif %}{%- endfor %}";
// A plain ChatML template (no default system).
const char* kChatML =
    "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + "
    "message['content'] + '<|im_end|>' + '\\n'}}{% endfor %}{% if add_generation_prompt %}{{ "
    "'<|im_start|>assistant\\n' }}{% endif %}";
// gemma-2-9b-it's template, verbatim.
const char* kGemma2 =
    "{{ bos_token }}{% if messages[0]['role'] == 'system' %}{{ raise_exception('System role not "
    "supported') }}{% endif %}{% for message in messages %}{% if (message['role'] == 'user') != "
    "(loop.index0 % 2 == 0) %}{{ raise_exception('Conversation roles must alternate "
    "user/assistant/user/assistant/...') }}{% endif %}{% if (message['role'] == 'assistant') "
    "%}{% set role = 'model' %}{% else %}{% set role = message['role'] %}{% endif %}{{ "
    "'<start_of_turn>' + role + '\\n' + message['content'] | trim + '<end_of_turn>\\n' }}{% "
    "endfor %}{% if add_generation_prompt %}{{'<start_of_turn>model\\n'}}{% endif %}";
const char* kGemma3 =
    "{{ bos_token }}{%- if messages[0]['role'] == 'system' -%}{%- set first_user_prefix = "
    "messages[0]['content'] + '\\n\\n' -%}{%- endif -%}{{ '<start_of_turn>' + role + '\\n' + "
    "(first_user_prefix if loop.first else \"\") }}";
const char* kLlama2 =
    "{% if messages[0]['role'] == 'system' %}{% set loop_messages = messages[1:] %}{% set "
    "system_message = messages[0]['content'] %}{% else %}{% set loop_messages = messages %}{% set "
    "system_message = false %}{% endif %}{% for message in loop_messages %}{% if loop.index0 == 0 "
    "and system_message != false %}{% set content = '<<SYS>>\\n' + system_message + "
    "'\\n<</SYS>>\\n\\n' + message['content'] %}{% else %}{% set content = message['content'] %}{% "
    "endif %}{% if message['role'] == 'user' %}{{ bos_token + '[INST] ' + content.strip() + ' "
    "[/INST]' }}{% elif message['role'] == 'assistant' %}{{ ' '  + content.strip() + ' ' + "
    "eos_token }}{% endif %}{% endfor %}";

// Lines of google-gemma-4-31B-it's template that carry its turn markers.
const char* kGemma4 =
    "{{- bos_token -}}\n{%- if (enable_thinking is defined and enable_thinking) or tools or "
    "messages[0]['role'] in ['system', 'developer'] -%}\n    {{- '<|turn>system\\n' -}}\n"
    "{{- '<turn|>\\n' -}}\n{%- if add_generation_prompt -%}\n{{- '<|turn>model\\n' -}}";
// Lines of openai/gpt-oss-20b's harmony template (the full one renders channels and tools).
const char* kHarmony =
    "{{- \"<|start|>system<|message|>\" }}{{- \"<|start|>assistant<|channel|>final<|message|>\" "
    "}}{%- if add_generation_prompt -%}<|start|>assistant{%- endif -%}";

ChatTemplate make(const char* src, const char* bos = "<s>", const char* eos = "</s>") {
  return ChatTemplate::recognise(src, "test.gguf: tokenizer.chat_template", bos, eos);
}

const std::vector<ChatMessage> kSystemUser = {{"system", "Be brief."}, {"user", " Hi there \n"}};
const std::vector<ChatMessage> kMultiTurn = {
    {"user", "What is 2+2?"}, {"assistant", "4"}, {"user", "And 3+3?"}};

TEST(ChatTemplate, RecognisesEachFamilyFromItsJinjaSource) {
  EXPECT_EQ(make(kLlama3).family(), ChatFamily::Llama3);
  EXPECT_EQ(make(kLlama31).family(), ChatFamily::Llama31);
  EXPECT_EQ(make(kQwen25).family(), ChatFamily::ChatML);
  EXPECT_EQ(make(kQwen3).family(), ChatFamily::ChatML);
  EXPECT_EQ(make(kChatML).family(), ChatFamily::ChatML);
  EXPECT_EQ(make(kGemma2).family(), ChatFamily::Gemma);
  EXPECT_EQ(make(kGemma3).family(), ChatFamily::Gemma);
  EXPECT_EQ(make(kLlama2).family(), ChatFamily::Llama2);
  EXPECT_EQ(make(kGemma4).family(), ChatFamily::Gemma4);
  EXPECT_EQ(make(kHarmony).family(), ChatFamily::Harmony);
  EXPECT_EQ(make(kGemma4).end_of_turn(), "<turn|>");
  EXPECT_EQ(make(kHarmony).end_of_turn(), "<|return|>");
  EXPECT_EQ(make(kLlama3).end_of_turn(), "<|eot_id|>");
  EXPECT_EQ(make(kChatML).end_of_turn(), "<|im_end|>");
  EXPECT_EQ(make(kGemma2).end_of_turn(), "<end_of_turn>");
  EXPECT_EQ(make(kLlama2).end_of_turn(), "</s>");
}

TEST(ChatTemplate, UnknownTemplateErrorNamesTheFileAndSaysItIsRecognition) {
  // Mistral's [INST] template without <<SYS>>, and an arbitrary one.
  for (const char* src : {"{{ bos_token }}{% for m in messages %}[INST] {{ m.content }} [/INST]"
                          "{% endfor %}",
                          "{{ messages }}"}) {
    try {
      (void)make(src);
      ADD_FAILURE() << "recognised: " << src;
    } catch (const ChatTemplateError& e) {
      const std::string w = e.what();
      EXPECT_NE(w.find("test.gguf: tokenizer.chat_template"), std::string::npos) << w;
      EXPECT_NE(w.find("not a recognised chat template"), std::string::npos) << w;
      EXPECT_NE(w.find("not run by a Jinja engine"), std::string::npos) << w;
    }
  }
}

TEST(ChatTemplate, Llama3RendersHandWorkedPrompts) {
  const ChatTemplate t = make(kLlama3, "<|begin_of_text|>", "<|end_of_text|>");
  EXPECT_EQ(t.apply(kSystemUser, true),
            "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nBe brief.<|eot_id|>"
            "<|start_header_id|>user<|end_header_id|>\n\nHi there<|eot_id|>"
            "<|start_header_id|>assistant<|end_header_id|>\n\n");
  EXPECT_EQ(t.apply(kMultiTurn, false),
            "<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nWhat is 2+2?<|eot_id|>"
            "<|start_header_id|>assistant<|end_header_id|>\n\n4<|eot_id|>"
            "<|start_header_id|>user<|end_header_id|>\n\nAnd 3+3?<|eot_id|>");
}

TEST(ChatTemplate, Llama31WritesItsSystemHeaderWithOrWithoutASystemMessage) {
  const ChatTemplate t = make(kLlama31, "<|begin_of_text|>", "<|end_of_text|>");
  const std::string head =
      "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\n"
      "Cutting Knowledge Date: December 2023\nToday Date: 26 Jul 2024\n\n";
  EXPECT_EQ(t.apply(kSystemUser, true),
            head +
                "Be brief.<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nHi there"
                "<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n");
  const std::vector<ChatMessage> user = {{"user", "Hi"}};
  EXPECT_EQ(t.apply(user, false),
            head + "<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>");
}

TEST(ChatTemplate, ChatMLRendersHandWorkedPromptsWithQwenDefaults) {
  // Plain ChatML: no trim, no default system.
  EXPECT_EQ(make(kChatML).apply(kSystemUser, true),
            "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\n Hi there \n<|im_end|>\n"
            "<|im_start|>assistant\n");
  // Qwen2.5 adds its default system turn when there is none.
  EXPECT_EQ(make(kQwen25).apply(kMultiTurn, true),
            "<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a helpful "
            "assistant.<|im_end|>\n<|im_start|>user\nWhat is 2+2?<|im_end|>\n"
            "<|im_start|>assistant\n4<|im_end|>\n<|im_start|>user\nAnd 3+3?<|im_end|>\n"
            "<|im_start|>assistant\n");
  EXPECT_EQ(make(kQwen25).apply(kSystemUser, false),
            "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\n Hi there \n<|im_end|>\n");
  // Qwen3 drops the reasoning of earlier assistant turns and has no default system.
  const std::vector<ChatMessage> think = {
      {"user", "Q1"}, {"assistant", "<think>\nhmm\n</think>\n\nA1"}, {"user", "Q2"}};
  EXPECT_EQ(make(kQwen3).apply(think, true),
            "<|im_start|>user\nQ1<|im_end|>\n<|im_start|>assistant\nA1<|im_end|>\n"
            "<|im_start|>user\nQ2<|im_end|>\n<|im_start|>assistant\n");
  const std::vector<ChatMessage> trailing = {{"user", "Q"}, {"assistant", "A"}};
  EXPECT_THROW((void)make(kQwen3).apply(trailing, false), ChatTemplateError);
}

TEST(ChatTemplate, GemmaRendersHandWorkedPromptsAndRefusesWhatItsTemplateRefuses) {
  const ChatTemplate g2 = make(kGemma2, "<bos>", "<eos>");
  EXPECT_EQ(g2.apply(kMultiTurn, true),
            "<bos><start_of_turn>user\nWhat is 2+2?<end_of_turn>\n<start_of_turn>model\n4"
            "<end_of_turn>\n<start_of_turn>user\nAnd 3+3?<end_of_turn>\n<start_of_turn>model\n");
  EXPECT_THROW((void)g2.apply(kSystemUser, true), ChatTemplateError);  // System role not supported
  const std::vector<ChatMessage> not_alternating = {{"user", "a"}, {"user", "b"}};
  EXPECT_THROW((void)g2.apply(not_alternating, true), ChatTemplateError);
  // Gemma 3: the system text (untrimmed) + "\n\n" opens the first user turn.
  EXPECT_EQ(make(kGemma3, "<bos>", "<eos>").apply(kSystemUser, false),
            "<bos><start_of_turn>user\nBe brief.\n\nHi there<end_of_turn>\n");
}

// Gemma 4 (its Jinja, plain text): system first in its own turn, trimmed contents, the model's
// thinking channel stripped from earlier answers, consecutive answers sharing one model turn.
TEST(ChatTemplate, Gemma4RendersHandWorkedPrompts) {
  const ChatTemplate t = make(kGemma4, "<bos>", "<eos>");
  EXPECT_EQ(t.apply(kSystemUser, true),
            "<bos><|turn>system\nBe brief.<turn|>\n<|turn>user\nHi there<turn|>\n<|turn>model\n");
  EXPECT_EQ(t.apply(kMultiTurn, false),
            "<bos><|turn>user\nWhat is 2+2?<turn|>\n<|turn>model\n4<turn|>\n<|turn>user\nAnd "
            "3+3?<turn|>\n");
  const std::vector<ChatMessage> thought = {
      {"user", "q"}, {"assistant", "<|channel>thought\nhmm<channel|> A \n"}, {"assistant", "B"}};
  EXPECT_EQ(t.apply(thought, true),
            "<bos><|turn>user\nq<turn|>\n<|turn>model\nA<turn|>\nB<turn|>\n<|turn>model\n");
}

// GPT-OSS as llama-chat.cpp's built-in `gpt-oss` template renders it: contents verbatim,
// '<|return|>' after the assistant's, '<|end|>' after the others'.
TEST(ChatTemplate, HarmonyRendersLlamaCppsBuiltInFormat) {
  const ChatTemplate t = make(kHarmony, "<|startoftext|>", "<|return|>");
  EXPECT_EQ(t.apply(kSystemUser, true),
            "<|start|>system<|message|>Be brief.<|end|><|start|>user<|message|> Hi there \n<|end|>"
            "<|start|>assistant");
  EXPECT_EQ(t.apply(kMultiTurn, false),
            "<|start|>user<|message|>What is 2+2?<|end|><|start|>assistant<|message|>4<|return|>"
            "<|start|>user<|message|>And 3+3?<|end|>");
}

TEST(ChatTemplate, Llama2RendersHandWorkedPrompts) {
  const ChatTemplate t = make(kLlama2);
  EXPECT_EQ(t.apply(kSystemUser, true),
            "<s>[INST] <<SYS>>\nBe brief.\n<</SYS>>\n\n Hi there [/INST]");
  EXPECT_EQ(t.apply(kMultiTurn, false),
            "<s>[INST] What is 2+2? [/INST] 4 </s><s>[INST] And 3+3? [/INST]");
}

TEST(ChatTemplate, RefusesUnknownRolesAndEmptyConversations) {
  const std::vector<ChatMessage> tool = {{"user", "x"}, {"tool", "y"}};
  EXPECT_THROW((void)make(kChatML).apply(tool, true), ChatTemplateError);
  EXPECT_THROW((void)make(kChatML).apply({}, true), ChatTemplateError);
}

// A GGUF with the tiny family's byte-level tokenizer (BOS "<|bos|>") and a template.
std::string write_with_template(const accel::test::TempDir& dir, const std::string& tmpl) {
  accel::SyntheticMemberSpec s;
  s.role = "t";
  s.n_layer = 1;
  s.n_embd = 64;
  s.n_head = 4;
  s.n_head_kv = 4;
  s.n_ff = 64;
  s.n_ctx = 512;
  const std::string base = dir.file("base.gguf");
  accel::write_synthetic_model(s, "chat", 1, accel::DType::F32, base);
  const accel::GgufFile in = accel::GgufFile::open(base);
  accel::GgufWriter w;
  for (const auto& [k, v] : in.metadata()) w.set(k, v);
  w.set("tokenizer.chat_template", accel::GgufValue::of_string(tmpl));
  for (const auto& t : in.tensors())
    w.add_tensor(t.name, t.dims, t.type, in.tensor_data(t), t.n_bytes);
  const std::string out = dir.file("chat.gguf");
  w.write(out);
  return out;
}

TEST(ChatTemplate, FromGgufReadsTheTemplateWithTheVocabularysBosText) {
  accel::test::TempDir dir;
  const auto f = accel::GgufFile::open(write_with_template(dir, kLlama3));
  const auto t = ChatTemplate::from_gguf(f);
  ASSERT_TRUE(t.has_value());
  const std::vector<ChatMessage> user = {{"user", "hi"}};
  EXPECT_EQ(t->apply(user, false),
            "<|bos|><|start_header_id|>user<|end_header_id|>\n\nhi<|eot_id|>");
  const auto bad = accel::GgufFile::open(write_with_template(dir, "{{ nothing }}"));
  try {
    (void)ChatTemplate::from_gguf(bad);
    ADD_FAILURE() << "recognised";
  } catch (const ChatTemplateError& e) {
    EXPECT_NE(std::string(e.what()).find(bad.path()), std::string::npos) << e.what();
  }
}

// `generate --chat` feeds the rendered prompt: with ChatML on the byte-level tokenizer (which has
// no <|im_start|> token, so those texts are bytes) the prompt is BOS (the tokenizer adds it and
// ChatML does not write it) then one token per byte of the rendered text.
TEST(ChatTemplate, GenerateChatTokenizesTheRenderedPrompt) {
  accel::test::TempDir dir;
  const std::string model = write_with_template(dir, kChatML);
  std::string out;
  ASSERT_EQ(accel::test::run_cli(
                "generate --model " + model + " --chat --prompt hi --max-tokens 1 --json", &out),
            0)
      << out;
  const std::string rendered = "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n";
  std::string want = "\"prompt_tokens\": [\n    256";
  for (unsigned char c : rendered) want += ",\n    " + std::to_string(int(c));
  EXPECT_NE(out.find(want + "\n  ]"), std::string::npos) << out;
  std::string plain;
  ASSERT_NE(accel::test::run_cli(
                "generate --model " + dir.file("base.gguf") + " --chat --prompt hi --max-tokens 1",
                &plain),
            0);
  EXPECT_NE(plain.find("has no tokenizer.chat_template"), std::string::npos) << plain;
}

}  // namespace
