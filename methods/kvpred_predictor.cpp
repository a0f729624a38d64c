// Layer maps, the predictor GGUF format and its validation (see kvpred_predictor.h).
#include "methods/kvpred_predictor.h"

#include <cmath>
#include <stdexcept>

#include "kernels/quant.h"
#include "models/gguf.h"
#include "models/model_config.h"

namespace accel::kvpred {

namespace {

constexpr uint32_t kFormatVersion = 1;
constexpr int kMaxLayers = 4096;    // far above any real model
constexpr int kMaxKvDim = 1 << 16;  // 65536 values per token per layer

std::string tname(int layer, const char* what) {
  return "blk." + std::to_string(layer) + "." + what;
}

[[noreturn]] void key_error(const std::string& path, const std::string& key,
                            const std::string& what) {
  throw GgufError("[kvpred] " + path + ": key '" + key + "': " + what);
}
[[noreturn]] void tensor_error(const std::string& path, const std::string& name,
                               const std::string& what) {
  throw GgufError("[kvpred] " + path + ": tensor '" + name + "': " + what);
}

std::string dims_str(const std::vector<uint64_t>& d) {
  std::string s = "[";
  for (size_t i = 0; i < d.size(); ++i) s += (i ? ", " : "") + std::to_string(d[i]);
  return s + "]";
}

// A bounded integer key (any integer GGUF type).
int bounded_key(const GgufFile& f, const std::string& key, int lo, int hi) {
  const GgufValue* v = f.find(key);
  if (!v) key_error(f.path(), key, "missing");
  int64_t x = 0;
  switch (v->type) {
    case GgufType::UINT8:
    case GgufType::UINT16:
    case GgufType::UINT32:
    case GgufType::UINT64:
      x = v->u > uint64_t(hi) ? int64_t(hi) + 1 : int64_t(v->u);
      break;
    case GgufType::INT8:
    case GgufType::INT16:
    case GgufType::INT32:
    case GgufType::INT64:
      x = v->i;
      break;
    default:
      key_error(f.path(), key,
                std::string("has type ") + gguf_type_name(v->type) + ", expected an integer");
  }
  if (x < lo || x > hi)
    key_error(f.path(), key,
              "value " + std::to_string(x) + " outside [" + std::to_string(lo) + ", " +
                  std::to_string(hi) + "]");
  return int(x);
}

// Reads one tensor of exactly `dims` as f32, refusing other types and non-finite values.
std::vector<float> read_tensor(const GgufFile& f, const std::string& name,
                               const std::vector<uint64_t>& dims) {
  const GgufTensorInfo* t = f.find_tensor(name);
  if (!t) tensor_error(f.path(), name, "missing");
  if (t->dims != dims)
    tensor_error(f.path(), name, "has shape " + dims_str(t->dims) + ", expected " + dims_str(dims));
  if (t->type != DType::F32 && t->type != DType::F16 && t->type != DType::BF16)
    tensor_error(f.path(), name,
                 "has type " + std::string(dtype_name(t->type)) + ", expected f32, f16 or bf16");
  const size_t cols = size_t(dims[0]), rows = dims.size() > 1 ? size_t(dims[1]) : 1;
  std::vector<float> out(rows * cols);
  const size_t rb = dtype_row_bytes(t->type, cols);
  for (size_t r = 0; r < rows; ++r)
    dequantize_row(t->type, f.tensor_data(*t) + r * rb, out.data() + r * cols, cols);
  for (size_t i = 0; i < out.size(); ++i)
    if (!std::isfinite(out[i]))
      tensor_error(f.path(), name, "element " + std::to_string(i) + " is not finite");
  return out;
}

void check_map(const std::vector<int>& map, int n_base, int n_aux) {
  if (int(map.size()) != n_base)
    throw std::invalid_argument("kvpred: layer map has " + std::to_string(map.size()) +
                                " entries for " + std::to_string(n_base) + " base layers");
  for (size_t i = 0; i < map.size(); ++i)
    if (map[i] < 0 || map[i] >= n_aux)
      throw std::invalid_argument("kvpred: layer map entry " + std::to_string(i) + " = " +
                                  std::to_string(map[i]) + " outside [0, " + std::to_string(n_aux) +
                                  ")");
}

}  // namespace

std::vector<int> canonical_layer_map(int n_base, int n_aux) {
  if (n_base < 1 || n_aux < 1)
    throw std::invalid_argument("kvpred: layer counts must be positive (base " +
                                std::to_string(n_base) + ", aux " + std::to_string(n_aux) + ")");
  std::vector<int> map;
  map.reserve(size_t(n_base));
  if (n_aux >= n_base) {
    for (int i = 0; i < n_base; ++i) map.push_back(i);
    return map;
  }
  const int q = n_base / n_aux, extra = n_base % n_aux;
  for (int j = 0; j < n_aux; ++j)
    for (int c = 0; c < q + (j < extra ? 1 : 0); ++c) map.push_back(j);
  return map;
}

std::vector<int> pruned_kept_layers(int n_base, double fraction) {
  if (n_base < 1) throw std::invalid_argument("kvpred: base layer count must be positive");
  std::vector<int> kept;
  for (int i = 0; i < n_base; ++i) {
    bool keep;
    if (fraction == 0.25)
      keep = i % 4 == 0;
    else if (fraction == 0.5)
      keep = i % 2 == 0;
    else if (fraction == 0.75)
      keep = i % 4 != 3;
    else
      throw std::invalid_argument("kvpred: layer-pruned fraction " + std::to_string(fraction) +
                                  " is not one of corenet's 0.25, 0.50, 0.75");
    if (keep) kept.push_back(i);
  }
  return kept;
}

std::vector<int> pruned_layer_map(int n_base, std::span<const int> kept) {
  if (n_base < 1 || kept.empty())
    throw std::invalid_argument("kvpred: a layer-pruned map needs base layers and kept layers");
  for (size_t k = 0; k < kept.size(); ++k)
    if (kept[k] < 0 || kept[k] >= n_base || (k > 0 && kept[k] <= kept[k - 1]))
      throw std::invalid_argument("kvpred: kept layers must be strictly ascending in [0, " +
                                  std::to_string(n_base) + ")");
  std::vector<int> map(static_cast<size_t>(n_base));
  int j = -1;
  size_t next = 0;
  for (int i = 0; i < n_base; ++i) {
    while (next < kept.size() && kept[next] <= i) j = int(next++);
    map[size_t(i)] = j < 0 ? 0 : j;
  }
  return map;
}

Predictor identity_predictor(std::vector<int> layer_map, int n_aux, int kv_dim) {
  Predictor p;
  p.n_base = int(layer_map.size());
  p.n_aux = n_aux;
  p.base_kv_dim = p.aux_kv_dim = kv_dim;
  check_map(layer_map, p.n_base, n_aux);
  p.layer_map = std::move(layer_map);
  LinearMap id{kv_dim, kv_dim, std::vector<float>(size_t(kv_dim) * size_t(kv_dim), 0.f),
               std::vector<float>(size_t(kv_dim), 0.f)};
  for (int r = 0; r < kv_dim; ++r) id.w[size_t(r) * size_t(kv_dim) + size_t(r)] = 1.f;
  p.k.assign(size_t(p.n_base), id);
  p.v.assign(size_t(p.n_base), id);
  return p;
}

void write_predictor(const Predictor& p, const std::string& path) {
  if (p.n_base < 1 || p.n_base > kMaxLayers || p.n_aux < 1 || p.n_aux > kMaxLayers ||
      p.base_kv_dim < 1 || p.base_kv_dim > kMaxKvDim || p.aux_kv_dim < 1 ||
      p.aux_kv_dim > kMaxKvDim)
    throw std::invalid_argument("kvpred: predictor dimensions out of range");
  check_map(p.layer_map, p.n_base, p.n_aux);
  if (int(p.k.size()) != p.n_base || int(p.v.size()) != p.n_base)
    throw std::invalid_argument("kvpred: predictor needs one K and one V map per base layer");
  GgufWriter w;
  w.set("general.architecture", GgufValue::of_string("kvpred"));
  w.set("kvpred.format_version", GgufValue::of_u32(kFormatVersion));
  w.set("kvpred.base.block_count", GgufValue::of_u32(uint32_t(p.n_base)));
  w.set("kvpred.aux.block_count", GgufValue::of_u32(uint32_t(p.n_aux)));
  w.set("kvpred.base.kv_dim", GgufValue::of_u32(uint32_t(p.base_kv_dim)));
  w.set("kvpred.aux.kv_dim", GgufValue::of_u32(uint32_t(p.aux_kv_dim)));
  w.set("kvpred.layer_map",
        GgufValue::of_i32_array(std::vector<int32_t>(p.layer_map.begin(), p.layer_map.end())));
  for (const auto& [key, val] : p.fit.items()) {
    const std::string k = "kvpred.fit." + key;
    if (val.is_string())
      w.set(k, GgufValue::of_string(val.get<std::string>()));
    else if (val.is_number_unsigned())
      w.set(k, GgufValue::of_u64(val.get<uint64_t>()));
    else if (val.is_number())
      w.set(k, GgufValue::of_f32(val.get<float>()));
    else if (val.is_array())
      w.set(k, GgufValue::of_f32_array(val.get<std::vector<float>>()));
    else
      throw std::invalid_argument("kvpred: fit metadata '" + key + "' is not a number or string");
  }
  const uint64_t da = uint64_t(p.aux_kv_dim), db = uint64_t(p.base_kv_dim);
  for (int i = 0; i < p.n_base; ++i) {
    for (const auto& [m, what] :
         {std::pair{&p.k[size_t(i)], "kvpred_k"}, {&p.v[size_t(i)], "kvpred_v"}}) {
      if (m->in != p.aux_kv_dim || m->out != p.base_kv_dim || m->w.size() != da * db ||
          m->b.size() != db)
        throw std::invalid_argument("kvpred: map " + tname(i, what) + " has the wrong shape");
      w.add_tensor(tname(i, what) + std::string(".weight"), {da, db}, DType::F32, m->w.data(),
                   m->w.size() * sizeof(float));
      w.add_tensor(tname(i, what) + std::string(".bias"), {db}, DType::F32, m->b.data(),
                   m->b.size() * sizeof(float));
    }
  }
  w.write(path);
}

Predictor load_predictor(const std::string& path) {
  const GgufFile f = GgufFile::open(path);
  Predictor p;
  const auto arch = f.get_string_opt("general.architecture");
  if (!arch || *arch != "kvpred")
    key_error(path, "general.architecture",
              "is '" + arch.value_or("") + "', expected 'kvpred' (not a predictor file)");
  bounded_key(f, "kvpred.format_version", int(kFormatVersion), int(kFormatVersion));
  p.n_base = bounded_key(f, "kvpred.base.block_count", 1, kMaxLayers);
  p.n_aux = bounded_key(f, "kvpred.aux.block_count", 1, kMaxLayers);
  p.base_kv_dim = bounded_key(f, "kvpred.base.kv_dim", 1, kMaxKvDim);
  p.aux_kv_dim = bounded_key(f, "kvpred.aux.kv_dim", 1, kMaxKvDim);
  const GgufValue* map = f.find("kvpred.layer_map");
  if (!map) key_error(path, "kvpred.layer_map", "missing");
  std::vector<int64_t> m;
  try {
    m = f.get_int_array("kvpred.layer_map");
  } catch (const GgufError&) {
    key_error(path, "kvpred.layer_map", "is not an integer array");
  }
  if (int64_t(m.size()) != p.n_base)
    key_error(path, "kvpred.layer_map",
              "has " + std::to_string(m.size()) +
                  " entries, expected kvpred.base.block_count = " + std::to_string(p.n_base));
  for (size_t i = 0; i < m.size(); ++i) {
    if (m[i] < 0 || m[i] >= p.n_aux)
      key_error(path, "kvpred.layer_map",
                "entry " + std::to_string(i) + " = " + std::to_string(m[i]) +
                    " outside [0, kvpred.aux.block_count = " + std::to_string(p.n_aux) + ")");
    p.layer_map.push_back(int(m[i]));
  }
  const uint64_t da = uint64_t(p.aux_kv_dim), db = uint64_t(p.base_kv_dim);
  size_t expected = 0;
  for (int i = 0; i < p.n_base; ++i) {
    for (auto [what, maps] : {std::pair{"kvpred_k", &p.k}, {"kvpred_v", &p.v}}) {
      maps->push_back({p.aux_kv_dim, p.base_kv_dim,
                       read_tensor(f, tname(i, what) + std::string(".weight"), {da, db}),
                       read_tensor(f, tname(i, what) + std::string(".bias"), {db})});
      expected += 2;
    }
  }
  if (f.tensors().size() != expected) {
    for (const auto& t : f.tensors()) {
      bool known = false;
      for (int i = 0; i < p.n_base && !known; ++i)
        for (const char* what : {"kvpred_k", "kvpred_v"})
          known = known || t.name == tname(i, what) + std::string(".weight") ||
                  t.name == tname(i, what) + std::string(".bias");
      if (!known)
        tensor_error(path, t.name,
                     "unexpected (the file declares " + std::to_string(p.n_base) + " base layers)");
    }
  }
  for (const auto& [key, val] : f.metadata()) {
    if (key.rfind("kvpred.fit.", 0) != 0) continue;
    const std::string k = key.substr(11);
    if (val.type == GgufType::STRING)
      p.fit[k] = val.s;
    else if (val.type == GgufType::FLOAT32 || val.type == GgufType::FLOAT64)
      p.fit[k] = val.f;
    else if (val.type == GgufType::UINT64 || val.type == GgufType::UINT32)
      p.fit[k] = val.u;
    else if (val.type == GgufType::ARRAY)
      p.fit[k] = val.arr_f;
  }
  return p;
}

void check_compatible(const Predictor& p, const std::string& path, const ModelConfig& base,
                      const ModelConfig& aux) {
  auto need = [&](const char* what, int file, int model, const char* role) {
    if (file != model)
      throw std::invalid_argument("kvpred: predictor " + path + " has " + what + " " +
                                  std::to_string(file) + " but the " + role + " model has " +
                                  std::to_string(model));
  };
  need("kvpred.base.block_count", p.n_base, base.n_layer, "target");
  need("kvpred.base.kv_dim", p.base_kv_dim, base.kv_dim(), "target");
  need("kvpred.aux.block_count", p.n_aux, aux.n_layer, "aux");
  need("kvpred.aux.kv_dim", p.aux_kv_dim, aux.kv_dim(), "aux");
}

PackedPredictor PackedPredictor::pack(const Predictor& p) {
  PackedPredictor pp;
  pp.layer_map = p.layer_map;
  pp.base_kv_dim = p.base_kv_dim;
  pp.aux_kv_dim = p.aux_kv_dim;
  const size_t da = size_t(p.aux_kv_dim), db = size_t(p.base_kv_dim);
  for (int i0 = 0; i0 < p.n_base;) {
    int c = 1;
    while (i0 + c < p.n_base && p.layer_map[size_t(i0 + c)] == p.layer_map[size_t(i0)]) ++c;
    Run r{p.layer_map[size_t(i0)], i0, c, {}, {}, {}, {}};
    std::vector<float> wk, wv;  // [c * d_b][d_a]
    for (int i = i0; i < i0 + c; ++i) {
      const LinearMap &k = p.k[size_t(i)], &v = p.v[size_t(i)];
      wk.insert(wk.end(), k.w.begin(), k.w.end());
      wv.insert(wv.end(), v.w.begin(), v.w.end());
      r.bk.insert(r.bk.end(), k.b.begin(), k.b.end());
      r.bv.insert(r.bv.end(), v.b.begin(), v.b.end());
    }
    r.wk = PackedWeight::pack(DType::F32, wk.data(), size_t(c) * db, da);
    r.wv = PackedWeight::pack(DType::F32, wv.data(), size_t(c) * db, da);
    pp.runs.push_back(std::move(r));
    i0 += c;
  }
  return pp;
}

}  // namespace accel::kvpred
