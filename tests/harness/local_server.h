// Our `serve` over the tiny family (target and draft, or a target of the test's own) on a
// loopback port, in the test's process, for the endpoint backend and load-sweep tests. Test-only.
#pragma once
#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include "harness/openai_client.h"
#include "harness/serve_server.h"
#include "models/gguf.h"
#include "models/tokenizer.h"
#include "tests/support/tiny_family.h"

namespace accel::test {

class LocalServer {
 public:
  // `target` null: the tiny family's target.
  explicit LocalServer(int port = 0, const Model* target = nullptr) {
    const auto& fam = test::tiny_family();
    if (!target) target = fam.target.get();
    tokenizer_ = Tokenizer::create(TokenizerSpec::from_gguf(target->file()));
    Engine e;
    e.target = target;
    e.models["draft"] = fam.draft.get();
    ServeConfig cfg;
    cfg.port = port;
    cfg.access_log = false;
    cfg.model_id = "tiny";
    server_ = std::make_unique<ServeServer>(cfg, e, tokenizer_.get());
    port_ = server_->bind();
    thread_ = std::thread([this] { server_->listen(); });
    OpenAIClient c(url(), "", 10);
    for (int i = 0; i < 200 && !c.get_json("/health"); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ~LocalServer() { stop(); }
  void stop() {
    if (!server_) return;
    server_->stop();
    thread_.join();
    server_.reset();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/v1"; }
  int port() const { return port_; }
  const ServeServer& server() const { return *server_; }

 private:
  std::unique_ptr<Tokenizer> tokenizer_;
  std::unique_ptr<ServeServer> server_;
  std::thread thread_;
  int port_ = 0;
};

// Writes the tiny target with a ChatML `tokenizer.chat_template` to `path`: a model whose chat
// turns a server templates itself.
inline void write_chatml_target(const std::string& path) {
  const GgufFile src = GgufFile::open((test::tiny_family().dir->path() / "target.gguf").string());
  GgufWriter w;
  for (const auto& [k, v] : src.metadata()) w.set(k, v);
  w.set("tokenizer.chat_template",
        GgufValue::of_string("{% for message in messages %}{{'<|im_start|>' + message['role'] + "
                             "'\\n' + message['content'] + '<|im_end|>' + '\\n'}}{% endfor %}{% "
                             "if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% "
                             "endif %}"));
  for (const auto& t : src.tensors())
    w.add_tensor(t.name, t.dims, t.type, src.tensor_data(t), t.n_bytes);
  w.write(path);
}

// A thread that stops `server` once it has answered `n` completions with 200: a server killed
// while a plan runs.
inline std::thread stop_after_answers(LocalServer& server, uint64_t n) {
  return std::thread([&server, n] {
    while (server.server().metrics().requests("completions", 200) < n)
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    server.stop();
  });
}

}  // namespace accel::test
