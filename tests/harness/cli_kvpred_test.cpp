// `accelbench kvpred fit|identity` and `models make-aux`, run in process through CLI11 (the
// commands are registered here as harness/cli.cpp would register them): files written and
// readable, the layer map rule each picks, the per-layer fit report, and bad input refused.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "harness/cli.h"
#include "methods/kvpred_predictor.h"
#include "models/model.h"
#include "models/synthetic.h"
#include "tests/support/test_support.h"

namespace accel {

// harness/cli_kvpred.cpp (declared in harness/cli.h once registered there).
void register_kvpred_commands(CLI::App& app, CliCommands& out);
void add_make_aux_command(CLI::App& models, CliCommands& out);

namespace {

// Parses and runs one command line as cli_main does; stdout (and any error line) into *out.
int run_kvpred_cli(const std::vector<std::string>& args, std::string* out) {
  CLI::App app{"test"};
  app.require_subcommand(1);
  CliCommands cmds;
  CLI::App* models = app.add_subcommand("models", "models");
  models->require_subcommand(1);
  add_make_aux_command(*models, cmds);
  register_kvpred_commands(app, cmds);
  std::vector<std::string> argv_s = {"accelbench"};
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : argv_s) argv.push_back(a.data());
  try {
    app.parse(int(argv.size()), argv.data());
  } catch (const CLI::ParseError& e) {
    *out = e.what();
    return 2;
  }
  testing::internal::CaptureStdout();
  int rc = 2;
  std::string err;
  try {
    for (const auto& c : cmds)
      if (c.sub->parsed()) {
        rc = c.run();
        break;
      }
  } catch (const std::exception& e) {
    err = e.what();
    rc = 1;
  }
  *out = testing::internal::GetCapturedStdout() + err;
  return rc;
}

class KVPredCli : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new test::TempDir();
    paths_ = make_synthetic_family("tiny", dir_->path().string(), 5, DType::F32);
    std::ofstream t(dir_->file("cal.txt"));
    for (int i = 0; i < 60; ++i)
      t << "Sentence " << i << " of the calibration text: the quick brown fox " << (i * 7 % 13)
        << " jumps over the lazy dog.\n";
  }
  static void TearDownTestSuite() { delete dir_; }
  static inline test::TempDir* dir_ = nullptr;
  static inline std::vector<std::string> paths_;
};

TEST_F(KVPredCli, MakeAuxIdentityAndFit) {
  std::string out;
  const std::string aux = dir_->file("aux.gguf");
  ASSERT_EQ(
      run_kvpred_cli({"models", "make-aux", "--from", paths_[0], "--layers", "0.50l", "--out", aux},
                     &out),
      0)
      << out;
  EXPECT_NE(out.find("2 of 4 blocks (0,2)"), std::string::npos) << out;
  EXPECT_EQ(Model::load(aux)->config().n_layer, 2);

  // Identity with aux = target (the plumbing check's file) and with the pruned aux (KVP-LP map).
  const std::string id = dir_->file("id.gguf"), id_lp = dir_->file("id-lp.gguf");
  ASSERT_EQ(run_kvpred_cli({"kvpred", "identity", "--target", paths_[0], "--out", id}, &out), 0)
      << out;
  EXPECT_EQ(kvpred::load_predictor(id).layer_map, (std::vector<int>{0, 1, 2, 3}));
  ASSERT_EQ(run_kvpred_cli(
                {"kvpred", "identity", "--target", paths_[0], "--aux", aux, "--out", id_lp}, &out),
            0)
      << out;
  EXPECT_NE(out.find("kvp-lp"), std::string::npos) << out;
  EXPECT_EQ(kvpred::load_predictor(id_lp).layer_map, (std::vector<int>{0, 0, 1, 1}));

  const std::string fit = dir_->file("fit.gguf");
  ASSERT_EQ(run_kvpred_cli({"kvpred", "fit", "--target", paths_[0], "--aux", aux, "--text",
                            dir_->file("cal.txt"), "--out", fit, "--max-tokens", "1000",
                            "--context", "256", "--json"},
                           &out),
            0)
      << out;
  const auto j = nlohmann::json::parse(out);
  EXPECT_EQ(j["tokens"], 1000);
  EXPECT_EQ(j["heldout_rows"], 100);
  EXPECT_EQ(j["train_rows"], 900);
  EXPECT_EQ(j["layer_map_rule"], "kvp-lp");
  ASSERT_EQ(j["layers"].size(), 4u);
  EXPECT_LT(j["layers"][0]["heldout_rel_err_k"].get<double>(), 1e-3);  // the same block
  const kvpred::Predictor p = kvpred::load_predictor(fit);
  EXPECT_EQ(p.layer_map, (std::vector<int>{0, 0, 1, 1}));
  EXPECT_EQ(p.fit["text"], dir_->file("cal.txt"));
  EXPECT_EQ(p.fit["heldout_rel_err_v"].size(), 4u);

  // The table form.
  ASSERT_EQ(run_kvpred_cli(
                {"kvpred", "fit", "--target", paths_[0], "--aux", paths_[1], "--text",
                 dir_->file("cal.txt"), "--out", dir_->file("fit-c.gguf"), "--max-tokens", "600"},
                &out),
            0)
      << out;
  EXPECT_NE(out.find("map kvp-c"), std::string::npos) << out;
  EXPECT_NE(out.find("held-out K"), std::string::npos) << out;
}

TEST_F(KVPredCli, BadInputIsRefused) {
  std::string out;
  EXPECT_EQ(run_kvpred_cli({"models", "make-aux", "--from", paths_[0], "--layers", "0,9", "--out",
                            dir_->file("x.gguf")},
                           &out),
            1);
  EXPECT_NE(out.find("layer 9 outside [0, 4)"), std::string::npos) << out;
  EXPECT_EQ(
      run_kvpred_cli({"kvpred", "fit", "--target", paths_[0], "--aux", paths_[1], "--text",
                      dir_->file("cal.txt"), "--out", dir_->file("y.gguf"), "--layer-map", "0,1,2"},
                     &out),
      1);
  EXPECT_NE(out.find("--layer-map"), std::string::npos) << out;
  EXPECT_EQ(run_kvpred_cli({"kvpred", "fit", "--target", paths_[0], "--aux", paths_[1], "--text",
                            dir_->file("missing.txt"), "--out", dir_->file("y.gguf")},
                           &out),
            1);
  EXPECT_NE(out.find("missing.txt"), std::string::npos) << out;
  // Identity needs equal KV widths (the tiny draft's is half the target's).
  EXPECT_EQ(run_kvpred_cli({"kvpred", "identity", "--target", paths_[0], "--aux", paths_[1],
                            "--out", dir_->file("z.gguf")},
                           &out),
            1);
  EXPECT_NE(out.find("KV width"), std::string::npos) << out;
  EXPECT_EQ(run_kvpred_cli({"kvpred", "fit", "--target", paths_[0]}, &out), 2);
}

}  // namespace
}  // namespace accel
