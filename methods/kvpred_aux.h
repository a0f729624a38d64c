// Layer-pruned auxiliaries for KV Prediction (KVP-LP, specs/methods.md §2.1): a copy of a model
// keeping only some of its transformer blocks, renumbered in order, with the token embeddings,
// final norm and output head unchanged (`accelbench models make-aux`).
#pragma once
#include <span>
#include <string>
#include <vector>

namespace accel::kvpred {

// Parses a --layers list for a model of n_layer blocks: "0,4,8" (ascending, distinct, in range)
// or one of corenet's names "0.25l", "0.50l", "0.75l" (pruned_kept_layers). Throws
// std::invalid_argument naming the problem.
std::vector<int> parse_layer_list(const std::string& spec, int n_layer);

// Writes `out`: every metadata key of `from` in order, {arch}.block_count set to layers.size(),
// general.name and accelbench.role (when present) suffixed "-lp", plus
// kvpred.aux.source_layers (int32[], the kept source blocks) and kvpred.aux.source_block_count
// (which `kvpred fit` reads to pick the KVP-LP layer map); tensors blk.{layers[j]}.* renamed
// blk.{j}.*, other blocks dropped, everything else copied byte for byte in the same type.
// Throws GgufError / std::invalid_argument naming the file.
void make_layer_pruned_aux(const std::string& from, std::span<const int> layers,
                           const std::string& out);

}  // namespace accel::kvpred
