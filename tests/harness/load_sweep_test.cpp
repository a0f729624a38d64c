// Load sweeps against our serve on a loopback port: every request of a point is answered and
// counted once, the table has a row per point, and the plot renders.
#include "harness/load_sweep.h"

#include <gtest/gtest.h>

#include <thread>

#include "harness/serve_server.h"
#include "tests/support/tiny_family.h"

namespace accel {
namespace {

TEST(LoadSweep, ConcurrencySweepAgainstServe) {
  Engine e;
  e.target = test::tiny_family().target.get();
  ServeConfig cfg;
  cfg.port = 0;
  cfg.access_log = false;
  cfg.model_id = "tiny";
  ServeServer server(cfg, e, nullptr);
  const int port = server.bind();
  std::thread t([&] { server.listen(); });
  const OpenAIClient client("http://127.0.0.1:" + std::to_string(port) + "/v1", "", 60);
  while (!OpenAIClient(client).get_json("/health"))
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  LoadSpec spec;
  spec.requests = 8;
  spec.prompt_tokens = 32;
  spec.max_tokens = 5;
  spec.model = "tiny";
  std::vector<LoadResult> rs;
  for (int c : {1, 2, 4, 8}) rs.push_back(run_load_point(client, spec, {c, 0}));
  rs.push_back(run_load_point(client, spec, {2, 200.0}));  // Poisson arrivals at 200 req/s
  for (const LoadResult& r : rs) {
    EXPECT_EQ(r.completed, 8) << (r.errors.empty() ? "" : r.errors[0]);
    EXPECT_EQ(r.output_tokens, 8 * 5);
    EXPECT_EQ(r.ttft_s.size(), 8u);
    EXPECT_EQ(r.tpot_s.size(), 8u);
    EXPECT_EQ(r.itl_s.size(), 8u * 4);  // 5 tokens: 4 gaps each
  }
  EXPECT_EQ(server.metrics().requests("completions", 200), 5u * 8);
  const std::string table = load_table_markdown(rs);
  EXPECT_NE(table.find("| 8 | inf | 8 | 0 |"), std::string::npos) << table;
  EXPECT_NE(table.find("| 2 | 200.0 | 8 | 0 |"), std::string::npos) << table;
  const std::string svg = load_plot_svg(rs, "t");
  EXPECT_NE(svg.find("<svg"), std::string::npos);
  server.stop();
  t.join();
}

}  // namespace
}  // namespace accel
