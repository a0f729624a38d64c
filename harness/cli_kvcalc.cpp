// `accelbench kvcalc`: the exact KV cache size of a model (a GGUF file's header, a published
// configuration, or a synthetic family member) for each cache storage type at a context length,
// and the longest context a memory budget holds. Nothing is loaded or allocated.
#include <cinttypes>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "harness/cli.h"
#include "models/gguf.h"
#include "models/kv_memory.h"
#include "models/published_configs.h"
#include "reports/table.h"

namespace accel {

namespace {

struct KvcalcArgs {
  std::string model, config, budget;
  int64_t context = 0;
  std::vector<std::string> kv_dtypes;
  bool json = false;
};

std::string fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

std::string describe_groups(const AttentionLayout& l) {
  std::vector<std::string> parts;
  for (const auto& g : l.groups)
    parts.push_back(std::to_string(g.n_layer) + " " + g.kind +
                    (g.window ? " (window " + std::to_string(g.window) + ")" : "") + " x " +
                    std::to_string(g.n_kv_heads) + " KV heads x head_dim " +
                    std::to_string(g.head_dim));
  for (const auto& g : l.recurrent)
    parts.push_back(std::to_string(g.n_layer) + " " + g.kind + " (state " +
                    std::to_string(g.state_bytes()) + " bytes each)");
  if (l.n_stateless > 0) parts.push_back(std::to_string(l.n_stateless) + " FFN-only (no cache)");
  return join_list(parts, "; ");
}

nlohmann::json layout_json(const AttentionLayout& l) {
  nlohmann::json groups = nlohmann::json::array();
  for (const auto& g : l.groups)
    groups.push_back({{"kind", g.kind},
                      {"n_layer", g.n_layer},
                      {"n_kv_heads", g.n_kv_heads},
                      {"head_dim", g.head_dim},
                      {"window", g.window}});
  nlohmann::json recurrent = nlohmann::json::array();
  for (const auto& g : l.recurrent)
    recurrent.push_back({{"kind", g.kind},
                         {"n_layer", g.n_layer},
                         {"conv_channels", g.conv_channels},
                         {"d_conv", g.d_conv},
                         {"scan_elements", g.scan_elements},
                         {"state_bytes_per_layer", g.state_bytes()}});
  return {{"name", l.name},
          {"source", l.source},
          {"n_layer", l.n_layer()},
          {"n_head", l.n_head},
          {"n_ctx", l.n_ctx},
          {"attn_scale", l.attn_scale},
          {"groups", groups},
          {"recurrent", recurrent},
          {"n_stateless", l.n_stateless},
          {"recurrent_state_bytes", recurrent_state_bytes(l)}};
}

// One storage type's figures, or why the type cannot hold this shape.
struct Row {
  std::string kv_dtype;
  std::string unusable;  // kv_row_bytes' refusal; empty when usable
  std::vector<uint64_t> group_row_bytes;
  uint64_t per_token = 0, cache = 0;
  bool has_budget = false, unbounded = false;
  uint64_t max_context = 0;
};

Row compute(const AttentionLayout& l, KVDType t, const std::string& name, uint64_t context,
            std::optional<uint64_t> budget) {
  Row r;
  r.kv_dtype = name;
  for (const auto& g : l.groups) r.group_row_bytes.push_back(kv_group_row_bytes(g, t));
  r.per_token = kv_bytes_per_token(l, t);
  r.cache = kv_cache_bytes(l, t, context);
  if (budget) {
    r.has_budget = true;
    const auto m = kv_max_context(l, t, *budget);
    r.unbounded = !m;
    r.max_context = m.value_or(0);
  }
  return r;
}

AttentionLayout resolve_layout(const KvcalcArgs& a) {
  if (!a.config.empty()) return find_attention_layout(a.config);
  const GgufFile f = GgufFile::open(a.model);
  return attention_layout(ModelConfig::from_gguf(f), a.model, "GGUF header of " + a.model);
}

int run_kvcalc(const KvcalcArgs& a) {
  if (a.context < 1 || a.context > (int64_t(1) << 40))
    throw std::invalid_argument("--context must be a number of tokens in [1, 2^40], got " +
                                std::to_string(a.context));
  std::optional<uint64_t> budget;
  if (!a.budget.empty()) {
    budget = parse_byte_size(a.budget);
    if (!budget)
      throw std::invalid_argument("--budget '" + a.budget +
                                  "' is not a memory size (bytes, or a number with B, kB, MB, GB, "
                                  "TB, KiB, MiB, GiB or TiB, e.g. 64GiB, 12.5GB, 4096)");
  }
  const bool explicit_types = !a.kv_dtypes.empty();
  const std::vector<std::string> names = explicit_types ? a.kv_dtypes : kv_dtype_names();
  std::vector<KVDType> types;
  for (const auto& n : names) {
    const auto t = kv_dtype_from_name(n);
    if (!t)
      throw std::invalid_argument("--kv-dtype '" + n + "' is not one of " +
                                  join_list(kv_dtype_names(), ", "));
    types.push_back(*t);
  }
  const AttentionLayout l = resolve_layout(a);
  const uint64_t context = uint64_t(a.context);

  std::vector<Row> rows;
  for (size_t i = 0; i < types.size(); ++i) {
    try {
      rows.push_back(compute(l, types[i], names[i], context, budget));
    } catch (const std::invalid_argument& e) {
      // A type that cannot hold this row shape (e.g. head_dim not a multiple of its group).
      if (explicit_types) throw std::invalid_argument("--kv-dtype " + names[i] + ": " + e.what());
      Row r;
      r.kv_dtype = names[i];
      r.unusable = e.what();
      rows.push_back(r);
    }
  }

  if (a.json) {
    nlohmann::json out = {{"config", layout_json(l)},
                          {"context", context},
                          {"budget_bytes", budget ? nlohmann::json(*budget) : nlohmann::json()}};
    nlohmann::json jr = nlohmann::json::array();
    for (const auto& r : rows) {
      nlohmann::json j = {{"kv_dtype", r.kv_dtype}};
      if (!r.unusable.empty()) {
        j["unusable"] = r.unusable;
      } else {
        j.update({{"bytes_per_token_per_layer", r.group_row_bytes},
                  {"bytes_per_token", r.per_token},
                  {"cache_bytes", r.cache},
                  // What the engine's cache reports as kv_bytes (`generate --json`) after
                  // `context` tokens: the rows plus one int32 position per entry.
                  {"engine_kv_bytes", r.cache + 4 * uint64_t(context)},
                  {"cache_gb", double(r.cache) / 1e9},
                  {"cache_gib", double(r.cache) / double(1ull << 30)}});
        if (r.has_budget) {
          j["max_context"] = r.unbounded ? nlohmann::json() : nlohmann::json(r.max_context);
          j["max_context_unbounded"] = r.unbounded;
          j["max_context_exceeds_model"] = r.unbounded || r.max_context > uint64_t(l.n_ctx);
        }
      }
      jr.push_back(j);
    }
    out["kv_dtypes"] = jr;
    std::printf("%s\n", out.dump(2).c_str());
    return 0;
  }

  std::printf("%s: %d layers (%s), %d query heads, attention scale %g, model context %d\n",
              l.name.c_str(), l.n_layer(), describe_groups(l).c_str(), l.n_head, l.attn_scale,
              l.n_ctx);
  std::printf("source: %s\n", l.source.c_str());
  std::printf("context: %" PRIu64 " tokens", context);
  if (budget)
    std::printf("; budget: %" PRIu64 " bytes (%s GB, %s GiB)", *budget,
                fixed(double(*budget) / 1e9, 2).c_str(),
                fixed(double(*budget) / double(1ull << 30), 2).c_str());
  std::printf("\n\n");
  using reports::Align;
  reports::Table t;
  t.columns = {{"kv_dtype", "kv_dtype", Align::Left},
               {"bytes_per_token_per_layer", "bytes/token/layer", Align::Right},
               {"bytes_per_token", "bytes/token", Align::Right},
               {"cache_bytes", "cache bytes", Align::Right},
               {"cache_gb", "GB", Align::Right},
               {"cache_gib", "GiB", Align::Right}};
  if (budget) t.columns.push_back({"max_context", "longest context in budget", Align::Right});
  for (const auto& r : rows) {
    std::vector<reports::Cell> cells = {r.kv_dtype};
    if (!r.unusable.empty()) {
      for (size_t i = 1; i < t.columns.size(); ++i) cells.push_back("n/a");
      t.footnotes.push_back(r.unusable);  // names the type
      t.rows.push_back(cells);
      continue;
    }
    std::vector<std::string> per_layer;
    for (size_t g = 0; g < l.groups.size(); ++g)
      per_layer.push_back(std::to_string(r.group_row_bytes[g]) +
                          (l.groups.size() > 1 ? " (" + l.groups[g].kind + ")" : ""));
    cells.push_back(join_list(per_layer, " / "));
    cells.push_back(std::to_string(r.per_token));
    cells.push_back(std::to_string(r.cache));
    cells.push_back(fixed(double(r.cache) / 1e9, 2));
    cells.push_back(fixed(double(r.cache) / double(1ull << 30), 2));
    if (budget) {
      std::string m = r.unbounded ? "any" : std::to_string(r.max_context);
      if (!r.unbounded && r.max_context > uint64_t(l.n_ctx))
        m += " (> model's " + std::to_string(l.n_ctx) + ")";
      cells.push_back(m);
    }
    t.rows.push_back(cells);
  }
  t.footnotes.push_back(
      "K and V rows with their scales and zero points; the engine's cache also keeps one 4-byte "
      "position per token. GB = 10^9 bytes, GiB = 2^30 bytes.");
  if (!l.recurrent.empty())
    t.footnotes.push_back(
        "cache bytes include the recurrent layers' state, " +
        std::to_string(recurrent_state_bytes(l)) +
        " bytes (f32, fixed whatever the context and kv_dtype); bytes/token counts the attention "
        "layers only. A speculative step's checkpoint (PLD) holds one more copy of the state.");
  bool windowed = false;
  for (const auto& g : l.groups) windowed |= g.window > 0;
  if (windowed)
    t.footnotes.push_back(
        "bytes/token counts every layer; sliding-window layers stop growing at their window.");
  std::cout << reports::to_markdown(t);
  return 0;
}

}  // namespace

void register_kvcalc_command(CLI::App& app, CliCommands& out) {
  auto a = std::make_shared<KvcalcArgs>();
  CLI::App* sub = app.add_subcommand(
      "kvcalc",
      "KV cache size per storage type at a context length, and the longest context a memory "
      "budget holds (nothing is loaded)");
  auto* model = sub->add_option("--model", a->model, "GGUF file (its header only)");
  auto* config =
      sub->add_option("--config", a->config,
                      "A published configuration, or a synthetic family member as family/role (" +
                          join_list(attention_layout_names(), ", ") + ")");
  model->excludes(config);
  sub->add_option("--context", a->context, "Context length in tokens")->required();
  sub->add_option(
      "--kv-dtype", a->kv_dtypes,
      "Cache storage type (repeat; default every type: " + join_list(kv_dtype_names(), ", ") + ")");
  sub->add_option(
      "--budget", a->budget,
      "Memory budget: bytes, or e.g. 64GiB, 12.5GB (adds the longest context that fits)");
  sub->add_flag("--json", a->json, "Print one JSON object");
  std::string sources;
  for (const auto& l : published_layouts()) sources += "\n  " + l.name + ": " + l.source;
  sub->footer("Published configurations and where their numbers come from:" + sources);
  out.push_back({sub, [a] {
                   if (a->model.empty() == a->config.empty())
                     throw std::invalid_argument("kvcalc needs one of --model or --config");
                   return run_kvcalc(*a);
                 }});
}

}  // namespace accel
