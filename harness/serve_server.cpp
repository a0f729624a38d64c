// ServeServer (see serve_server.h): routes, admission (auth, parse, method, tokenize, bounds,
// queue) and the answer, streamed as server-sent events or whole. One worker runs the jobs
// (serve_engine.h); HTTP threads wait on their job and write its tokens as they come.
#include "harness/serve_server.h"

#include <httplib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <optional>

#include <sys/socket.h>

#include "harness/serve_engine.h"
#include "harness/serve_response.h"
#include "models/chat_template.h"
#include "models/tokenizer.h"

namespace accel {

namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

double seconds(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

[[noreturn]] void bad(const std::string& msg) {
  throw ServeError(400, "invalid_request_error", msg);
}

// A request admitted to the engine, with what its answer needs.
struct Admitted {
  std::shared_ptr<ServeJob> job;
  ResponseHead head;
  std::string endpoint;
  int max_tokens = 0;
  int32_t eos = -1;
  bool return_token_ids = false;
};

}  // namespace

struct ServeServer::Impl {
  ServeConfig cfg;
  ServeEngine engine;
  const Tokenizer* tok;
  std::optional<ChatTemplate> chat;
  std::string chat_error;  // why chat is absent
  int32_t end_of_turn = -1;
  ServeMetrics metrics;
  httplib::Server http;
  int port = 0;
  int listen_fd = -1;
  std::atomic<uint64_t> next_id{1};

  Impl(ServeConfig c, Engine e, const Tokenizer* t)
      : cfg(std::move(c)), engine(std::move(e), std::max<size_t>(1, cfg.queue_depth)), tok(t) {
    const Model& m = *engine.engine().target;
    if (cfg.limits.max_prompt_tokens == 0) cfg.limits.max_prompt_tokens = size_t(m.config().n_ctx);
    try {
      chat = ChatTemplate::from_gguf(m.file());
      if (!chat) chat_error = m.path() + " has no tokenizer.chat_template";
    } catch (const std::exception& ex) {
      chat_error = ex.what();
    }
    if (chat && tok) {
      const std::vector<int32_t> eot = tok->encode(chat->end_of_turn(), false, true);
      if (eot.size() == 1) end_of_turn = eot[0];
    }
    routes();
  }

  void log(const httplib::Request& req, const RequestRecord& r) {
    if (!cfg.access_log) return;
    std::fprintf(stderr,
                 "serve: %s %s %d method=%s queue_s=%.4f ttft_s=%.4f compute_ttft_s=%.4f "
                 "e2e_s=%.4f prompt=%lld generated=%lld%s\n",
                 req.method.c_str(), req.path.c_str(), r.status,
                 r.method.empty() ? "-" : r.method.c_str(), r.queue_s, r.ttft_s, r.compute_ttft_s,
                 r.e2e_s, (long long)r.prompt_tokens, (long long)r.generated_tokens,
                 r.cancelled ? " cancelled" : "");
  }

  void send_error(const httplib::Request& req, httplib::Response& res, const std::string& endpoint,
                  int status, const std::string& type, const std::string& msg) {
    res.status = status;
    res.set_content(error_json(msg, type).dump(-1, ' ', false, json::error_handler_t::replace),
                    "application/json");
    RequestRecord r;
    r.endpoint = endpoint;
    r.status = status;
    metrics.record(r);
    log(req, r);
  }

  bool authorised(const httplib::Request& req) const {
    if (cfg.api_key.empty()) return true;
    return req.get_header_value("Authorization") == "Bearer " + cfg.api_key;
  }

  // The prompt's token ids, per endpoint: the chat template, a text, or ids checked against the
  // vocabulary.
  std::vector<int32_t> prompt_of(const ServeRequest& r) const {
    const Model& m = *engine.engine().target;
    if (r.chat) {
      if (!chat) bad("this model cannot serve chat: " + chat_error + "; use /v1/completions");
      if (!tok) bad("this model's tokenizer is not supported; only token-id prompts are served");
      std::string text;
      try {
        // A continued last turn: the turns before it with the generation prompt, then its text
        // (the turn left open for the model to go on).
        text = r.continue_final
                   ? chat->apply(std::span(r.messages).first(r.messages.size() - 1), true) +
                         r.messages.back().content
                   : chat->apply(r.messages, r.add_generation_prompt);
      } catch (const ChatTemplateError& e) {
        bad(std::string("'messages': ") + e.what());
      }
      std::vector<int32_t> ids = tok->encode(text, false, true);
      if (tok->spec().add_bos && (ids.empty() || ids[0] != tok->bos()))
        ids.insert(ids.begin(), tok->bos());
      return ids;
    }
    if (r.text) {
      if (!tok) bad("this model's tokenizer is not supported; send 'prompt' as token ids");
      if (r.text->size() > cfg.limits.max_prompt_tokens * 64)
        bad("'prompt' is over the prompt limit of " + std::to_string(cfg.limits.max_prompt_tokens) +
            " tokens (--max-prompt-tokens)");
      std::vector<int32_t> ids = tok->encode(*r.text, true, false);
      if (ids.empty() && tok->bos() >= 0) ids.push_back(tok->bos());
      if (ids.empty()) bad("'prompt' is empty and the tokenizer has no BOS token");
      return ids;
    }
    for (size_t i = 0; i < r.prompt_ids.size(); ++i)
      if (r.prompt_ids[i] >= m.config().n_vocab)
        bad("'prompt[" + std::to_string(i) + "]' = " + std::to_string(r.prompt_ids[i]) +
            " is not a token id (vocabulary " + std::to_string(m.config().n_vocab) + ")");
    return r.prompt_ids;
  }

  // The method and its resolved params: the request's choice over the server's default, the
  // request's params over the server's per-method defaults, validated as the CLI validates.
  void choose_method(const ServeRequest& r, ServeJob& job) const {
    const std::string name = r.method.empty() ? cfg.default_method : r.method;
    try {
      job.method = &find_method(name);
    } catch (const std::invalid_argument& e) {
      bad(std::string("'accelbench.method': ") + e.what());
    }
    const Engine& e = engine.engine();
    for (const InputSpec& in : job.method->inputs()) {
      if (in.role == "target") continue;
      const bool have = in.kind == InputSpec::Kind::Model ? e.models.count(in.role) > 0
                                                          : e.files.count(in.role) > 0;
      if (!have)
        bad("'accelbench.method': method '" + name + "' needs its '" + in.role + "' input (" +
            in.help + "), which this server was not started with (--input " + in.role + "=FILE)");
    }
    json given = json::object();
    if (const auto it = cfg.method_defaults.find(name); it != cfg.method_defaults.end())
      given = it->second;
    for (const auto& [k, v] : r.params.items()) given[k] = v;
    try {
      job.params = resolve_params(*job.method, given);
    } catch (const std::invalid_argument& e) {
      bad(std::string("'accelbench.params': ") + e.what());
    }
  }

  Admitted admit(const ServeRequest& r, bool chat_endpoint) {
    if (!r.model.empty() && r.model != cfg.model_id)
      throw ServeError(
          404, "model_not_found",
          "'model' = '" + r.model + "' is not served here (serving '" + cfg.model_id + "')");
    Admitted a;
    a.endpoint = chat_endpoint ? "chat" : "completions";
    a.job = std::make_shared<ServeJob>();
    choose_method(r, *a.job);
    Request& q = a.job->request;
    q.prompt = prompt_of(r);
    const size_t n_ctx = size_t(engine.engine().target->config().n_ctx);
    if (q.prompt.size() > cfg.limits.max_prompt_tokens)
      bad("the prompt has " + std::to_string(q.prompt.size()) + " tokens, over the limit of " +
          std::to_string(cfg.limits.max_prompt_tokens) + " (--max-prompt-tokens)");
    if (q.prompt.size() + size_t(r.max_tokens) > n_ctx)
      bad("the prompt (" + std::to_string(q.prompt.size()) + " tokens) + 'max_tokens' (" +
          std::to_string(r.max_tokens) + ") exceed the model's context length " +
          std::to_string(n_ctx));
    q.max_new_tokens = r.max_tokens;
    q.eos = r.ignore_eos                        ? -1
            : chat_endpoint && end_of_turn >= 0 ? end_of_turn
            : tok                               ? tok->eos()
                                                : -1;
    a.max_tokens = r.max_tokens;
    a.eos = q.eos;
    a.return_token_ids = r.return_token_ids;
    a.head = {std::string(chat_endpoint ? "chatcmpl-" : "cmpl-") + std::to_string(next_id++),
              int64_t(std::time(nullptr)), cfg.model_id, chat_endpoint};
    a.head.chat = chat_endpoint;
    if (!engine.submit(a.job))
      throw ServeError(503, "server_busy",
                       "the request queue is full (" + std::to_string(cfg.queue_depth) +
                           " requests, --queue-depth); retry later");
    metrics.set_queue(engine.waiting(), engine.running());
    return a;
  }

  // What the answer reports of the run (method, params, fallback, timings) and the metrics record.
  json report(const Admitted& a, RequestRecord& rec) {
    ServeJob& j = *a.job;
    const Clock::time_point end = Clock::now();
    rec.method = j.method->name();
    rec.cancelled = j.cancelled;
    if (j.started) rec.queue_s = seconds(j.admitted, *j.started);
    if (!j.token_times.empty()) rec.ttft_s = seconds(j.admitted, j.token_times[0]);
    for (size_t i = 1; i < j.token_times.size(); ++i)
      rec.itl_s.push_back(seconds(j.token_times[i - 1], j.token_times[i]));
    rec.e2e_s = seconds(j.admitted, end);
    rec.prompt_tokens = int64_t(j.request.prompt.size());
    rec.generated_tokens = int64_t(j.tokens.size());
    json fallback = nullptr;
    json stats = json::object();
    if (j.outcome) {
      rec.compute_ttft_s = j.outcome->ttft_s;
      rec.prefilled_tokens = int64_t(j.outcome->kept_tokens);
      stats = j.outcome->stats;
      if (stats.contains("fallback")) {
        fallback = stats["fallback"];
        rec.fallback = fallback.is_string() ? fallback.get<std::string>() : fallback.dump();
      }
    }
    return {{"method", rec.method},
            {"params", j.params},
            {"fallback", fallback},
            {"stats", stats},
            {"queue_s", rec.queue_s},
            {"ttft_s", rec.ttft_s},
            {"compute_ttft_s", rec.compute_ttft_s},
            {"prompt_tokens", rec.prompt_tokens},
            {"prefilled_tokens", rec.prefilled_tokens}};
  }

  std::string finish_reason(const Admitted& a) const {
    const auto& t = a.job->tokens;
    return !t.empty() && t.back() == a.eos ? "stop" : "length";
  }

  void answer_whole(const httplib::Request& req, httplib::Response& res, const Admitted& a) {
    ServeJob& j = *a.job;
    {
      std::unique_lock lock(j.mu);
      j.cv.wait(lock, [&] { return j.done; });
    }
    RequestRecord rec;
    rec.endpoint = a.endpoint;
    const json info = report(a, rec);
    if (!j.outcome) {
      rec.status = 500;
      metrics.record(rec);
      log(req, rec);
      res.status = 500;
      res.set_content(error_json("generation failed: " + j.error, "server_error").dump(),
                      "application/json");
      return;
    }
    TextStream text(tok);
    for (int32_t t : j.outcome->tokens) text.push(t);
    json body = completion_body(a.head, text.text(), j.outcome->tokens, finish_reason(a),
                                usage_json(rec.prompt_tokens, rec.generated_tokens), info);
    if (a.return_token_ids) body["choices"][0]["prompt_token_ids"] = j.request.prompt;
    res.set_content(body.dump(-1, ' ', false, json::error_handler_t::replace), "application/json");
    metrics.record(rec);
    log(req, rec);
  }

  // With return_token_ids, the first chunk of a stream (the one with the first token, or the final
  // one when there is none) carries the prompt's ids as `prompt_token_ids`, as a whole answer's
  // choice does; later chunks do not repeat them.
  json with_prompt_ids(const Admitted& a, json chunk, bool first) const {
    if (a.return_token_ids && first)
      chunk["choices"][0]["prompt_token_ids"] = a.job->request.prompt;
    return chunk;
  }

  // Streams the job's tokens as they come; a failed write cancels the job (the client left) and
  // the engine stops it at its next token.
  bool stream(const httplib::Request& req, const Admitted& a, bool include_usage,
              httplib::DataSink& sink) {
    ServeJob& j = *a.job;
    TextStream text(tok);
    size_t sent = 0;
    bool alive = true;
    for (;;) {
      std::vector<int32_t> fresh;
      bool done;
      {
        std::unique_lock lock(j.mu);
        j.cv.wait(lock, [&] { return j.done || j.tokens.size() > sent; });
        fresh.assign(j.tokens.begin() + ptrdiff_t(sent), j.tokens.end());
        done = j.done;
      }
      for (int32_t t : fresh) {
        const std::string s = sse(with_prompt_ids(
            a, stream_chunk(a.head, text.push(t), {t}, sent == 0, "", nullptr), sent == 0));
        ++sent;
        if (alive && !sink.write(s.data(), s.size())) {
          alive = false;
          j.cancel = true;
        }
      }
      if (done) break;
      if (!alive) {
        // Wait for the engine to stop this job (at its next token) before leaving.
        std::unique_lock lock(j.mu);
        j.cv.wait(lock, [&] { return j.done; });
        break;
      }
    }
    RequestRecord rec;
    rec.endpoint = a.endpoint;
    const json info = report(a, rec);
    rec.cancelled = rec.cancelled || !alive;
    std::string tail;
    if (!j.outcome && !rec.cancelled) {
      rec.status = 500;
      tail += sse(error_json("generation failed: " + j.error, "server_error"));
    } else if (j.outcome) {
      tail += sse(with_prompt_ids(
          a, stream_chunk(a.head, text.finish(), {}, sent == 0, finish_reason(a), info),
          sent == 0));
      if (include_usage)
        tail += sse(usage_chunk(a.head, usage_json(rec.prompt_tokens, rec.generated_tokens)));
    }
    tail += "data: [DONE]\n\n";
    if (alive && !sink.write(tail.data(), tail.size())) {
      alive = false;
      rec.cancelled = true;
    }
    if (rec.cancelled) rec.status = 499;  // nginx's "client closed request"
    metrics.record(rec);
    metrics.set_queue(engine.waiting(), engine.running());
    log(req, rec);
    if (alive) sink.done();
    return alive;
  }

  void generate(const httplib::Request& req, httplib::Response& res, bool chat_endpoint) {
    const std::string endpoint = chat_endpoint ? "chat" : "completions";
    Admitted a;
    bool streaming = false, include_usage = false;
    try {
      const ServeRequest r = parse_serve_request(req.body, chat_endpoint, cfg.limits);
      streaming = r.stream;
      include_usage = r.include_usage;
      a = admit(r, chat_endpoint);
    } catch (const ServeError& e) {
      return send_error(req, res, endpoint, e.status(), e.type(), e.what());
    } catch (const std::exception& e) {
      return send_error(req, res, endpoint, 400, "invalid_request_error", e.what());
    }
    if (!streaming) return answer_whole(req, res, a);
    res.set_header("Cache-Control", "no-cache");
    res.set_chunked_content_provider("text/event-stream", [this, req_copy = &req, a, include_usage](
                                                              size_t, httplib::DataSink& sink) {
      return stream(*req_copy, a, include_usage, sink);
    });
  }

  void tokenize(const httplib::Request& req, httplib::Response& res) {
    try {
      const json body = json::parse(req.body, nullptr, false);
      if (body.is_discarded() || !body.is_object()) bad("the body must be a JSON object");
      const auto c = body.find("content");
      if (c == body.end() || !c->is_string()) bad("'content' must be a string");
      if (!tok) bad("this model's tokenizer is not supported");
      bool add_special = false;
      if (const auto s = body.find("add_special"); s != body.end()) {
        if (!s->is_boolean()) bad("'add_special' must be a boolean");
        add_special = s->get<bool>();
      }
      const std::vector<int32_t> ids = tok->encode(c->get<std::string>(), add_special, false);
      res.set_content(json{{"tokens", ids},
                           {"count", ids.size()},
                           {"max_model_len", engine.engine().target->config().n_ctx}}
                          .dump(),
                      "application/json");
      RequestRecord r;
      r.endpoint = "tokenize";
      metrics.record(r);
    } catch (const ServeError& e) {
      send_error(req, res, "tokenize", e.status(), e.type(), e.what());
    }
  }

  json models_json() const {
    json inputs = json::object();
    for (const auto& [role, path] : cfg.input_paths) inputs[role] = path;
    const Model& m = *engine.engine().target;
    return {{"object", "list"},
            {"data", json::array({{{"id", cfg.model_id},
                                   {"object", "model"},
                                   {"created", 0},
                                   {"owned_by", "accelbench"},
                                   {"max_model_len", m.config().n_ctx},
                                   {"accelbench",
                                    {{"inputs", inputs},
                                     {"default_method", cfg.default_method},
                                     {"method_defaults", cfg.method_defaults},
                                     {"queue_depth", cfg.queue_depth}}}}})}};
  }

  void routes() {
    http.set_payload_max_length(cfg.limits.max_body_bytes);
    // Each SSE chunk leaves at once (no Nagle delay on a token), and the listening socket is
    // remembered so bind() can widen the library's accept backlog of 5 (socket_options replaces
    // the library's default options, so SO_REUSEADDR is set here again).
    http.set_tcp_nodelay(true);
    http.set_socket_options([this](socket_t sock) {
      int yes = 1;
      setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
      listen_fd = sock;
    });
    // One HTTP thread per admissible request plus spares to answer 503s and /metrics promptly.
    const size_t threads = cfg.queue_depth + 8;
    http.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
    http.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
      if (req.path == "/health" || authorised(req))
        return httplib::Server::HandlerResponse::Unhandled;
      send_error(req, res, "auth", 401, "authentication_error",
                 "missing or wrong API key (Authorization: Bearer KEY)");
      return httplib::Server::HandlerResponse::Handled;
    });
    http.set_error_handler([this](const httplib::Request& req, httplib::Response& res) {
      if (!res.body.empty()) return;
      if (res.status == 413) {
        res.status = 400;
        const std::string msg = "the request body is over the limit of " +
                                std::to_string(cfg.limits.max_body_bytes) +
                                " bytes (--max-body-bytes)";
        res.set_content(error_json(msg, "invalid_request_error").dump(), "application/json");
      } else {
        res.set_content(error_json("no route " + req.method + " " + req.path, "not_found").dump(),
                        "application/json");
      }
      RequestRecord r;
      r.endpoint = "error";
      r.status = res.status;
      metrics.record(r);
    });
    http.Post("/v1/completions",
              [this](const httplib::Request& q, httplib::Response& s) { generate(q, s, false); });
    http.Post("/v1/chat/completions",
              [this](const httplib::Request& q, httplib::Response& s) { generate(q, s, true); });
    http.Post("/tokenize",
              [this](const httplib::Request& q, httplib::Response& s) { tokenize(q, s); });
    http.Get("/v1/models", [this](const httplib::Request&, httplib::Response& s) {
      s.set_content(models_json().dump(), "application/json");
    });
    http.Get("/health", [](const httplib::Request&, httplib::Response& s) {
      s.set_content("{\"status\":\"ok\"}", "application/json");
    });
    http.Get("/metrics", [this](const httplib::Request&, httplib::Response& s) {
      metrics.set_queue(engine.waiting(), engine.running());
      s.set_content(metrics.render(), "text/plain; version=0.0.4");
    });
  }
};

ServeServer::ServeServer(ServeConfig config, Engine engine, const Tokenizer* tokenizer)
    : impl_(std::make_unique<Impl>(std::move(config), std::move(engine), tokenizer)) {}

ServeServer::~ServeServer() = default;

int ServeServer::bind() {
  Impl& i = *impl_;
  i.port = i.cfg.port == 0 ? i.http.bind_to_any_port(i.cfg.host)
                           : (i.http.bind_to_port(i.cfg.host, i.cfg.port) ? i.cfg.port : -1);
  if (i.port < 0)
    throw std::runtime_error("cannot listen on " + i.cfg.host + ":" + std::to_string(i.cfg.port));
  // A burst of clients (64 in the load test) must not overflow the accept queue.
  if (i.listen_fd >= 0) ::listen(i.listen_fd, 1024);
  return i.port;
}

void ServeServer::listen() {
  impl_->http.listen_after_bind();
}

void ServeServer::stop() {
  impl_->http.stop();
}

int ServeServer::port() const {
  return impl_->port;
}

const ServeMetrics& ServeServer::metrics() const {
  return impl_->metrics;
}

void check_method_defaults(const std::map<std::string, nlohmann::json>& defaults) {
  for (const auto& [name, params] : defaults) {
    const Method& m = find_method(name);
    resolve_params(m, params);
  }
}

}  // namespace accel
