// `accelbench kvpred fit|identity` (KV Prediction's predictor files) and `models make-aux`
// (layer-pruned auxiliaries). The work is in methods/kvpred_fit.h and methods/kvpred_aux.h; this
// file parses options, reads the calibration text and prints the per-layer fit errors.
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "harness/cli.h"
#include "harness/model_session.h"
#include "kernels/threading.h"
#include "methods/kvpred_aux.h"
#include "methods/kvpred_fit.h"
#include "methods/kvpred_predictor.h"
#include "models/model_config.h"

namespace accel {

namespace {

// "kvp-c", or a comma-separated list of aux layers, one per target layer.
std::vector<int> parse_layer_map(const std::string& spec, int n_base, int n_aux) {
  if (spec == "kvp-c") return kvpred::canonical_layer_map(n_base, n_aux);
  std::vector<int> map;
  std::stringstream ss(spec);
  std::string item;
  while (std::getline(ss, item, ',')) {
    size_t used = 0;
    int v = -1;
    try {
      v = std::stoi(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != item.size() || v < 0 || v >= n_aux)
      throw std::invalid_argument("--layer-map: '" + item + "' is not an aux layer in [0, " +
                                  std::to_string(n_aux) + ")");
    map.push_back(v);
  }
  if (int(map.size()) != n_base)
    throw std::invalid_argument("--layer-map: " + std::to_string(map.size()) + " entries for a " +
                                std::to_string(n_base) + "-layer target");
  return map;
}

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read --text '" + path + "'");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

void register_kvpred_commands(CLI::App& app, CliCommands& out) {
  CLI::App* kv = app.add_subcommand("kvpred", "KV Prediction: fit or write predictor files");
  kv->require_subcommand(1);

  struct FitArgs {
    std::string target, aux, text, out, layer_map;
    double ridge = 1e-4, holdout = 0.1;
    size_t max_tokens = 4096, context = 0;
    int threads = 0;
    bool json = false;
  };
  auto a = std::make_shared<FitArgs>();
  CLI::App* fit = kv->add_subcommand(
      "fit",
      "Fit per-layer linear maps aux pre-RoPE KV -> target pre-RoPE KV by ridge least squares "
      "on calibration text; writes the predictor GGUF and prints held-out errors per layer");
  fit->add_option("--target", a->target, "Target (base) model GGUF")->required();
  fit->add_option("--aux", a->aux, "Auxiliary model GGUF (same vocabulary)")->required();
  fit->add_option("--text", a->text, "Calibration text file (tokenized by the target)")->required();
  fit->add_option("--out", a->out, "Predictor GGUF to write")->required();
  fit->add_option("--ridge", a->ridge,
                  "Ridge, relative to the mean feature variance (default 1e-4; 0 = min-norm "
                  "least squares)")
      ->check(CLI::Range(0.0, 1e6));
  fit->add_option("--max-tokens", a->max_tokens, "Calibration tokens used (default 4096)")
      ->check(CLI::Range(size_t(2), size_t(1) << 24));
  fit->add_option("--holdout", a->holdout,
                  "Fraction of the tokens (the tail) held out for the reported error (default "
                  "0.1)")
      ->check(CLI::Range(0.0, 0.9));
  fit->add_option("--context", a->context,
                  "Tokens per window; positions restart every window (default min(2048, n_ctx))");
  fit->add_option("--layer-map", a->layer_map,
                  "Aux layer per target layer, comma-separated, or kvp-c (default: KVP-LP for an "
                  "aux from `models make-aux` of this target, else KVP-C)");
  fit->add_option("--threads", a->threads, "Threads (default: all cores)");
  fit->add_flag("--json", a->json, "Print one JSON object");
  out.push_back(
      {fit, [a] {
         if (a->threads > 0) set_num_threads(a->threads);
         const ModelSession t = ModelSession::open(a->target);
         const std::unique_ptr<Model> aux = Model::load(a->aux);
         std::vector<int32_t> tokens =
             t.require_tokenizer("kvpred fit").encode(read_text(a->text), true, false);
         if (tokens.size() > a->max_tokens) tokens.resize(a->max_tokens);
         const ModelConfig &tc = t.model->config(), &ac = aux->config();
         kvpred::FitOptions opt;
         opt.ridge = a->ridge;
         opt.holdout = a->holdout;
         opt.context =
             a->context ? a->context : std::min<size_t>(2048, size_t(std::min(tc.n_ctx, ac.n_ctx)));
         if (!a->layer_map.empty())
           opt.layer_map = parse_layer_map(a->layer_map, tc.n_layer, ac.n_layer);
         kvpred::FitReport rep;
         kvpred::Predictor p = kvpred::fit_predictor(*t.model, *aux, tokens, opt, &rep);
         p.fit["target"] = a->target;
         p.fit["aux"] = a->aux;
         p.fit["text"] = a->text;
         kvpred::write_predictor(p, a->out);
         if (a->json) {
           nlohmann::json layers = nlohmann::json::array();
           for (size_t i = 0; i < rep.layers.size(); ++i) {
             const auto& e = rep.layers[i];
             layers.push_back({{"layer", i},
                               {"aux_layer", e.aux_layer},
                               {"train_rel_err_k", e.train_k},
                               {"train_rel_err_v", e.train_v},
                               {"heldout_rel_err_k", e.heldout_k},
                               {"heldout_rel_err_v", e.heldout_v}});
           }
           const nlohmann::json j = {{"out", a->out},
                                     {"tokens", tokens.size()},
                                     {"train_rows", rep.train_rows},
                                     {"heldout_rows", rep.heldout_rows},
                                     {"ridge", a->ridge},
                                     {"layer_map_rule", rep.map_rule},
                                     {"layer_map", p.layer_map},
                                     {"layers", layers}};
           std::printf("%s\n", j.dump(2).c_str());
         } else {
           std::printf("%s: %zu tokens, %zu training rows, %zu held out, ridge %g, map %s\n",
                       a->out.c_str(), tokens.size(), rep.train_rows, rep.heldout_rows, a->ridge,
                       rep.map_rule.c_str());
           std::printf("%5s %4s %10s %10s %12s %12s\n", "layer", "aux", "train K", "train V",
                       "held-out K", "held-out V");
           for (size_t i = 0; i < rep.layers.size(); ++i) {
             const auto& e = rep.layers[i];
             std::printf("%5zu %4d %10.4g %10.4g %12.4g %12.4g\n", i, e.aux_layer, e.train_k,
                         e.train_v, e.heldout_k, e.heldout_v);
           }
           std::printf("(relative errors |pred - true| / |true| of pre-RoPE K and V)\n");
         }
         return 0;
       }});

  struct IdArgs {
    std::string target, aux, out, layer_map;
  };
  auto b = std::make_shared<IdArgs>();
  CLI::App* id = kv->add_subcommand(
      "identity",
      "Write an identity predictor (W = I, b = 0; the plumbing check with aux = target, or the "
      "copy-the-kept-layer predictor for a layer-pruned aux of equal KV width)");
  id->add_option("--target", b->target, "Target (base) model GGUF")->required();
  id->add_option("--aux", b->aux, "Auxiliary model GGUF (default: the target)");
  id->add_option("--out", b->out, "Predictor GGUF to write")->required();
  id->add_option("--layer-map", b->layer_map,
                 "Aux layer per target layer, comma-separated, or kvp-c (default as for fit)");
  out.push_back({id, [b] {
                   const GgufFile tf = GgufFile::open(b->target);
                   const ModelConfig tc = ModelConfig::from_gguf(tf);
                   const std::string aux_path = b->aux.empty() ? b->target : b->aux;
                   const GgufFile af = GgufFile::open(aux_path);
                   const ModelConfig ac = ModelConfig::from_gguf(af);
                   if (ac.kv_dim() != tc.kv_dim())
                     throw std::invalid_argument(
                         "kvpred identity: aux KV width " + std::to_string(ac.kv_dim()) +
                         " differs from the target's " + std::to_string(tc.kv_dim()));
                   std::string rule = "given";
                   const std::vector<int> map =
                       b->layer_map.empty()
                           ? kvpred::default_layer_map(tc.n_layer, af, ac.n_layer, &rule)
                           : parse_layer_map(b->layer_map, tc.n_layer, ac.n_layer);
                   kvpred::Predictor p = kvpred::identity_predictor(map, ac.n_layer, tc.kv_dim());
                   p.fit = {{"kind", "identity"}, {"layer_map_rule", rule}};
                   kvpred::write_predictor(p, b->out);
                   std::printf("%s: identity predictor, %d target layers from %d aux layers (%s)\n",
                               b->out.c_str(), tc.n_layer, ac.n_layer, rule.c_str());
                   return 0;
                 }});
}

void add_make_aux_command(CLI::App& models, CliCommands& out) {
  struct Args {
    std::string from, layers, out;
  };
  auto a = std::make_shared<Args>();
  CLI::App* sub = models.add_subcommand(
      "make-aux",
      "Write a layer-pruned auxiliary for KV Prediction (KVP-LP): the listed blocks of a model "
      "plus its embeddings, final norm and output head");
  sub->add_option("--from", a->from, "Source (target) model GGUF")->required();
  sub->add_option("--layers", a->layers,
                  "Blocks to keep: ascending list (0,4,8) or 0.25l, 0.50l, 0.75l (corenet's "
                  "selections)")
      ->required();
  sub->add_option("--out", a->out, "Auxiliary GGUF to write")->required();
  out.push_back({sub, [a] {
                   const ModelConfig c = ModelConfig::from_gguf(GgufFile::open(a->from));
                   const std::vector<int> layers = kvpred::parse_layer_list(a->layers, c.n_layer);
                   kvpred::make_layer_pruned_aux(a->from, layers, a->out);
                   std::string list;
                   for (int l : layers) {
                     if (!list.empty()) list += ',';
                     list += std::to_string(l);
                   }
                   std::printf("%s: %zu of %d blocks (%s)\n", a->out.c_str(), layers.size(),
                               c.n_layer, list.c_str());
                   return 0;
                 }});
}

}  // namespace accel
