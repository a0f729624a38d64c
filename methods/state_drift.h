// State drift of a sparse prefill on a hybrid model: how far each recurrent layer's state after
// prefilling only the kept tokens lies from its state after the full prompt (the SpecPrefill
// study's unquantified "drift"). Owns the reference states and the stat's JSON; runs no method and
// times nothing (the caller keeps it out of its clock).
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <span>
#include <vector>

#include "models/model.h"

namespace accel {

// Every recurrent layer's state after a full prefill of `prompt` at positions 0..n-1 (in chunks
// of `chunk`, with a cache of `kv_dtype`). Throws std::invalid_argument naming the model file when
// it has no recurrent layer.
struct ReferenceStates {
  std::vector<int> layers;             // the recurrent layers, ascending
  std::vector<RecurrentState> states;  // one per entry of `layers`
};
ReferenceStates full_prefill_states(const Model& m, std::span<const int32_t> prompt,
                                    KVDType kv_dtype, size_t chunk);

// {"layers": [...], "scan": [...], "conv": [...], "scan_mean": x, "scan_max": x}: per recurrent
// layer, the relative L2 distance (recurrent_state.h) of `cache`'s state from the reference's,
// for the scan state and the conv window; the mean and max over layers of the scan part.
nlohmann::json state_drift_json(const KVCache& cache, const ReferenceStates& ref);

}  // namespace accel
