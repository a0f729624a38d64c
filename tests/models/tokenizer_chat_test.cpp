// Special tokens and add_bos/add_eos of the real Llama 3 (`llama-bpe`) and Qwen2 (`qwen2`)
// vocabularies in shared/data/llama.cpp-vocab, and chat prompts rendered by models/chat_template
// and tokenized with them: the ids are the ones the models' own chat formats are documented with
// (Llama 3: 128000 <|begin_of_text|>, 128006/128007 header tokens, 271 "\n\n", 128009
// <|eot_id|>; Qwen2: 151644/151645 <|im_start|>/<|im_end|>, 198 "\n"). Skips without the data.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "models/chat_template.h"
#include "models/gguf.h"
#include "models/tokenizer.h"
#include "tests/support/test_support.h"

namespace {

using namespace accel;

std::unique_ptr<Tokenizer> vocab(const std::string& name) {
  const auto p = test::shared_data("llama.cpp-vocab/ggml-vocab-" + name + ".gguf");
  if (!p) return nullptr;
  return Tokenizer::create(TokenizerSpec::from_gguf(GgufFile::open(p->string())));
}

TEST(TokenizerChat, Llama3SpecialTokensAndAddBosFromMetadata) {
  const auto t = vocab("llama-bpe");
  if (!t) GTEST_SKIP() << test::missing_shared_data("llama.cpp-vocab/ggml-vocab-llama-bpe.gguf");
  EXPECT_TRUE(t->spec().add_bos);
  EXPECT_FALSE(t->spec().add_eos);
  EXPECT_EQ(t->bos(), 128000);
  EXPECT_EQ(t->encode("Hi", true, false), (std::vector<int32_t>{128000, 13347}));
  // Control tokens are matched only with parse_special (as llama.cpp's tokenizer does).
  EXPECT_EQ(t->encode("<|eot_id|>", false, true), std::vector<int32_t>{128009});
  EXPECT_GT(t->encode("<|eot_id|>", false, false).size(), 1u);

  const std::string src = "'<|start_header_id|>' + message['role'] + '<|end_header_id|>\\n\\n'";
  const ChatTemplate tmpl = ChatTemplate::recognise(src, "llama-bpe", t->piece(t->bos()), "");
  const std::vector<ChatMessage> msgs = {{"user", "Hi"}};
  EXPECT_EQ(t->encode(tmpl.apply(msgs, true), false, true),
            (std::vector<int32_t>{128000, 128006, 882, 128007, 271, 13347, 128009, 128006, 78191,
                                  128007, 271}));
  EXPECT_EQ(t->encode(tmpl.end_of_turn(), false, true), std::vector<int32_t>{128009});
}

TEST(TokenizerChat, Qwen2SpecialTokensAndNoBosFromMetadata) {
  const auto t = vocab("qwen2");
  if (!t) GTEST_SKIP() << test::missing_shared_data("llama.cpp-vocab/ggml-vocab-qwen2.gguf");
  EXPECT_FALSE(t->spec().add_bos);
  EXPECT_FALSE(t->spec().add_eos);
  EXPECT_EQ(t->encode("Hi", true, false), std::vector<int32_t>{13048});
  const ChatTemplate tmpl =
      ChatTemplate::recognise("{{ '<|im_start|>' + message['role'] }}", "qwen2", "", "");
  const std::vector<ChatMessage> msgs = {{"user", "Hi"}};
  EXPECT_EQ(t->encode(tmpl.apply(msgs, true), false, true),
            (std::vector<int32_t>{151644, 872, 198, 13048, 151645, 198, 151644, 77091, 198}));
  EXPECT_EQ(t->encode(tmpl.end_of_turn(), false, true), std::vector<int32_t>{151645});
}

}  // namespace
