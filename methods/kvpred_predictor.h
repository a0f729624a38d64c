// KV Prediction's predictor (specs/methods.md §2.2–2.3): the layer map (base layer i reads the
// auxiliary's layer j_i) and, per base layer, one linear map with bias for keys and one for values
// over the concatenated heads, in pre-RoPE space. Owns the layer-map rules, the predictor GGUF
// format (written by `accelbench kvpred fit|identity`, validated on every load: the file is
// untrusted input) and the packed form the method runs.
//
// Predictor GGUF (format version 1). Metadata:
//   general.architecture        string  "kvpred"
//   kvpred.format_version       uint32  1
//   kvpred.base.block_count     uint32  n_b, the base (target) model's layer count
//   kvpred.aux.block_count      uint32  n_a, the auxiliary's layer count
//   kvpred.base.kv_dim          uint32  d_b = n_head_kv * head_dim of the base
//   kvpred.aux.kv_dim           uint32  d_a of the auxiliary
//   kvpred.layer_map            int32[n_b]  j_i in [0, n_a)
//   kvpred.fit.*                optional provenance of a fit (ridge, rows, held-out errors);
//                               informative only, never read back by the method
// Tensors, for every base layer i in [0, n_b) (ggml dims order: [in, out]), nothing else:
//   blk.{i}.kvpred_k.weight  [d_a, d_b]  f32, f16 or bf16   (row r = output feature r)
//   blk.{i}.kvpred_k.bias    [d_b]       f32, f16 or bf16
//   blk.{i}.kvpred_v.weight  [d_a, d_b]
//   blk.{i}.kvpred_v.bias    [d_b]
// Prediction: K̂_i[t] = W_K[i] · K_aux[j_i][t] + b_K[i] (likewise V), K rows pre-RoPE and before
// the base's k-norm.
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <vector>

#include "kernels/gemm.h"

namespace accel {

struct ModelConfig;

namespace kvpred {

// KVP-C (a smaller canonical auxiliary, spec §2.2): the n_b base layers are spread over the n_a
// auxiliary layers in order, the first (n_b mod n_a) aux layers feeding ceil(n_b / n_a) base
// layers and the rest floor(n_b / n_a). For n_a <= n_b <= 2 n_a this is the spec's rule (the first
// n_b - n_a aux layers feed two base layers, the rest one); it also reproduces corenet's 3B <- 270M
// list (n_b = 36 > 2 n_a = 32), where the spec's wording does not apply. n_a >= n_b maps 1:1
// (j_i = i). Throws std::invalid_argument unless 1 <= n_b, n_a.
std::vector<int> canonical_layer_map(int n_base, int n_aux);

// KVP-LP base layers kept by corenet's layer-pruned configs for a kept fraction of 0.25
// (i % 4 == 0), 0.50 (i % 2 == 0) or 0.75 (i % 4 != 3). Throws for any other fraction.
std::vector<int> pruned_kept_layers(int n_base, double fraction);

// KVP-LP map: base layer i reads the aux copy of the last kept layer <= i (a pruned layer maps to
// the preceding kept one; a base layer before the first kept one reads aux layer 0). `kept` must
// be strictly ascending within [0, n_base); throws std::invalid_argument otherwise.
std::vector<int> pruned_layer_map(int n_base, std::span<const int> kept);

// One linear map y = W x + b: W [out][in] row-major, b [out].
struct LinearMap {
  int in = 0, out = 0;
  std::vector<float> w;
  std::vector<float> b;
};

// A predictor as stored in the file.
struct Predictor {
  int n_base = 0, n_aux = 0, base_kv_dim = 0, aux_kv_dim = 0;
  std::vector<int> layer_map;                     // [n_base]
  std::vector<LinearMap> k, v;                    // [n_base]
  nlohmann::json fit = nlohmann::json::object();  // written as kvpred.fit.<key> (numbers, strings,
                                                  // number arrays); empty when not fitted
};

// W = I, b = 0 with the given layer map (corenet's set_as_identity): needs d_a == d_b.
Predictor identity_predictor(std::vector<int> layer_map, int n_aux, int kv_dim);

// Writes the file (f32 tensors); throws GgufError / std::invalid_argument on an inconsistent
// predictor.
void write_predictor(const Predictor& p, const std::string& path);

// Reads and validates every key and tensor (presence, types, shapes, the layer map's range,
// finite values, no unexpected tensors). Errors are GgufError "[kvpred] <path>: tensor '<name>':
// ..." or "... key '<key>': ...".
Predictor load_predictor(const std::string& path);

// Checks the predictor against the models it is used with; throws std::invalid_argument naming the
// file and the mismatching quantity.
void check_compatible(const Predictor& p, const std::string& path, const ModelConfig& base,
                      const ModelConfig& aux);

// The predictor in the form the method runs. Consecutive base layers that read the same aux layer
// (the KVP-C and KVP-LP maps are non-decreasing) form one run, whose maps are stacked into one
// weight so one GEMM predicts all of them: its output rows are base layers base0..base0+count-1,
// d_b rows each, i.e. their columns side by side in a [n][n_base * d_b] buffer.
struct PackedPredictor {
  struct Run {
    int aux_layer = 0, base0 = 0, count = 0;
    PackedWeight wk, wv;        // rows count * d_b, cols d_a
    std::vector<float> bk, bv;  // [count * d_b]
  };
  std::vector<int> layer_map;
  int base_kv_dim = 0, aux_kv_dim = 0;
  std::vector<Run> runs;  // in base-layer order, covering every base layer once
  static PackedPredictor pack(const Predictor& p);
};

}  // namespace kvpred
}  // namespace accel
