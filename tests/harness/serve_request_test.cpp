// parse_serve_request: what is accepted, and that every refusal is a 400 naming the member or the
// bound (the messages are what a client sees).
#include "harness/serve_request.h"

#include <gtest/gtest.h>

namespace accel {
namespace {

ServeLimits limits() {
  ServeLimits l;
  l.max_tokens = 64;
  return l;
}

// The ServeError of a body, or fails the test when it parses.
ServeError refusal(const std::string& body, bool chat = false) {
  try {
    parse_serve_request(body, chat, limits());
  } catch (const ServeError& e) {
    return e;
  }
  ADD_FAILURE() << "accepted: " << body;
  return ServeError(0, "", "");
}

TEST(ServeRequest, CompletionWithTextIdsAndMethodControl) {
  const ServeRequest r = parse_serve_request(
      R"({"model":"m","prompt":"hi","max_tokens":5,"temperature":0,"stream":true,
          "stream_options":{"include_usage":true},
          "accelbench":{"method":"specprefill","params":{"keep":0.2}}})",
      false, limits());
  EXPECT_EQ(*r.text, "hi");
  EXPECT_EQ(r.max_tokens, 5);
  EXPECT_TRUE(r.stream);
  EXPECT_TRUE(r.include_usage);
  EXPECT_EQ(r.method, "specprefill");
  EXPECT_EQ(r.params["keep"], 0.2);
  const ServeRequest ids = parse_serve_request(R"({"prompt":[1,2,3]})", false, limits());
  EXPECT_EQ(ids.prompt_ids, (std::vector<int32_t>{1, 2, 3}));
  EXPECT_EQ(ids.max_tokens, 16);  // the default
}

TEST(ServeRequest, ChatMessages) {
  const ServeRequest r = parse_serve_request(
      R"({"messages":[{"role":"system","content":"s"},{"role":"user","content":"u"}],
          "max_completion_tokens":3})",
      true, limits());
  ASSERT_EQ(r.messages.size(), 2u);
  EXPECT_EQ(r.messages[1].content, "u");
  EXPECT_EQ(r.max_tokens, 3);
  EXPECT_FALSE(r.continue_final);
  EXPECT_TRUE(r.add_generation_prompt);
  // A final assistant turn is continued by default (llama-server's assistant prefill), or when
  // vLLM's continue_final_message says so; false closes it and asks for a new turn.
  const std::string turns =
      R"("messages":[{"role":"user","content":"u"},{"role":"assistant","content":"A:"}])";
  const ServeRequest prefill = parse_serve_request("{" + turns + "}", true, limits());
  EXPECT_TRUE(prefill.continue_final);
  EXPECT_FALSE(prefill.add_generation_prompt);
  const ServeRequest vllm = parse_serve_request(
      "{" + turns + R"(,"continue_final_message":true,"add_generation_prompt":false})", true,
      limits());
  EXPECT_TRUE(vllm.continue_final);
  const ServeRequest closed =
      parse_serve_request("{" + turns + R"(,"continue_final_message":false})", true, limits());
  EXPECT_FALSE(closed.continue_final);
  EXPECT_TRUE(closed.add_generation_prompt);
}

TEST(ServeRequest, EveryRefusalNamesItsMember) {
  struct Case {
    std::string body, names;
    bool chat = false;
  };
  const std::vector<Case> cases = {
      {R"({"prompt": "x",)", "malformed JSON at byte"},
      {"[1,2]", "JSON object"},
      {R"({"prompt":"x","max_tokens":-3})", "'max_tokens' = -3"},
      {R"({"prompt":"x","max_tokens":65})", "--max-tokens-limit"},
      {R"({"prompt":"x","max_tokens":"5"})", "'max_tokens' must be an integer"},
      {R"({"prompt":"x","temperature":0.7})", "'temperature'"},
      {R"({"prompt":"x","top_p":0.9})", "'top_p'"},
      {R"({"prompt":"x","n":2})", "'n'"},
      {R"({"prompt":"x","stop":["a"]})", "'stop'"},
      {R"({"prompt":"x","logprobs":3})", "'logprobs'"},
      {R"({"prompt":"x","stream":"yes"})", "'stream' must be a boolean"},
      {R"({"prompt":"x","frobnicate":1})", "'frobnicate' is not a known member"},
      {R"({"prompt":"x","accelbench":{"method":7}})", "'accelbench.method' must be a string"},
      {R"({"prompt":"x","accelbench":{"draft":"/etc/passwd"}})", "'accelbench.draft'"},
      {R"({"prompt":"x","accelbench":{"params":[1]}})", "'accelbench.params'"},
      {R"({"prompt":[1,-2]})", "'prompt[1]'"},
      {R"({"prompt":[]})", "'prompt'"},
      {R"({"prompt":["a","b"]})", "batch of several prompts"},
      {R"({"max_tokens":2})", "'prompt' is required"},
      {R"({"prompt":"x","stream_options":{"include_usage":true}})", "'stream_options'"},
      {R"({"messages":[]})", "'messages'", true},
      {R"({"messages":[{"role":"tool","content":"x"}]})", "'messages[0].role'", true},
      {R"({"messages":[{"role":"user","content":5}]})", "'messages[0].content'", true},
      {R"({"messages":[{"role":"user","content":"x"}],"prompt":"y"})", "'prompt'", true},
      {R"({"messages":[{"role":"user","content":"x"}],"continue_final_message":true})",
       "'continue_final_message' needs the last message to be the assistant's", true},
      {R"({"messages":[{"role":"assistant","content":"x"}],"continue_final_message":true,
           "add_generation_prompt":true})",
       "cannot both be true", true},
      {R"({"messages":[{"role":"user","content":"x"}],"add_generation_prompt":1})",
       "'add_generation_prompt' must be a boolean", true},
      {R"({"prompt":"x","continue_final_message":true})", "'continue_final_message'"},
  };
  for (const auto& c : cases) {
    const ServeError e = refusal(c.body, c.chat);
    EXPECT_EQ(e.status(), 400) << c.body;
    EXPECT_NE(std::string(e.what()).find(c.names), std::string::npos)
        << c.body << " -> " << e.what() << " (expected to name " << c.names << ")";
  }
}

}  // namespace
}  // namespace accel
