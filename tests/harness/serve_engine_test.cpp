// ServeEngine: the queue bound, and cancellation within one step: a job whose cancel flag is set
// stops at its next token, so it ends with at most one token more than it had when cancelled.
#include "harness/serve_engine.h"

#include <gtest/gtest.h>

#include "harness/model_session.h"
#include "tests/support/tiny_family.h"

namespace accel {
namespace {

std::shared_ptr<ServeJob> job(int tokens) {
  auto j = std::make_shared<ServeJob>();
  j->method = &find_method("baseline");
  j->params = resolve_params(*j->method, nlohmann::json::object());
  j->request.prompt = random_prompt(test::tiny_family().target->config().n_vocab, 16, 1);
  j->request.max_new_tokens = tokens;
  return j;
}

void wait_done(ServeJob& j) {
  std::unique_lock lock(j.mu);
  j.cv.wait(lock, [&] { return j.done; });
}

TEST(ServeEngine, CancelStopsAtTheNextToken) {
  Engine e;
  e.target = test::tiny_family().target.get();
  ServeEngine engine(e, 2);
  auto j = job(3000);
  ASSERT_TRUE(engine.submit(j));
  size_t at_cancel = 0;
  {
    std::unique_lock lock(j->mu);
    j->cv.wait(lock, [&] { return j->tokens.size() >= 5 || j->done; });
    at_cancel = j->tokens.size();
    j->cancel = true;  // under the lock: no token is appended between reading the count and this
  }
  wait_done(*j);
  EXPECT_TRUE(j->cancelled);
  EXPECT_FALSE(j->outcome.has_value());
  EXPECT_GE(j->tokens.size(), at_cancel);
  EXPECT_LE(j->tokens.size(), at_cancel + 1);
}

TEST(ServeEngine, TheQueueIsBoundedAndFrees) {
  Engine e;
  e.target = test::tiny_family().target.get();
  ServeEngine engine(e, 2);
  auto a = job(400), b = job(4), c = job(4);
  ASSERT_TRUE(engine.submit(a));
  ASSERT_TRUE(engine.submit(b));
  EXPECT_FALSE(engine.submit(c));  // two admitted: the third is refused
  wait_done(*a);
  wait_done(*b);
  for (int i = 0; i < 1000 && engine.running() + engine.waiting() > 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_TRUE(engine.submit(c));
  wait_done(*c);
  ASSERT_TRUE(c->outcome.has_value());
  EXPECT_EQ(c->outcome->tokens, c->tokens);  // the streamed tokens are the outcome's
}

}  // namespace
}  // namespace accel
