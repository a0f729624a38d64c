// accelbench serve end to end: a real server on a loopback port (in this process, over the tiny
// family) and the real endpoint client. Answers equal the in-process method's token for token;
// per-request method control; load with a bounded queue; a bad-request battery; disconnects.
#include "harness/serve_server.h"

#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <mutex>
#include <regex>
#include <thread>

#include "harness/model_session.h"
#include "harness/openai_client.h"
#include "models/gguf.h"
#include "models/tokenizer.h"
#include "tests/harness/local_server.h"
#include "tests/support/tiny_family.h"

namespace accel {
namespace {

using nlohmann::json;

class ServeServerTest : public ::testing::Test {
 protected:
  void start(ServeConfig cfg = {}) {
    const auto& fam = test::tiny_family();
    tokenizer_ = Tokenizer::create(TokenizerSpec::from_gguf(fam.target->file()));
    cfg.port = 0;
    cfg.access_log = false;
    cfg.model_id = "tiny";
    server_ = std::make_unique<ServeServer>(std::move(cfg), engine(), tokenizer_.get());
    const int port = server_->bind();
    thread_ = std::thread([this] { server_->listen(); });
    client_ =
        std::make_unique<OpenAIClient>("http://127.0.0.1:" + std::to_string(port) + "/v1", "", 60);
    for (int i = 0; i < 200 && !client_->get_json("/health"); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  void TearDown() override {
    if (server_) server_->stop();
    if (thread_.joinable()) thread_.join();
  }
  static Engine engine() {
    const auto& fam = test::tiny_family();
    Engine e;
    e.target = fam.target.get();
    e.models["draft"] = fam.draft.get();
    return e;
  }
  // The in-process answer of a method to the same prompt (no EOS: requests set ignore_eos).
  static Outcome in_process_run(const std::string& method, const json& params,
                                const std::vector<int32_t>& prompt, int n) {
    const Method& m = find_method(method);
    Request r;
    r.prompt = prompt;
    r.max_new_tokens = n;
    return m.run(engine(), r, resolve_params(m, params));
  }
  static std::vector<int32_t> in_process(const std::string& method, const json& params,
                                         const std::vector<int32_t>& prompt, int n) {
    return in_process_run(method, params, prompt, n).tokens;
  }
  static json body(const std::vector<int32_t>& prompt, int n, bool stream) {
    return {{"model", "tiny"},  {"prompt", prompt},   {"max_tokens", n},
            {"stream", stream}, {"ignore_eos", true}, {"temperature", 0}};
  }
  // A counter of /metrics, by its full series text ("name{labels}").
  double metric(const std::string& series) {
    metrics_text_ = metrics_text();
    const size_t at = metrics_text_.find("\n" + series + " ");
    if (at == std::string::npos) return 0;
    return std::stod(metrics_text_.substr(at + series.size() + 2));
  }
  std::string metrics_text() {
    // /metrics is text, not JSON: read it through the server object instead of the client.
    return server_->metrics().render();
  }

  std::unique_ptr<Tokenizer> tokenizer_;
  std::unique_ptr<ServeServer> server_;
  std::thread thread_;
  std::unique_ptr<OpenAIClient> client_;
  std::string metrics_text_;
};

TEST_F(ServeServerTest, GreedyAnswersEqualTheInProcessEngine) {
  start();
  const int n_vocab = test::tiny_family().target->config().n_vocab;
  for (uint64_t seed = 1; seed <= 3; ++seed) {
    const auto prompt = random_prompt(n_vocab, 40 + 30 * seed, seed);
    const auto want = in_process("baseline", json::object(), prompt, 12);
    for (bool stream : {false, true}) {
      json b = body(prompt, 12, stream);
      if (stream) b["stream_options"] = {{"include_usage", true}};
      const CompletionResult r = client_->complete(b, false);
      ASSERT_TRUE(r.ok()) << r.error;
      EXPECT_EQ(r.token_ids, want) << "seed " << seed << " stream " << stream;
      EXPECT_EQ(r.usage["prompt_tokens"], prompt.size());
      EXPECT_EQ(r.usage["completion_tokens"], 12);
      EXPECT_EQ(r.finish_reason, "length");
      // Text: random ids decode to bytes that are not all UTF-8, which JSON cannot carry (the
      // server sends U+FFFD for them); the ids above are the exact comparison.
      EXPECT_FALSE(r.text.empty());
      EXPECT_EQ(r.accelbench["method"], "baseline");
      if (stream) {
        EXPECT_EQ(r.content_chunks, 12);  // one chunk per token
      }
    }
  }
}

TEST_F(ServeServerTest, InterleavedMethodsEachEqualTheirInProcessRun) {
  start();
  const int n_vocab = test::tiny_family().target->config().n_vocab;
  const json sp = {{"keep", 0.2}, {"force", true}};  // force: the prompt is below the threshold
  for (uint64_t seed = 1; seed <= 3; ++seed) {
    const auto prompt = random_prompt(n_vocab, 200, seed);
    for (const std::string method : {"baseline", "specprefill", "pld"}) {
      const json params = method == "specprefill" ? sp : json::object();
      json b = body(prompt, 8, seed % 2 == 1);
      b["accelbench"] = {{"method", method}, {"params", params}};
      const CompletionResult r = client_->complete(b, false);
      ASSERT_TRUE(r.ok()) << r.error;
      const Outcome want = in_process_run(method, params, prompt, 8);
      EXPECT_EQ(r.token_ids, want.tokens) << method << " seed " << seed;
      EXPECT_EQ(r.accelbench["prefilled_tokens"], want.kept_tokens) << method;
      EXPECT_EQ(r.accelbench["method"], method);
      EXPECT_TRUE(r.accelbench["fallback"].is_null()) << r.accelbench.dump();
      if (method == "specprefill") {
        EXPECT_LT(want.kept_tokens, 200u);  // sparse: fewer than the prompt's 200
      }
    }
  }
  // Below its threshold SpecPrefill falls back, and the answer says why.
  json b = body(random_prompt(n_vocab, 50, 9), 4, false);
  b["accelbench"] = {{"method", "specprefill"}, {"params", {{"keep", 0.2}}}};
  const CompletionResult r = client_->complete(b, false);
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.accelbench["fallback"], "below_threshold");
}

TEST_F(ServeServerTest, ServerDefaultsComeFromFlagsAndRequestsOverrideThem) {
  ServeConfig cfg;
  cfg.default_method = "specprefill";
  cfg.method_defaults["specprefill"] = {{"keep", 0.5}, {"force", true}};
  start(cfg);
  const auto prompt = random_prompt(test::tiny_family().target->config().n_vocab, 100, 4);
  CompletionResult r = client_->complete(body(prompt, 4, false), false);
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.accelbench["method"], "specprefill");
  EXPECT_EQ(r.accelbench["params"]["keep"], 0.5);
  json b = body(prompt, 4, false);
  b["accelbench"] = {{"params", {{"keep", 0.25}}}};
  r = client_->complete(b, false);
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.accelbench["params"]["keep"], 0.25);
  EXPECT_EQ(
      r.accelbench["prefilled_tokens"],
      in_process_run("specprefill", {{"keep", 0.25}, {"force", true}}, prompt, 4).kept_tokens);
}

TEST_F(ServeServerTest, ConcurrentStreamsCompleteOrGet503AndMetricsAgree) {
  ServeConfig cfg;
  cfg.queue_depth = 8;
  start(cfg);
  const int n_vocab = test::tiny_family().target->config().n_vocab;
  constexpr int kClients = 64, kEach = 4, kTokens = 6;
  std::atomic<int> ok{0}, busy{0}, other{0};
  std::mutex errors_mu;
  std::vector<std::string> errors;
  std::vector<std::thread> clients;
  for (int c = 0; c < kClients; ++c)
    clients.emplace_back([&, c] {
      for (int i = 0; i < kEach; ++i) {
        const auto prompt = random_prompt(n_vocab, 32, uint64_t(c * kEach + i));
        const CompletionResult r = client_->complete(body(prompt, kTokens, true), false);
        if (r.ok() && r.token_ids.size() == size_t(kTokens) && r.finish_reason == "length")
          ++ok;
        else if (r.status == 503)
          ++busy;
        else {
          ++other;
          std::lock_guard lock(errors_mu);
          if (errors.size() < 5) errors.push_back(std::to_string(r.status) + " " + r.error);
        }
      }
    });
  for (auto& t : clients) t.join();
  EXPECT_EQ(other.load(), 0) << (errors.empty() ? "" : errors[0]);
  EXPECT_EQ(ok + busy, kClients * kEach);
  EXPECT_GT(ok.load(), 0);
  const ServeMetrics& m = server_->metrics();
  EXPECT_EQ(m.requests("completions", 200), uint64_t(ok.load()));
  EXPECT_EQ(m.requests("completions", 503), uint64_t(busy.load()));
  EXPECT_EQ(metric("accelbench_decode_tokens_total"), double(ok * kTokens));
  std::printf("[serve load] %d x %d streams: %d completed, %d refused with 503\n", kClients, kEach,
              ok.load(), busy.load());
}

TEST_F(ServeServerTest, BadRequestsGet4xxNamingTheProblemAndTheServerKeepsServing) {
  ServeConfig cfg;
  cfg.limits.max_body_bytes = 1 << 20;
  cfg.limits.max_tokens = 64;
  cfg.limits.max_prompt_tokens = 1000;
  start(cfg);
  const int n_vocab = test::tiny_family().target->config().n_vocab;
  struct Bad {
    std::string body, names;
  };
  const std::vector<Bad> battery = {
      {"{\"prompt\": [1, 2", "malformed JSON at byte"},
      {R"({"prompt":"x","max_tokens":-1})", "'max_tokens' = -1"},
      {R"({"prompt":"x","max_tokens":"many"})", "'max_tokens' must be an integer"},
      {R"({"prompt":"x","stream":1})", "'stream' must be a boolean"},
      {R"({"prompt":"x","extra":{"a":1}})", "'extra' is not a known member"},
      {R"({"prompt":"x","accelbench":{"method":"nosuch"}})", "unknown method 'nosuch'"},
      {R"({"prompt":"x","accelbench":{"method":"kvpred"}})", "'aux' input"},
      {R"({"prompt":"x","accelbench":{"method":"specprefill","params":{"keep":7}}})",
       "'accelbench.params'"},
      {R"({"prompt":"x","accelbench":{"method":"baseline","params":{"bogus":1}}})", "bogus"},
      {R"({"prompt":"x","temperature":1})", "'temperature'"},
      {R"({"prompt":"x","model":"gpt-4"})", "'model' = 'gpt-4' is not served"},
      {R"({"prompt":[1, 99999999]})", "'prompt[1]'"},
      {json{{"prompt", random_prompt(n_vocab, 1001, 1)}}.dump(), "--max-prompt-tokens"},
      {R"({"prompt":"x","max_tokens":65})", "--max-tokens-limit"},
      {json{{"prompt", std::string(10 << 20, 'a')}}.dump(), "--max-body-bytes"},
  };
  // 1,000 requests: the battery over and over (the 10 MB body once), then a good request.
  int sent = 0;
  for (int round = 0; sent < 1000; ++round)
    for (const Bad& b : battery) {
      if (sent == 1000) break;
      if (b.body.size() > (1 << 20) && round > 0) continue;
      const auto [status, answer] = client_->post_raw("/v1/completions", b.body);
      ASSERT_GE(status, 400) << b.body.substr(0, 80);
      ASSERT_LT(status, 500) << b.body.substr(0, 80);
      const json j = json::parse(answer, nullptr, false);
      ASSERT_FALSE(j.is_discarded()) << answer;
      const std::string msg = j["error"]["message"];
      ASSERT_NE(msg.find(b.names), std::string::npos)
          << b.body.substr(0, 80) << " -> " << msg << " (expected to name " << b.names << ")";
      ++sent;
    }
  EXPECT_EQ(sent, 1000);
  const auto prompt = random_prompt(n_vocab, 16, 3);
  const CompletionResult r = client_->complete(body(prompt, 4, true), false);
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.token_ids, in_process("baseline", json::object(), prompt, 4));
}

TEST_F(ServeServerTest, ApiKeyIsRequiredOnEveryRouteButHealth) {
  ServeConfig cfg;
  cfg.api_key = "sesame";
  start(cfg);
  int status = 0;
  EXPECT_FALSE(client_->get_json("/v1/models", &status));
  EXPECT_EQ(status, 401);
  EXPECT_TRUE(client_->get_json("/health"));
  const auto [code, answer] = client_->post_raw("/v1/completions", R"({"prompt":[1,2]})");
  EXPECT_EQ(code, 401);
  OpenAIClient keyed(client_->address().scheme_host_port + "/v1", "sesame", 60);
  const auto models = keyed.get_json("/v1/models");
  ASSERT_TRUE(models);
  EXPECT_EQ((*models)["data"][0]["id"], "tiny");
  const auto tok = keyed.post_json("/tokenize", {{"content", "hello"}});
  ASSERT_TRUE(tok);
  EXPECT_EQ((*tok)["tokens"].get<std::vector<int32_t>>(),
            tokenizer_->encode("hello", false, false));
}

TEST_F(ServeServerTest, ADisconnectedStreamFreesItsSlotWithinOneStep) {
  ServeConfig cfg;
  cfg.queue_depth = 1;
  cfg.limits.max_tokens = 3000;
  start(cfg);
  const auto prompt = random_prompt(test::tiny_family().target->config().n_vocab, 16, 5);
  // Leave after 3 chunks of a 3,000-token answer; the engine stops at its next token.
  const CompletionResult gone = client_->complete(body(prompt, 3000, true), false, 3);
  EXPECT_EQ(gone.content_chunks, 3);
  // The one slot is free again: the next request is admitted, not refused with 503.
  CompletionResult next;
  for (int i = 0; i < 100; ++i) {
    next = client_->complete(body(prompt, 4, false), false);
    if (next.status != 503) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_TRUE(next.ok()) << next.error;
  EXPECT_EQ(metric("accelbench_requests_cancelled_total"), 1);
  // Tokens the cancelled request made: what the client read, what sat in the socket buffers when
  // it left, and at most one more (serve_engine_test checks the one step exactly); far from 3000.
  const double generated = metric("accelbench_decode_tokens_total") - 4;
  std::printf("[serve disconnect] client read 3 chunks; the server generated %.0f tokens\n",
              generated);
  EXPECT_LT(generated, 200) << "the cancelled request kept decoding";
}

// /v1/chat/completions for real: the tiny target with a ChatML `tokenizer.chat_template` is
// served; the chat answer's prompt ids (vLLM's return_token_ids) equal the ids `generate --chat`
// builds in-process from the same message, and its greedy output equals generate's, streamed or
// not.
TEST(ServeChat, ChatPromptAndGreedyOutputEqualGenerateChat) {
  test::TempDir dir;
  const std::string path = dir.file("chat.gguf");
  test::write_chatml_target(path);
  const std::string message = "Hello there, how are you today?";
  std::string out;
  ASSERT_EQ(test::run_cli("generate --model " + path + " --chat --prompt '" + message +
                              "' --max-tokens 10 --json",
                          &out),
            0)
      << out;
  const json want = json::parse(out);
  const auto want_prompt = want["prompt_tokens"].get<std::vector<int32_t>>();
  const auto want_output = want["output_tokens"].get<std::vector<int32_t>>();
  ASSERT_GT(want_prompt.size(), message.size());  // the template's turn markers are in it

  const std::unique_ptr<Model> model = Model::load(path);
  test::LocalServer server(0, model.get());
  OpenAIClient client(server.url(), "", 60);
  const json body = {{"model", "tiny"},
                     {"messages", {{{"role", "user"}, {"content", message}}}},
                     {"max_tokens", 10},
                     {"temperature", 0},
                     {"return_token_ids", true}};
  const auto [status, text] = client.post_raw("/v1/chat/completions", body.dump());
  ASSERT_EQ(status, 200) << text;
  const json j = json::parse(text);
  EXPECT_EQ(j["object"], "chat.completion");
  EXPECT_EQ(j["choices"][0]["prompt_token_ids"].get<std::vector<int32_t>>(), want_prompt);
  EXPECT_EQ(j["choices"][0]["token_ids"].get<std::vector<int32_t>>(), want_output);
  EXPECT_EQ(j["usage"]["prompt_tokens"], want_prompt.size());
  json streamed = body;
  streamed.erase("return_token_ids");
  streamed["stream"] = true;
  const CompletionResult r = client.complete(streamed, true);
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.token_ids, want_output);
  EXPECT_TRUE(r.prompt_token_ids.empty());  // only when asked for
  // Streamed with return_token_ids: the prompt's ids ride on the first chunk only.
  streamed["return_token_ids"] = true;
  const CompletionResult ids = client.complete(streamed, true);
  ASSERT_TRUE(ids.ok()) << ids.error;
  EXPECT_EQ(ids.prompt_token_ids, want_prompt);
  EXPECT_EQ(ids.token_ids, want_output);
  const auto [raw_status, raw] = client.post_raw("/v1/chat/completions", streamed.dump());
  ASSERT_EQ(raw_status, 200);
  std::vector<size_t> events_with_ids;  // indices of the SSE events that carry prompt ids
  size_t event = 0;
  for (size_t at = 0, end; (end = raw.find("\n\n", at)) != std::string::npos; at = end + 2, ++event)
    if (raw.substr(at, end - at).find("prompt_token_ids") != std::string::npos)
      events_with_ids.push_back(event);
  EXPECT_EQ(events_with_ids, std::vector<size_t>{0}) << raw;
}

}  // namespace
}  // namespace accel
