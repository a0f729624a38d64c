// `accelbench models make|list` (and, via cli_import_llama2c.cpp, `models import-llama2c`).
#include <cstdio>
#include <optional>
#include <stdexcept>

#include "harness/cli.h"
#include "harness/shipped_models.h"
#include "kernels/dtype.h"
#include "models/gguf.h"
#include "models/synthetic.h"
#include "models/tokenizer.h"

namespace accel {

namespace {

// A file's tokenizer for `models make --vocab`, refused by name unless this engine can run it (the
// members would otherwise be written and then fail to load).
TokenizerSpec vocab_from_file(const std::string& path) {
  TokenizerSpec spec = TokenizerSpec::from_gguf(GgufFile::open(path));
  if (spec.tokens.empty() || spec.tokens.size() > (1u << 20))
    throw std::invalid_argument("--vocab " + path + ": " + std::to_string(spec.tokens.size()) +
                                " tokens (expected 1 to 2^20)");
  try {
    Tokenizer::create(spec);
  } catch (const std::exception& e) {
    throw std::invalid_argument("--vocab " + path + ": " + e.what());
  }
  return spec;
}

}  // namespace

void register_models_commands(CLI::App& app, CliCommands& out) {
  CLI::App* models = app.add_subcommand("models", "Make, list or import model files");
  models->require_subcommand(1);

  struct MakeArgs {
    std::string family, out_dir, dtype = "f32", vocab;
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
  make->add_option("--vocab", a->vocab,
                   "GGUF file whose tokenizer the members get instead of the byte-level one (e.g. "
                   "a llama.cpp vocab-only file such as ggml-vocab-qwen35.gguf): its tokens, "
                   "merges and pre-tokenizer; token_embd and output get one row per token");
  out.push_back({make, [a, make] {
                   if (const auto shipped = find_shipped_family(a->family)) {
                     if (make->count("--dtype") || make->count("--seed") || make->count("--vocab"))
                       throw CLI::ValidationError(
                           "--dtype/--seed/--vocab",
                           "family '" + a->family + "' is shipped as trained files (" +
                               shipped->dir +
                               "): it has no seed, weight type or vocabulary to choose");
                     for (const auto& p : install_shipped_family(*shipped, a->out_dir))
                       std::printf("%s\n", p.c_str());
                     return 0;
                   }
                   const WeightScheme t = *weight_scheme_from_name(a->dtype);
                   std::optional<TokenizerSpec> vocab;
                   if (!a->vocab.empty()) vocab = vocab_from_file(a->vocab);
                   for (const auto& p : make_synthetic_family(a->family, a->out_dir, a->seed, t,
                                                              vocab ? &*vocab : nullptr))
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
