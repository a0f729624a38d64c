// `accelbench costmodel rank`: draft selection before running anything, by the analytic ratio
// r = draft scoring FLOPs / target prefill FLOPs read from the GGUF headers (no weights loaded),
// and predicted speedup 1/(r + k + eps). eps comes from --eps, or is fitted from a store's
// costmodel trials with --db; --model linquad ranks by the linear + quadratic model fitted on --db.
#include <filesystem>
#include <iostream>

#include "harness/cli.h"
#include "models/gguf.h"
#include "models/model_config.h"
#include "reports/cost_model.h"
#include "results/result_store.h"

namespace accel {

namespace {

nlohmann::json file_config(const std::string& path) {
  const GgufFile f = GgufFile::open(path);
  return config_json(ModelConfig::from_gguf(f));
}

// eps fitted over every costmodel row of the store (all targets and drafts in it).
double eps_from_store(const std::string& db) {
  const auto store = results::ResultStore::open_readonly(db);
  const nlohmann::json t =
      reports::to_json(reports::costmodel_table(store, reports::ReportOptions{}));
  std::vector<reports::CostPoint> pts;
  for (const auto& row : t["rows"]) {
    // Rows without a baseline carry null r / measured.
    if (!row["r"].is_number() || !row["k"].is_number() || !row["measured"].is_object()) continue;
    pts.push_back(
        {row["r"].get<double>(), row["k"].get<double>(), row["measured"]["ratio"].get<double>()});
  }
  const reports::EpsFit f = reports::fit_eps(pts);
  if (f.n == 0)
    throw std::runtime_error(db + ": no costmodel rows with a baseline to fit eps from");
  return f.eps;
}

}  // namespace

void register_costmodel_commands(CLI::App& app, CliCommands& out) {
  CLI::App* cm = app.add_subcommand("costmodel", "The SpecPrefill ratio cost model");
  cm->require_subcommand(1);
  struct Args {
    std::string target, db, format = "md";
    std::vector<std::string> drafts;
    std::vector<int64_t> contexts = {1024, 4096, 8192, 16384};
    double keep = 0.2, eps = 0;
    int lookahead = 8;
    std::string model = "ratio";
  };
  auto a = std::make_shared<Args>();
  CLI::App* rank = cm->add_subcommand(
      "rank",
      "Rank candidate drafts for a target by predicted speedup 1/(r + k + eps), with r the "
      "analytic FLOP ratio from the model files' hyper-parameters (nothing is run)");
  rank->add_option("--target", a->target, "Target GGUF file")->required();
  rank->add_option("--draft", a->drafts, "Candidate draft GGUF file (repeat)")->required();
  rank->add_option("--context", a->contexts, "Context lengths (repeat)")
      ->check(CLI::Range(int64_t(1), int64_t(1) << 24));
  rank->add_option("--keep", a->keep, "Keep fraction k in (0, 1]")->check(CLI::Range(1e-9, 1.0));
  rank->add_option("--lookahead", a->lookahead, "SpecPrefill lookahead queries")
      ->check(CLI::Range(1, 1024));
  auto* eps = rank->add_option("--eps", a->eps, "Overhead term eps (default 0)");
  rank->add_option("--db", a->db, "Fit eps from all costmodel rows of this store instead")
      ->excludes(eps)
      ->check(CLI::ExistingFile);
  rank->add_option("--model", a->model,
                   "ratio: 1/(r + k + eps) (the paper's); linquad: the linear + quadratic model "
                   "with its constants fitted on --db's prefills")
      ->check(CLI::IsMember({"ratio", "linquad"}));
  rank->add_option("--format", a->format, "md, csv, latex or json");
  out.push_back({rank, [a] {
                   const nlohmann::json target = file_config(a->target);
                   std::vector<reports::DraftCandidate> c;
                   for (const auto& d : a->drafts) {
                     nlohmann::json cfg = file_config(d);
                     if (cfg["n_vocab"] != target["n_vocab"])
                       std::cerr << "warning: draft " << d << " has " << cfg["n_vocab"]
                                 << " tokens, target " << target["n_vocab"]
                                 << ": a draft must share the target's tokenizer\n";
                     c.push_back({d, cfg});
                   }
                   const std::string name = std::filesystem::path(a->target).stem().string();
                   reports::Table t;
                   if (a->model == "linquad") {
                     if (a->db.empty())
                       throw std::invalid_argument(
                           "costmodel rank --model linquad: needs --db, the store whose prefills "
                           "fit the model's constants");
                     const auto store = results::ResultStore::open_readonly(a->db);
                     const reports::LinQuadFit fit =
                         reports::fit_store_prefills(store, reports::ReportOptions{});
                     if (!fit.ok)
                       throw std::runtime_error(
                           a->db + ": " + std::to_string(fit.n) +
                           " f32 prefills do not determine the linear + quadratic constants "
                           "(needs prefills of at least three sizes)");
                     t = reports::draft_ranking_table_linquad(target, name, c, a->contexts, a->keep,
                                                              a->lookahead, fit);
                   } else {
                     const double eps = a->db.empty() ? a->eps : eps_from_store(a->db);
                     t = reports::draft_ranking_table(target, name, c, a->contexts, a->keep,
                                                      a->lookahead, eps);
                   }
                   std::cout << reports::render(t, reports::parse_format(a->format));
                   return 0;
                 }});
}

}  // namespace accel
