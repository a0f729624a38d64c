// `accelbench models make|list` (and, via cli_import_llama2c.cpp, `models import-llama2c`).
#include <cstdio>

#include "harness/cli.h"
#include "harness/shipped_models.h"
#include "kernels/dtype.h"
#include "models/synthetic.h"

namespace accel {

void register_models_commands(CLI::App& app, CliCommands& out) {
  CLI::App* models = app.add_subcommand("models", "Make, list or import model files");
  models->require_subcommand(1);

  struct MakeArgs {
    std::string family, out_dir, dtype = "f32";
    uint64_t seed = 0;
  };
  auto a = std::make_shared<MakeArgs>();
  CLI::App* make = models->add_subcommand(
      "make",
      "Write a seeded synthetic model family (target + drafts sharing a tokenizer), or install a "
      "shipped one (trained files in the repository, e.g. capable) after checking their sha256");
  make->add_option("--family", a->family, "Family name (see `models list`)")->required();
  make->add_option("--out", a->out_dir, "Output directory")->required();
  make->add_option("--seed", a->seed, "Weight seed (same seed -> byte-identical files)");
  make->add_option("--dtype", a->dtype,
                   "Weight type: f32, f16, bf16, q8_0, q4_0, q4_k, q5_k, q6_k, or the mixes "
                   "q4_k_m, q5_k_m (q6_k for attn_v, ffn_down, output); k-quant matrices whose "
                   "rows are not a multiple of 256 are written as q8_0")
      ->check(CLI::IsMember(
          {"f32", "f16", "bf16", "q8_0", "q4_0", "q4_k", "q5_k", "q6_k", "q4_k_m", "q5_k_m"}));
  out.push_back({make, [a, make] {
                   if (const auto shipped = find_shipped_family(a->family)) {
                     if (make->count("--dtype") || make->count("--seed"))
                       throw CLI::ValidationError(
                           "--dtype/--seed", "family '" + a->family +
                                                 "' is shipped as trained files (" + shipped->dir +
                                                 "): it has no seed or weight type to choose");
                     for (const auto& p : install_shipped_family(*shipped, a->out_dir))
                       std::printf("%s\n", p.c_str());
                     return 0;
                   }
                   const WeightScheme t = *weight_scheme_from_name(a->dtype);
                   for (const auto& p : make_synthetic_family(a->family, a->out_dir, a->seed, t))
                     std::printf("%s\n", p.c_str());
                   return 0;
                 }});

  CLI::App* list = models->add_subcommand("list", "List the synthetic and shipped model families");
  out.push_back({list, [] {
                   for (const auto& f : synthetic_families()) {
                     std::printf("%-12s %s\n", f.name.c_str(), f.description.c_str());
                     for (const auto& m : f.members)
                       std::printf(
                           "  %-8s %-6s layers %d, width %d, heads %d/%d, ffn %d%s, ctx %d\n",
                           m.role.c_str(), arch_name(m.arch), m.n_layer, m.n_embd, m.n_head,
                           m.n_head_kv, m.n_ff,
                           m.n_expert ? (", experts " + std::to_string(m.n_expert) + " top-" +
                                         std::to_string(m.n_expert_used))
                                            .c_str()
                                      : "",
                           m.n_ctx);
                   }
                   for (const auto& f : shipped_families()) {
                     std::printf("%-12s %s [shipped: %s]\n", f.name.c_str(), f.description.c_str(),
                                 f.dir.c_str());
                     for (const auto& m : f.members)
                       std::printf("  %-8s %s, %llu bytes\n", m.role.c_str(), m.file.c_str(),
                                   static_cast<unsigned long long>(m.bytes));
                   }
                   return 0;
                 }});
  add_import_llama2c_command(*models, out);
  add_make_aux_command(*models, out);
}

}  // namespace accel
