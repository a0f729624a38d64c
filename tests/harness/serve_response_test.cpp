// serve_response: the UTF-8 hold-back of streamed text and the shapes clients parse.
#include "harness/serve_response.h"

#include <gtest/gtest.h>

namespace accel {
namespace {

TEST(ServeResponse, IncompleteUtf8Tail) {
  EXPECT_EQ(incomplete_utf8_tail(""), 0u);
  EXPECT_EQ(incomplete_utf8_tail("abc"), 0u);
  EXPECT_EQ(incomplete_utf8_tail("a\xC3"), 1u);         // first byte of a 2-byte character
  EXPECT_EQ(incomplete_utf8_tail("a\xC3\xA9"), 0u);     // é complete
  EXPECT_EQ(incomplete_utf8_tail("\xE2\x82"), 2u);      // 2 of the 3 bytes of €
  EXPECT_EQ(incomplete_utf8_tail("\xE2\x82\xAC"), 0u);  // € complete
  EXPECT_EQ(incomplete_utf8_tail("\xF0\x9F\x98"), 3u);  // 3 of the 4 bytes of an emoji
  EXPECT_EQ(incomplete_utf8_tail("\xF0\x9F\x98\x80"), 0u);
}

TEST(ServeResponse, ChunksAndUsage) {
  const ResponseHead h{"chatcmpl-1", 7, "m", true};
  const auto first = stream_chunk(h, "Hi", {5}, true, "", nullptr);
  EXPECT_EQ(first["object"], "chat.completion.chunk");
  EXPECT_EQ(first["choices"][0]["delta"]["role"], "assistant");
  EXPECT_EQ(first["choices"][0]["delta"]["content"], "Hi");
  EXPECT_TRUE(first["choices"][0]["finish_reason"].is_null());
  const auto last = stream_chunk(h, "", {}, false, "length", {{"method", "baseline"}});
  EXPECT_EQ(last["choices"][0]["finish_reason"], "length");
  EXPECT_FALSE(last["choices"][0]["delta"].contains("content"));
  EXPECT_EQ(last["accelbench"]["method"], "baseline");
  const auto u = usage_chunk(h, usage_json(10, 3));
  EXPECT_TRUE(u["choices"].empty());
  EXPECT_EQ(u["usage"]["total_tokens"], 13);
  EXPECT_EQ(sse({{"a", 1}}), "data: {\"a\":1}\n\n");
}

}  // namespace
}  // namespace accel
