// make_layer_pruned_aux and the --layers parser (see kvpred_aux.h).
#include "methods/kvpred_aux.h"

#include <charconv>
#include <stdexcept>

#include "methods/kvpred_predictor.h"
#include "models/gguf.h"
#include "models/model_config.h"

namespace accel::kvpred {

std::vector<int> parse_layer_list(const std::string& spec, int n_layer) {
  if (spec == "0.25l") return pruned_kept_layers(n_layer, 0.25);
  if (spec == "0.50l" || spec == "0.5l") return pruned_kept_layers(n_layer, 0.5);
  if (spec == "0.75l") return pruned_kept_layers(n_layer, 0.75);
  std::vector<int> out;
  size_t i = 0;
  while (i <= spec.size()) {
    const size_t comma = std::min(spec.find(',', i), spec.size());
    const std::string item = spec.substr(i, comma - i);
    int v = 0;
    const auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), v);
    if (item.empty() || ec != std::errc() || end != item.data() + item.size())
      throw std::invalid_argument("--layers: '" + item +
                                  "' is not a layer index (use e.g. 0,4,8 or 0.25l, 0.50l, 0.75l)");
    if (v < 0 || v >= n_layer)
      throw std::invalid_argument("--layers: layer " + item + " outside [0, " +
                                  std::to_string(n_layer) + ")");
    if (!out.empty() && v <= out.back())
      throw std::invalid_argument("--layers: layers must be strictly ascending");
    out.push_back(v);
    i = comma + 1;
  }
  return out;
}

void make_layer_pruned_aux(const std::string& from, std::span<const int> layers,
                           const std::string& out) {
  const GgufFile f = GgufFile::open(from);
  const ModelConfig c = ModelConfig::from_gguf(f);
  if (layers.empty()) throw std::invalid_argument("make-aux: no layers kept from " + from);
  for (size_t k = 0; k < layers.size(); ++k)
    if (layers[k] < 0 || layers[k] >= c.n_layer || (k > 0 && layers[k] <= layers[k - 1]))
      throw std::invalid_argument("make-aux: layers must be strictly ascending in [0, " +
                                  std::to_string(c.n_layer) + ") for " + from);
  std::vector<int> new_index(size_t(c.n_layer), -1);
  for (size_t k = 0; k < layers.size(); ++k) new_index[size_t(layers[k])] = int(k);

  GgufWriter w(f.alignment());
  const std::string block_key = c.arch_name + ".block_count";
  for (const auto& [key, val] : f.metadata()) {
    if (key == "general.alignment") continue;  // the writer's constructor carries it
    GgufValue v = val;
    if (key == block_key) {
      v.u = uint64_t(layers.size());
      v.i = int64_t(layers.size());
    } else if ((key == "general.name" || key == "accelbench.role") && v.type == GgufType::STRING) {
      v.s += "-lp";
    }
    w.set(key, std::move(v));
  }
  w.set("kvpred.aux.source_layers",
        GgufValue::of_i32_array(std::vector<int32_t>(layers.begin(), layers.end())));
  w.set("kvpred.aux.source_block_count", GgufValue::of_u32(uint32_t(c.n_layer)));

  for (const auto& t : f.tensors()) {
    std::string name = t.name;
    if (name.rfind("blk.", 0) == 0) {
      const size_t dot = name.find('.', 4);
      int l = -1;
      const auto [end, ec] =
          std::from_chars(name.data() + 4, name.data() + (dot == std::string::npos ? 4 : dot), l);
      if (dot == std::string::npos || ec != std::errc() || end != name.data() + dot || l < 0 ||
          l >= c.n_layer)
        throw GgufError("[make-aux] " + from + ": tensor '" + name +
                        "' names no block of the model's " + std::to_string(c.n_layer));
      if (new_index[size_t(l)] < 0) continue;
      name = "blk." + std::to_string(new_index[size_t(l)]) + name.substr(dot);
    }
    w.add_tensor(name, t.dims, t.type, f.tensor_data(t), size_t(t.n_bytes));
  }
  w.write(out);
}

}  // namespace accel::kvpred
